/** How often a branch was compacted, when last, what each compaction did, and how degraded the context is likely to be. */
import type { CompactionEntry, SessionEntry } from "@compaction/transcript";

/** The degradation risk and its advice live in the context manager, which warns with them too. */
export { type DegradationRisk, degradationRisk, riskAdvice } from "@compaction/context-manager";

export interface CompactionHistory {
  /** Compaction entries on the branch. */
  readonly count: number;
  /** The latest one, or null. */
  readonly last: CompactionEntry | null;
}

/** One compaction as `context history` shows it; null where the entry does not say (pi's own compactions). */
export interface CompactionRecord {
  readonly entryId: string;
  readonly timestamp: string;
  readonly trigger: string | null;
  readonly layer: string | null;
  /** Our CompactionEvent's strategy, or `pi` for a compaction pi itself wrote. */
  readonly strategy: string;
  readonly tokensBefore: number;
  readonly tokensAfter: number | null;
  readonly messagesCompacted: number | null;
  readonly focus: string | null;
  readonly warnings: readonly string[];
}

/** The compaction entries on a branch, root-most first. */
export function compactionEntries(branch: readonly SessionEntry[]): CompactionEntry[] {
  return branch.filter((entry): entry is CompactionEntry => entry.type === "compaction");
}

/** Counts the compaction entries on a branch (root-most first). */
export function compactionHistory(branch: readonly SessionEntry[]): CompactionHistory {
  const compactions = compactionEntries(branch);
  return { count: compactions.length, last: compactions.at(-1) ?? null };
}

/** What a compaction entry records: our CompactionEvent in `details`, else only pi's own fields. */
export function compactionRecord(entry: CompactionEntry): CompactionRecord {
  const details: Record<string, unknown> = (entry.details as Record<string, unknown> | undefined) ?? {};
  const ours = typeof details["strategy"] === "string";
  const text = (key: string): string | null => (typeof details[key] === "string" ? (details[key] as string) : null);
  const count = (key: string): number | null => (typeof details[key] === "number" ? (details[key] as number) : null);
  const warnings = Array.isArray(details["warnings"]) ? details["warnings"].filter((w): w is string => typeof w === "string") : [];
  return {
    entryId: entry.id,
    timestamp: entry.timestamp,
    trigger: text("trigger"),
    layer: text("layer"),
    strategy: ours ? (details["strategy"] as string) : "pi",
    tokensBefore: count("tokensBeforeCompaction") ?? entry.tokensBefore,
    tokensAfter: count("tokensAfterCompaction"),
    messagesCompacted: count("messagesCompacted"),
    focus: text("customInstruction"),
    warnings,
  };
}
