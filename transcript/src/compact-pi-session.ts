/**
 * One path for compacting a pi session, shared by every host that records compactions in a pi
 * session file (the CLI, the context manager on a session file, the pi extension): compact the
 * branch's messages as a suffix-only run (pi's entry records a summary and an unchanged run of
 * entries), plan pi's `compaction` entry from the result, and append it.
 */
import type { CompactInput, CompactionResult, Compactor } from "@compaction/core";
import { type AppendCompactionOptions, appendCompaction } from "./append.js";
import { type PiCompaction, type PiCompactionPlan, planPiCompaction } from "./pi-compaction-plan.js";
import type { CompactionEntry } from "./types.js";

/** A branch's messages with the id of the entry each came from (as `buildContext` and `loadBoundary` give them). */
export interface PiBranchMessages<T> {
  readonly messages: readonly T[];
  readonly entryIds: readonly string[];
}

export interface PiBranchCompaction<T> {
  readonly result: CompactionResult<T>;
  /** pi's entry for the result, or why there is none. */
  readonly plan: PiCompactionPlan;
}

/**
 * Compacts the branch's messages with `suffixOnly` set and plans pi's entry. Never throws for a
 * plugin's failure (see `Compactor.compact`); the plan then says why nothing can be written.
 */
export async function compactPiBranch<T>(
  compactor: Compactor<T>,
  branch: PiBranchMessages<T>,
  input: Omit<CompactInput<T>, "messages" | "suffixOnly"> = {},
): Promise<PiBranchCompaction<T>> {
  const result = await compactor.compact({ ...input, messages: branch.messages, suffixOnly: true });
  return { result, plan: planPiCompaction(result, branch.entryIds) };
}

/**
 * Appends the planned compaction entry to the session file, under its lock (see `appendCompaction`;
 * `onSetAside` hears of an incomplete last line moved to `<file>.incomplete` first).
 */
export function appendPiCompaction(path: string, compaction: PiCompaction, options: Pick<AppendCompactionOptions, "onSetAside"> = {}): Promise<CompactionEntry> {
  return appendCompaction(
    path,
    { status: "compacted", summary: compaction.summary, event: compaction.details, tokensBefore: compaction.tokensBefore },
    { firstKeptEntryId: compaction.firstKeptEntryId, tokensBefore: compaction.tokensBefore, ...(options.onSetAside === undefined ? {} : { onSetAside: options.onSetAside }) },
  );
}
