import type { CompactionRun } from "@compaction/core";

/**
 * The context size of the run's working set. Before any `beforeCompact` plugin changed the
 * working set it is `run.tokensBefore` (the provider's usage figure plus counts of what came
 * after it, where the transcript has usage). After pruning, the usage figure is stale: it still
 * counts the outputs as they were. So the size is our count of the working set plus
 * `run.unseenTokens`, the part of the usage figure no message shows (system prompt, tool
 * definitions); when the count exceeds the usage figure, that part is 0 and the count stands.
 */
export function workingSetTokens<T>(run: CompactionRun<T>): number {
  if (run.messages === run.input.messages) return run.tokensBefore;
  let workingTokens = 0;
  for (const tokens of run.view.tokens) workingTokens += tokens;
  return workingTokens + run.unseenTokens;
}

/** `workingSetTokens(run)` as a share of the context window. */
export function usageRatio<T>(run: CompactionRun<T>): number {
  return workingSetTokens(run) / run.contextWindow;
}
