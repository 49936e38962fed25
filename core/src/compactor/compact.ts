/**
 * One compaction, top to bottom: each stage a named function in a file of its own.
 *
 *   createRun          create-run.ts       the input checked, the run's numbers made once
 *   beforeCompact      call-hooks.ts       plugins prepare the working set, or cancel
 *   selectCut          call-hooks.ts       the first plugin that returns a cut wins
 *   fitCut             fit-cut.ts          the cut checked and fitted to the budget
 *   writeDraft         write-draft.ts      summarize: the plugins' summary or note of the cut
 *   assembleResult     assemble-result.ts  the compacted messages and the event
 *   afterCompact       call-hooks.ts       plugins index, report, warn
 *
 * A run with no cut ends in compactWithoutCut (without-cut.ts); one that is cancelled, fails or
 * would not be smaller returns its input untouched and says why. Never throws for plugin or
 * summarizer failures; throws COMPACTION_INPUT_INVALID for a bad input.
 */
import { CompactionError, describeError, ErrorCodes } from "../errors.js";
import { assembleResult, untouched } from "./assemble-result.js";
import { callAfterCompact, callBeforeCompact, callSelectCut } from "./call-hooks.js";
import { createRun } from "./create-run.js";
import type { CompactionEngine } from "./engine.js";
import { fitCut } from "./fit-cut.js";
import type { CompactionResult } from "./result.js";
import type { CompactInput } from "./run.js";
import type { RunState } from "./run-state.js";
import { compactWithoutCut } from "./without-cut.js";
import { emptyDraftError, writeDraft } from "./write-draft.js";

export async function compact<T>(engine: CompactionEngine<T>, input: CompactInput<T>): Promise<CompactionResult<T>> {
  const run = createRun(engine, input);
  try {
    await callBeforeCompact(engine, run);
    if (stopped(run)) return cancelled(engine, run);

    const { proposed, by } = await callSelectCut(engine, run);
    if (stopped(run)) return cancelled(engine, run);

    const fitted = fitCut(engine, run, proposed, by);
    if (fitted.kind === "refused") return untouched(engine, run, "failed", fitted.error.message, fitted.error);
    const result =
      fitted.kind === "none" ? compactWithoutCut(engine, run, fitted.reason) : await summarizeAndAssemble(engine, run, fitted.by);

    if (result.status === "compacted") await callAfterCompact(engine, run, result);
    return result;
  } catch (error) {
    const failure = asRunError(error, run);
    return untouched(engine, run, failure.code === ErrorCodes.CANCELLED ? "cancelled" : "failed", failure.message, failure);
  }
}

/** `summarize` for the checked cut, then the result, unless the run was stopped or the summary is empty. */
async function summarizeAndAssemble<T>(engine: CompactionEngine<T>, run: RunState<T>, by: string): Promise<CompactionResult<T>> {
  const draft = await writeDraft(engine, run, by);
  if (stopped(run)) return cancelled(engine, run);
  const empty = emptyDraftError(run, draft);
  if (empty) return untouched(engine, run, "failed", empty.message, empty);
  return assembleResult(engine, run, by, draft);
}

/** True when a plugin cancelled the run or its AbortSignal was aborted. */
function stopped<T>(run: RunState<T>): boolean {
  return run.cancelled !== null || run.signal?.aborted === true;
}

/** The untouched result of a stopped run, saying who stopped it. */
function cancelled<T>(engine: CompactionEngine<T>, run: RunState<T>): CompactionResult<T> {
  const error =
    run.cancelled === null
      ? new CompactionError(ErrorCodes.CANCELLED, "Cancelled: the AbortSignal was aborted.")
      : new CompactionError(ErrorCodes.CANCELLED, `Cancelled by plugin '${run.cancelled.plugin}': ${run.cancelled.reason}`, { plugin: run.cancelled.plugin });
  return untouched(engine, run, "cancelled", error.message, error);
}

/**
 * What a run that threw failed with: a CompactionError as it is; otherwise cancelled when the
 * signal was aborted, else PLUGIN_FAILED naming the plugin and hook that were running, with the
 * error as its cause.
 */
function asRunError<T>(error: unknown, run: RunState<T>): CompactionError {
  if (error instanceof CompactionError) return error;
  if (run.signal?.aborted) return new CompactionError(ErrorCodes.CANCELLED, "Cancelled: the AbortSignal was aborted.", { cause: error });
  const plugin = run.running;
  const hook = plugin === "core" ? null : run.runningHook;
  return new CompactionError(ErrorCodes.PLUGIN_FAILED, `Plugin '${plugin}' failed${hook === null ? "" : ` in ${hook}`}: ${describeError(error)}`, {
    plugin,
    ...(hook === null ? {} : { hook }),
    cause: error,
  });
}
