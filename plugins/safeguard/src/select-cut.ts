/** safeguard's `selectCut` tap: the cut within keepRecentTokens and what the budget leaves. */
import { type CompactionRun, type Cut, findTurnStartIndex, keptRoom, type MessageFacts } from "@compaction/core";
import { chooseCut } from "./choose-cut.js";
import type { SummarySizes } from "./write-summary.js";

/**
 * `chooseCut` within the tokens the budget leaves after the summary message (and, when the
 * turn is split, the split turn's summary) and the preserved messages. Warns when that is less
 * than `keepRecentTokens`.
 */
export function selectCut(
  run: CompactionRun<unknown>,
  options: { readonly keepRecentTokens: number; readonly maxTurnBoundaryLoss: number },
  sizes: SummarySizes,
): Cut | undefined {
  const { keepRecentTokens, maxTurnBoundaryLoss } = options;
  let summaryTokens = sizes.maxTokens + run.summaryOverheadTokens;
  // keepRecentTokens, but never more than the budget leaves after the summary and what the core
  // always keeps (system prompt, pinned messages and their tool partners).
  const allowance = () => Math.min(keepRecentTokens, keptRoom(run.view, { budget: run.budget, summaryTokens }));
  let keep = allowance();
  let cut = chooseCut(run.view, { keepRecentTokens: keep, maxTurnBoundaryLoss });
  if (cut !== undefined && keep < keepRecentTokens && splitsTurn(run.view.facts, cut.firstKeptIndex)) {
    summaryTokens += sizes.turnPrefixMaxTokens + sizes.separatorTokens;
    keep = allowance();
    cut = chooseCut(run.view, { keepRecentTokens: keep, maxTurnBoundaryLoss });
  }
  if (keep < keepRecentTokens) {
    run.warn(
      `keepRecentTokens (${keepRecentTokens}) was lowered to ${keep} for this run, to leave room for the summary (${summaryTokens} tokens) and the preserved messages in the budget of ${run.budget} tokens.`,
    );
  }
  return cut;
}

/** True when the kept part would start inside a turn (after its user message). */
function splitsTurn(facts: readonly MessageFacts[], firstKeptIndex: number): boolean {
  if (facts[firstKeptIndex]?.kind === "user") return false;
  return findTurnStartIndex(facts, firstKeptIndex - 1) >= 0;
}
