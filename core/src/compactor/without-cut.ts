/**
 * The end of a run with no cut to apply: the working set changed in place (pruned by a plugin, or
 * shrunk by the core when it is over the budget), or a noop saying why. A host that records only a
 * summary and an unchanged suffix (`suffixOnly`) cannot record an in-place change, so that run is
 * a noop too.
 */
import { CompactionError, ErrorCodes } from "../errors.js";
import { totalTokens } from "../cut/message-view.js";
import { shrinkToBudget } from "../shrink/shrink-to-budget.js";
import { assembleResult, untouched } from "./assemble-result.js";
import type { CompactionEngine } from "./engine.js";
import type { CompactionResult } from "./result.js";
import type { RunState } from "./run-state.js";

export function compactWithoutCut<T>(engine: CompactionEngine<T>, run: RunState<T>, reason: string): CompactionResult<T> {
  // Nothing to cut, yet over the budget: shrink the working set itself (a host that records
  // only summary + suffix shrinks at send time instead, see shrinkToBudget).
  if (!run.suffixOnly && totalTokens(run.view) > run.budget) {
    const shrink = shrinkToBudget(run.messages, engine.tokens, { budget: run.budget, recallTool: run.recallTool, headroomTo: run.targetCounted });
    if (!shrink.fits) {
      const error = new CompactionError(
        ErrorCodes.CONTEXT_OVERFLOW,
        `${reason} The context cannot be brought under the budget of ${run.budget} tokens: with every tool output and message shrunk to head and tail it is still ${shrink.tokens} tokens (the system prompt, pinned messages, the newest user message and what cannot be shortened).`,
        { hint: "Unpin messages, shorten the system prompt, or use a model with a larger context window." },
      );
      return untouched(engine, run, "failed", error.message, error);
    }
    run.warnings.push(
      `[core] ${reason} Shrunk ${shrink.shrunk.length} message(s) to head and tail to fit the budget of ${run.budget} tokens; the full text stays in the transcript.`,
    );
    run.replaceMessages("core", shrink.messages);
    run.shrink = shrink;
    run.layer = "shrink";
    return assembleResult(engine, run, null, { text: "", kind: "none" });
  }
  if (run.messages === run.input.messages) return untouched(engine, run, "noop", reason, null);
  if (!run.suffixOnly) return assembleResult(engine, run, null, { text: "", kind: "none" });
  const layer = run.layer === null ? "" : ` (layer ${run.layer})`;
  return untouched(
    engine,
    run,
    "noop",
    `${reason} Plugin '${run.modifiedBy ?? "core"}' changed the messages in place${layer}, but the host records a compaction only as a summary followed by an unchanged suffix of its messages (suffixOnly), so nothing was compacted.`,
    null,
  );
}
