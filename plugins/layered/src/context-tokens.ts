import type { CompactionRun } from "@compaction/core";

/**
 * The context size of the run's working set. Before any `beforeCompact` plugin changed the
 * working set it is `run.tokensBefore` (the provider's usage figure plus counts of what came
 * after it, where the transcript has usage). After pruning, the usage figure is stale: it still
 * counts the outputs as they were. So the size is `tokensBefore` minus what the working set lost
 * by our own count (input tokens minus working-set tokens), which keeps the part of the usage
 * figure no message shows (system prompt, tool definitions). Never below 0.
 */
export function workingSetTokens<T>(run: CompactionRun<T>): number {
  if (run.messages === run.input.messages) return run.tokensBefore;
  let inputTokens = 0;
  for (const message of run.input.messages) inputTokens += run.tokensOf(message);
  let workingTokens = 0;
  for (const tokens of run.view.tokens) workingTokens += tokens;
  return Math.max(0, run.tokensBefore - inputTokens + workingTokens);
}

/** `workingSetTokens(run)` as a share of the context window. */
export function usageRatio<T>(run: CompactionRun<T>): number {
  return workingSetTokens(run) / run.contextWindow;
}
