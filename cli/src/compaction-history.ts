/** How often a branch was compacted, when last, and how degraded the context is likely to be. */
import type { CompactionEntry, SessionEntry } from "@compaction/core";

export type DegradationRisk = "low" | "medium" | "high";

export interface CompactionHistory {
  /** Compaction entries on the branch. */
  readonly count: number;
  /** The latest one, or null. */
  readonly last: CompactionEntry | null;
}

/** Counts the compaction entries on a branch (root-most first). */
export function compactionHistory(branch: readonly SessionEntry[]): CompactionHistory {
  const compactions = branch.filter((entry): entry is CompactionEntry => entry.type === "compaction");
  return { count: compactions.length, last: compactions.at(-1) ?? null };
}

/** Low below 3 compactions, medium from 3, high from 5: each summary of a summary loses detail. */
export function degradationRisk(count: number): DegradationRisk {
  if (count >= 5) return "high";
  if (count >= 3) return "medium";
  return "low";
}

/** What to tell the user at each risk level. */
export function riskAdvice(risk: DegradationRisk): string | null {
  if (risk === "high") return "Export what matters and start a fresh session: summaries of summaries have lost detail.";
  if (risk === "medium") return "Several compactions so far; consider exporting and starting fresh soon.";
  return null;
}
