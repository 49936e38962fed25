/** How much layer 2 may leave: the budget, or the run's target when the context is over it (layer 3 keeps to the budget). */
import type { CompactionRun } from "@compaction/core";

/** The most the kept part and the summary of a run may hold, and why. */
export interface KeepLimit {
  /** Tokens of our count the kept messages (preserved ones included) and the summary must fit. */
  readonly tokens: number;
  /** True when the run's target, not the budget, sets `tokens`. */
  readonly withinTarget: boolean;
}

/**
 * The budget, or for a context over the run's target (`run.targetTokens`, 0.6 of the
 * auto-compaction threshold) the target when it is lower: keeping up to the budget at a small
 * window brings the next compaction, and its cache miss, a few turns later. A context already
 * within the target is not cut for it (as safeguard: two short turns under a large fixed part
 * would be summarised into more than they held).
 */
export function keepLimit<T>(run: CompactionRun<T>): KeepLimit {
  let total = 0;
  for (const tokens of run.view.tokens) total += tokens;
  const target = run.countedTokens(run.targetTokens);
  if (total > target && target < run.budget) return { tokens: target, withinTarget: true };
  return { tokens: run.budget, withinTarget: false };
}
