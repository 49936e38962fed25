/**
 * The `summarize` stage: the plugins' draft for the checked cut, the core's own summary of a cut
 * it chose itself (as pi does), and the newest request carried into the summary when the cut
 * compacted it (carry-request.ts).
 */
import { CompactionError, ErrorCodes } from "../errors.js";
import { summaryHasContent } from "../summarizer/has-content.js";
import { callSummarize } from "./call-hooks.js";
import { carryRequest } from "./carry-request.js";
import type { CompactionEngine } from "./engine.js";
import { viewFor } from "./hooks.js";
import { isEmptyDraft, type SummaryDraft } from "./run.js";
import type { RunState } from "./run-state.js";
import { summarizeCut } from "./summarize-cut.js";

/** The draft for `run.cut` (chosen by `by`). Rejects when a plugin or the summarizer does. */
export async function writeDraft<T>(engine: CompactionEngine<T>, run: RunState<T>, by: string): Promise<SummaryDraft> {
  let draft = await callSummarize(engine, run);
  // A cut the core chose itself (no plugin selected one) is summarised by the core when no
  // plugin took it, as pi does.
  if (by === "core" && isEmptyDraft(draft)) draft = { kind: "summary", text: await summarizeCut(viewFor(run, "core")) };
  if (summaryHasContent(draft.text)) draft = carryRequest(run.view, run.cut!, draft, run.previousSummary);
  return draft;
}

/** The error for a summary or note with nothing in it (never written), or null. */
export function emptyDraftError<T>(run: RunState<T>, draft: SummaryDraft): CompactionError | null {
  if (draft.kind === "none" || summaryHasContent(draft.text)) return null;
  const what = draft.text.trim() === "" ? "No plugin wrote a summary or note" : "The summary holds only headings (nothing in it)";
  return new CompactionError(
    ErrorCodes.SUMMARIZER_FAILED,
    `${what} for the ${run.cut?.compactedIndices.length ?? 0} compacted messages; a summary with nothing in it is never written, so nothing was changed.`,
    { hint: "Add a strategy plugin that summarises (e.g. safeguard), or one that sets the draft kind to 'none' on purpose." },
  );
}
