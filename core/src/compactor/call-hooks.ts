/**
 * The four hooks of a run, each called with the core's view of the run (every tap receives its own
 * plugin's view, hooks.ts). While a tap runs, `run.running` and `run.runningHook` name it, so an
 * error it throws is blamed on it; each call hands the run back to the core when its taps are done.
 */
import { describeError } from "../errors.js";
import type { Cut } from "../cut/cut.js";
import type { CompactionEngine } from "./engine.js";
import { viewFor } from "./hooks.js";
import type { CompactionResult } from "./result.js";
import type { SummaryDraft } from "./run.js";
import type { RunState } from "./run-state.js";

/** `beforeCompact`: plugins prepare the working set (layered prunes tool outputs) or cancel. */
export async function callBeforeCompact<T>(engine: CompactionEngine<T>, run: RunState<T>): Promise<void> {
  await engine.hooks.beforeCompact.promise(viewFor(run, "core"));
  backToCore(run);
}

/** `selectCut`: the first plugin that returns a cut wins; `by` names it ("core" when none did). */
export async function callSelectCut<T>(engine: CompactionEngine<T>, run: RunState<T>): Promise<{ readonly proposed: Cut | null; readonly by: string }> {
  const proposed = (await engine.hooks.selectCut.promise(viewFor(run, "core"))) ?? null;
  // A bail hook stops at the tap that returned a value: the last tap run is the one that chose.
  const by = proposed === null ? "core" : run.running;
  backToCore(run);
  return { proposed, by };
}

/** `summarize`: each plugin adds to or rewrites the draft, starting from an empty summary. */
export async function callSummarize<T>(engine: CompactionEngine<T>, run: RunState<T>): Promise<SummaryDraft> {
  const draft = await engine.hooks.summarize.promise({ text: "", kind: "summary" }, viewFor(run, "core"));
  backToCore(run);
  return draft;
}

/**
 * `afterCompact`, for a compacted result: a tap's failure becomes a warning on the result (the
 * compaction itself is complete).
 */
export async function callAfterCompact<T>(engine: CompactionEngine<T>, run: RunState<T>, result: CompactionResult<T>): Promise<void> {
  try {
    await engine.hooks.afterCompact.promise(result, viewFor(run, "core"));
  } catch (error) {
    run.warnings.push(`[${run.running}] afterCompact failed: ${describeError(error)}. The compaction itself is complete.`);
  }
  backToCore(run);
}

function backToCore<T>(run: RunState<T>): void {
  run.running = "core";
  run.runningHook = null;
}
