/**
 * The last stage before `afterCompact`: the compacted messages (the preserved ones, the summary or
 * note, the kept ones, shrunk copies where the core shrank), fitted to the budget once more when
 * the summary took more than its room (rule 6, fit-budget.ts), refused when it would not be
 * smaller (refuse-growth.ts), and the result with its event. `untouched` is every other end.
 */
import type { CompactionError } from "../errors.js";
import { createCompactionEvent } from "../event.js";
import { sumTokens, totalTokens } from "../cut/message-view.js";
import { recordedCalibration } from "../tokens/calibration.js";
import type { CompactionEngine } from "./engine.js";
import { fitCompacted } from "./fit-budget.js";
import { growthRefusal } from "./refuse-growth.js";
import type { CompactionResult } from "./result.js";
import type { SummaryDraft } from "./run.js";
import type { RunState } from "./run-state.js";

/** The result of `run` with `draft` (`selectedBy`: the plugin that chose the cut, null for a change in place). */
export function assembleResult<T>(engine: CompactionEngine<T>, run: RunState<T>, selectedBy: string | null, draft: SummaryDraft): CompactionResult<T> {
  run.finishing = true;
  const warned = run.warnings.length;
  const cut = run.cut;
  const messages: T[] = [];
  let summary: string | null = null;
  // Shrunk copies replace kept messages, unless the host records only summary + suffix: it
  // applies the same shrinking when it sends the request (shrinkToBudget is deterministic).
  const shrunk = cut !== null && run.shrink !== null && !run.suffixOnly ? shrunkByIndex(run) : null;
  const at = (i: number) => shrunk?.get(i) ?? (run.messages[i] as T);
  if (cut) {
    messages.push(...cut.preservedIndices.map(at));
    if (draft.kind !== "none") {
      summary = draft.text;
      messages.push(
        draft.kind === "note" ? engine.adapter.createNote(draft.text) : engine.adapter.createSummary(draft.text, { tokensBefore: run.tokensBefore }),
      );
    }
    for (let i = cut.firstKeptIndex; i < run.messages.length; i++) messages.push(at(i));
  } else {
    messages.push(...run.messages);
  }
  // Our count of the compacted messages, the measure the cut check and the budget use (usage
  // stored on kept messages describes the old context). A host that shows it beside tokensBefore
  // converts it with tokens.calibration (the CLI does).
  let counted = engine.tokens.total(messages);
  let shrunkMessages = run.shrink?.shrunk ?? [];
  if (counted > run.budget && cut !== null && !run.suffixOnly) {
    // The summary or note took more than the room the kept messages left (rule 6, fit-budget.ts):
    // the kept messages are shrunk again from their originals, so each marker says all that was cut.
    const summaryAt = draft.kind === "none" ? -1 : cut.preservedIndices.length;
    const originals = cut.preservedIndices.map((i) => run.messages[i] as T);
    if (summaryAt >= 0) originals.push(messages[summaryAt] as T);
    originals.push(...run.messages.slice(cut.firstKeptIndex));
    const fitted = fitCompacted({
      messages: originals,
      summaryAt,
      summaryKind: draft.kind === "note" ? "note" : "summary",
      cut,
      tokens: engine.tokens,
      budget: run.budget,
      over: counted - run.budget,
      recallTool: run.recallTool,
    });
    if (fitted !== null) {
      run.warnings.push(`[core] ${fitted.repair}`);
      messages.splice(0, messages.length, ...fitted.messages);
      shrunkMessages = fitted.shrunk;
      counted = fitted.tokens;
      run.cut = { ...cut, keptTokens: counted - (summaryAt < 0 ? 0 : engine.tokens.count(messages[summaryAt] as T)) };
    }
  }
  // The result and the event, which transcripts record and `context history` shows, keep Before
  // and After in one measure: the run's, anchored on the provider's figure (what the strategies
  // sized against; tokens.providerTokensAfter gives the same). Our counts are named as such.
  const providerTokensAfter = run.providerTokens(counted);
  const refusal = growthRefusal({
    tokensBefore: run.tokensBefore,
    tokensAfter: providerTokensAfter,
    countedBefore: engine.tokens.total(run.input.messages),
    countedWorking: totalTokens(run.view),
    countedAfter: counted,
    budget: run.budget,
    cut,
    draft,
    summaryTokens: summary === null ? 0 : run.providerTokens(engine.tokens.count(messages[cut?.preservedIndices.length ?? 0] as T)),
    compactedTokens: cut === null ? 0 : run.providerTokens(sumTokens(run.view, cut.compactedIndices)),
    by: selectedBy ?? run.modifiedBy ?? "core",
  });
  if (refusal !== null) {
    // A compaction never makes the context bigger (refuse-growth.ts); the warnings this
    // assembly added describe a result that is not returned.
    run.warnings.length = warned;
    return untouched(engine, run, "noop", refusal, null);
  }
  if (counted > run.budget && run.suffixOnly && run.shrink !== null) {
    run.warnings.push(
      `[core] The compacted context is ${counted} tokens, over the budget of ${run.budget}: the host records only a summary and the unchanged messages it keeps, so it must shrink them when it sends the request (shrinkToBudget, the result's \`shrunk\`), to ${cut?.keptTokens ?? run.shrink.tokens} tokens kept.`,
    );
  } else if (counted > run.budget) {
    run.warnings.push(`[core] The compacted context is ${counted} tokens, still over the budget of ${run.budget} tokens.`);
  }
  const firstKept = cut ? run.messages[cut.firstKeptIndex] : undefined;
  const event = createCompactionEvent({
    summary: summary ?? "",
    messagesCompacted: cut ? cut.compactedIndices.length : 0,
    tokensBeforeCompaction: run.tokensBefore,
    tokensAfterCompaction: providerTokensAfter,
    trigger: run.trigger,
    layer: cut?.layer ?? run.layer ?? null,
    customInstruction: run.focus ?? null,
    boundaryMessageId: firstKept === undefined ? null : (run.factsOf(firstKept).id ?? null),
    strategy: selectedBy ?? run.modifiedBy ?? "core",
    warnings: run.warnings,
    calibration: recordedCalibration(run.calibration),
  });
  return {
    status: "compacted",
    messages,
    summary,
    cut: run.cut,
    event,
    tokensBefore: run.tokensBefore,
    tokensAfter: providerTokensAfter,
    countedTokensBefore: engine.tokens.total(run.input.messages),
    countedTokensAfter: counted,
    warnings: run.warnings,
    shrunk: shrunkMessages,
    reason: null,
    error: null,
  };
}

/** The result of a run that changed nothing: the input messages, untouched, and why. */
export function untouched<T>(
  engine: CompactionEngine<T>,
  run: RunState<T>,
  status: "noop" | "cancelled" | "failed",
  reason: string,
  error: CompactionError | null,
): CompactionResult<T> {
  const tokens = run.tokensBefore;
  const counted = engine.tokens.total(run.input.messages);
  return {
    status,
    messages: run.input.messages,
    summary: null,
    cut: null,
    event: null,
    tokensBefore: tokens,
    tokensAfter: tokens,
    countedTokensBefore: counted,
    countedTokensAfter: counted,
    warnings: run.warnings,
    shrunk: [],
    reason,
    error,
  };
}

/** The shrunk copies of the run's shrinking, by index in the working set. */
function shrunkByIndex<T>(run: RunState<T>): Map<number, T> {
  const cut = run.cut;
  const shrink = run.shrink;
  const map = new Map<number, T>();
  if (cut === null || shrink === null) return map;
  // The shrink's messages are the preserved ones, then the kept ones (see fitCutToBudget).
  const indices = [...cut.preservedIndices];
  for (let i = cut.firstKeptIndex; i < run.messages.length; i++) indices.push(i);
  for (const s of shrink.shrunk) map.set(s.index, shrink.messages[indices.indexOf(s.index)] as T);
  return map;
}
