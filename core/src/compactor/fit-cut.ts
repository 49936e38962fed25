/**
 * The stage between `selectCut` and `summarize`: the cut a plugin chose (or the core's own, over
 * the budget) checked and fitted to the budget (fit-budget.ts), set on the run, or why the run
 * goes on without one.
 */
import { CompactionError, ErrorCodes } from "../errors.js";
import { checkCut } from "../cut/check-cut.js";
import type { Cut } from "../cut/cut.js";
import { totalTokens } from "../cut/message-view.js";
import type { CompactionEngine } from "./engine.js";
import { fitCutToBudget, keepNewestRequest, latestCutIndex } from "./fit-budget.js";
import type { RunState } from "./run-state.js";

/**
 * `cut`: `run.cut` (and `run.shrink`) are set, chosen by `by`. `none`: no cut to apply, for
 * `reason` (the run may still change the working set in place, without-cut.ts). `refused`: the
 * cut cannot be recorded; the run fails with `error`.
 */
export type FittedCut =
  | { readonly kind: "cut"; readonly by: string }
  | { readonly kind: "none"; readonly reason: string }
  | { readonly kind: "refused"; readonly error: CompactionError };

/** Checks and fits `proposed` (the cut `by` returned from selectCut, or null), setting `run.cut`. */
export function fitCut<T>(engine: CompactionEngine<T>, run: RunState<T>, proposed: Cut | null, by: string): FittedCut {
  // Over the budget, a run must compact even when no plugin chose where: the core cuts at the
  // newest user message (and shrinks what that keeps, below).
  const overBudget = totalTokens(run.view) > run.budget;
  const chosen = proposed ?? (overBudget ? { firstKeptIndex: latestCutIndex(run.view), layer: "fit" } : null);
  if (chosen === null) return { kind: "none", reason: noCutReason(run) };

  const newestRequest = { targetTokens: run.targetCounted, requestAhead: !run.suffixOnly };
  const kept = keepNewestRequest(run.view, chosen, by, newestRequest);
  if (kept.repair !== null) run.warnings.push(`[core] ${kept.repair}`);
  const checked = checkCut(run.view, kept.cut, { plugin: by, budget: Number.POSITIVE_INFINITY, requestAhead: newestRequest.requestAhead });
  for (const repair of checked.repairs) run.warnings.push(`[core] ${repair}`);
  const fitted = fitCutToBudget({
    view: run.view,
    messages: run.messages,
    tokens: engine.tokens,
    checked,
    budget: run.budget,
    summaryOverheadTokens: run.summaryOverheadTokens,
    summaryMaxTokens: run.summaryMaxTokens,
    recallTool: run.recallTool,
    newestRequest,
    headroomTo: run.targetCounted,
    minKeptTokens: run.minKeptTokens,
  });
  for (const repair of fitted.repairs) run.warnings.push(`[core] ${repair}`);
  run.cut = fitted.cut;
  run.shrink = fitted.shrink;
  if (run.cut.compactedIndices.length === 0) {
    run.cut = null;
    run.shrink = null;
    return { kind: "none", reason: `The cut chosen by '${by}' compacts no messages.` };
  }
  run.previousSummary = latestSummary(run);
  if (run.cut.compactedIndices.every((i) => run.view.facts[i]?.kind === "summary")) {
    run.cut = null;
    return { kind: "none", reason: "Nothing new to compact: the cut would only summarise the previous summary again." };
  }
  const unrecordable = keptMessagesChanged(run);
  if (unrecordable) return { kind: "refused", error: unrecordable };
  return { kind: "cut", by };
}

/** The noop reason when no plugin selected a cut, with what the plugins said about it. */
function noCutReason<T>(run: RunState<T>): string {
  const why = run.noCutReasons;
  return why.length === 0 ? "No plugin selected a cut." : `No plugin selected a cut (${why.join("; ")}).`;
}

/** Text of the latest summary among the compacted messages, to be updated rather than re-summarised. */
function latestSummary<T>(run: RunState<T>): string | undefined {
  const cut = run.cut;
  if (!cut) return undefined;
  const facts = run.view.facts;
  for (let k = cut.compactedIndices.length - 1; k >= 0; k--) {
    const f = facts[cut.compactedIndices[k] as number];
    if (f?.kind === "summary") return f.text;
  }
  return undefined;
}

/**
 * With `suffixOnly`, the host records the messages a cut keeps as they are in its history, by
 * their index in the input: a working set replaced in `beforeCompact` must keep the input's
 * length and leave every kept message as it was. The error to fail with, or null.
 */
function keptMessagesChanged<T>(run: RunState<T>): CompactionError | null {
  const cut = run.cut;
  const input = run.input.messages;
  const working = run.messages;
  if (!run.suffixOnly || cut === null || working === input) return null;
  let what: string;
  if (working.length !== input.length) {
    what = `changed the number of messages from ${input.length} to ${working.length}, so the cut's indices no longer point into the host's messages`;
  } else {
    let changed = 0;
    for (let i = cut.firstKeptIndex; i < working.length; i++) if (working[i] !== input[i]) changed += 1;
    if (changed === 0) return null;
    what = `changed ${changed} of the ${working.length - cut.firstKeptIndex} messages the cut keeps`;
  }
  const plugin = run.modifiedBy ?? "core";
  return new CompactionError(
    ErrorCodes.CUT_REFUSED,
    `Plugin '${plugin}' ${what} (in beforeCompact), but the host records a compaction only as a summary followed by an unchanged suffix of its messages (suffixOnly); nothing was changed.`,
    {
      plugin,
      hint: "With run.suffixOnly, change only messages before the cut; make in-place changes (such as pruning tool outputs) to what the host sends instead, in a shapeRequest tap (see \"Changing what is sent\" in docs/writing-plugins.md).",
    },
  );
}
