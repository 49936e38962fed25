/**
 * The first stage of a run: its input checked, and its numbers made once, in one place (the
 * window, the reserve, the budget at the run's ratio, the target, the summary's default length),
 * for every later stage and every plugin to read from the run.
 */
import { CompactionError, describeError, ErrorCodes } from "../errors.js";
import { describeValue } from "../messages/message-fields.js";
import { budgetRatioOf, checkAnchor, countedBudget, providerRatio } from "../tokens/message-tokens.js";
import type { CompactionEngine } from "./engine.js";
import { summaryAllowance } from "./fit-budget.js";
import type { CompactInput } from "./run.js";
import { RunState } from "./run-state.js";
import { compactedTargetTokens, usableWindow } from "./usable-window.js";

/** A run of `input`, or a COMPACTION_INPUT_INVALID error naming what is wrong with it. */
export function createRun<T>(engine: CompactionEngine<T>, input: CompactInput<T>): RunState<T> {
  if (!input || !Array.isArray(input.messages)) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `compact() needs { messages: [...] }; found ${describeValue(input?.messages)}.`);
  }
  const contextWindow = input.contextWindow ?? engine.contextWindow;
  if (contextWindow === undefined || !Number.isFinite(contextWindow) || contextWindow <= 0) {
    throw new CompactionError(
      ErrorCodes.INPUT_INVALID,
      `compact() needs a positive contextWindow; found ${String(contextWindow)}.`,
      { hint: "Pass contextWindow to compact() or to new Compactor(), or set it in .compactionrc." },
    );
  }
  // A host's own reserve may hold more than the reply (what it sends beside the messages: a
  // system prompt, tools), so it need only leave the messages some room; the user's setting is
  // checked against the window's half in reserveFor.
  const reserve = input.reserveTokens ?? engine.reserveFor(contextWindow);
  if (!Number.isFinite(reserve) || reserve < 0 || reserve >= contextWindow) {
    throw new CompactionError(
      ErrorCodes.INPUT_INVALID,
      `compact()'s reserveTokens must be at least 0 and below the context window (${contextWindow}); found ${String(reserve)}.`,
      { hint: "Leave reserveTokens out to use the compactor's reserve for this window." },
    );
  }
  try {
    checkAnchor(input.anchor, input.messages.length);
  } catch (error) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `compact() was given a bad anchor: ${describeError(error)}`, {
      hint: "Pass the anchor the context's newest compaction recorded (its tokensAfterCompaction, and the index of the last message it covers), or none.",
    });
  }
  const before = engine.tokens.contextTokens(input.messages, input.anchor);
  // The window less the reserve is in the provider's measure; every size the run compares with
  // the budget is our count. The budget is our count at the higher of two ratios: the calibrated
  // one (Claude counts about 1.25x o200k; see MessageTokenCounter.budgetRatio), which holds when
  // the newest usage figure is of a request pruned when sent, and the run's own (tokensBefore
  // over our count of the input, `CompactionRun.providerRatio`), by which the run reports its
  // After and its plugins size against the window. A context compacted to the budget then fits
  // the window less the reserve in both, and the After the run reports is within it.
  const runRatio = providerRatio(before.tokens, engine.tokens.total(input.messages));
  const budget = countedBudget(contextWindow - reserve, Math.max(budgetRatioOf(before.calibration), runRatio));
  return new RunState({
    input,
    facts: engine.facts,
    tokens: engine.tokens,
    summarizer: input.summarizer ?? engine.summarizer,
    // A summary of summaryMaxTokens (4,000 by default) would fill most of a small window and
    // leave the newest turns no room, though they hold most of what the agent uses next: the
    // summary a run asks for by default is at most a quarter of its budget (`summaryAllowance`,
    // the room the core already leaves it when it moves or shrinks a cut). A plugin's own
    // summaryMaxTokens option still stands as set.
    summaryMaxTokens: summaryAllowance(budget, engine.summaryMaxTokens),
    contextWindow,
    usableWindow: usableWindow(contextWindow, reserve),
    targetTokens: runTarget(compactedTargetTokens(contextWindow, reserve, engine.autoCompact.threshold, before.tokens), input.targetTokens),
    budget,
    tokensBefore: before.tokens,
    providerRatio: runRatio,
    calibration: before.calibration,
    summaryOverheadTokens: engine.summaryOverheadTokens(),
    recallTool: engine.recallTool(),
  });
}

/** The run's target: the host's lower one (a compaction prepared ahead of the threshold), never above its own. */
function runTarget(own: number, host: number | undefined): number {
  if (host === undefined) return own;
  if (!Number.isFinite(host) || host < 0) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `compact()'s targetTokens must be a number of tokens of at least 0; found ${String(host)}.`, {
      hint: "Leave targetTokens out to use the compactor's target for the window.",
    });
  }
  return Math.min(own, Math.floor(host));
}
