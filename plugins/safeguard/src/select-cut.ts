/** safeguard's `selectCut` tap: the cut within keepRecentTokens and what the budget leaves. */
import { type CompactionRun, type Cut, type MessageFacts, findTurnStartIndex } from "@compaction/core";
import { chooseCut, keepAllowance } from "./choose-cut.js";
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
  let summaryTokens = sizes.maxTokens + sizes.messageOverhead;
  let keep = keepAllowance(run.view, { keepRecentTokens, budget: run.budget, summaryTokens });
  let cut = chooseCut(run.view, { keepRecentTokens: keep, maxTurnBoundaryLoss });
  if (cut !== undefined && keep < keepRecentTokens && splitsTurn(run.view.facts, cut.firstKeptIndex)) {
    summaryTokens += sizes.turnPrefixMaxTokens + sizes.separatorTokens;
    keep = keepAllowance(run.view, { keepRecentTokens, budget: run.budget, summaryTokens });
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
