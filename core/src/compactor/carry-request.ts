/**
 * The newest user message is never lost (fit-budget.ts, rule 1). A host that records only
 * summary + suffix (`suffixOnly`: pi's compaction entry) cannot keep it ahead of the summary when
 * the newest turn is split, so the request is compacted with the turn's early part, as pi itself
 * does; the summary then carries its text verbatim, whatever the summarizer made of it.
 */
import type { CheckedCut } from "../cut/cut.js";
import type { MessageView } from "../cut/message-view.js";
import { lastUserIndex } from "../cut/turns.js";
import type { SummaryDraft } from "./run.js";

/** The heading of the request's text in a summary that carries it. */
export const CARRIED_REQUEST_HEADING = "**The request being worked on (the newest user message, verbatim):**";

/** What joins a summary and the request it carries. */
const CARRIED_REQUEST_SEPARATOR = `\n\n---\n\n${CARRIED_REQUEST_HEADING}\n\n`;

/**
 * `draft` with the request being worked on added under `CARRIED_REQUEST_HEADING`, when the draft (a
 * summary or a note) does not already hold its text; else `draft` itself. The request is the
 * newest user message when the cut compacts it, or, while the context holds no user message (the
 * turn split before goes on), the one the previous summary carries. A draft that drops the
 * compacted messages (`kind: "none"`) is left as it is.
 */
export function carryRequest(view: MessageView, cut: CheckedCut, draft: SummaryDraft, previousSummary: string | undefined): SummaryDraft {
  if (draft.kind === "none") return draft;
  const request = lastUserIndex(view.facts);
  let text = "";
  if (request >= 0 && cut.compactedIndices.includes(request)) text = view.facts[request]?.text.trim() ?? "";
  else if (request < 0) text = carriedRequest(previousSummary) ?? "";
  if (text === "" || draft.text.includes(text)) return draft;
  return { ...draft, text: `${draft.text.trimEnd()}${CARRIED_REQUEST_SEPARATOR}${text}` };
}

/** The request a summary carries (what follows its `CARRIED_REQUEST_HEADING`), or undefined. */
export function carriedRequest(summary: string | undefined): string | undefined {
  const at = summary?.lastIndexOf(CARRIED_REQUEST_SEPARATOR) ?? -1;
  if (summary === undefined || at < 0) return undefined;
  return summary.slice(at + CARRIED_REQUEST_SEPARATOR.length).trim();
}
