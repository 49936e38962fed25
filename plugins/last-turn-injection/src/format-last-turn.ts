/** Renders the last exchange as a Markdown section that fits a token cap. */
import { CompactionError, ErrorCodes, createEstimateCounter, isHighSurrogate, type TokenCounter } from "@compaction/core";
import type { LastTurn } from "./extract-last-turn.js";

/** Heading of the section, a line of its own. */
export const LAST_TURN_HEADING = "## Last Exchange (Verbatim)";
/** Ends text that was cut to fit the cap. */
export const TRUNCATION_MARKER = "[...truncated]";

const USER_LABEL = "**User:** ";
const ASSISTANT_LABEL = "**Assistant:** ";
/** How far back from the cap a cut may move to end at a space instead of inside a word. */
const WORD_BOUNDARY_WINDOW = 40;

const defaultCounter = createEstimateCounter();

/**
 * The section for `turn`, at most `maxTokens` tokens as `counter` counts them (default chars/4):
 *
 * ```
 * ## Last Exchange (Verbatim)
 *
 * > **User:** first line
 * > second line
 * >
 * > **Assistant:** reply
 * ```
 * Every line of both texts stays inside the blockquote. Over the cap, the assistant text is cut
 * first, then the user text; cut text ends with `[...truncated]`. Returns "" for no turn, an
 * empty turn, or a cap too small for the heading and both markers.
 */
export function formatLastTurnSection(
  turn: LastTurn | null | undefined,
  maxTokens: number,
  counter: TokenCounter = defaultCounter,
): string {
  if (typeof maxTokens !== "number" || Number.isNaN(maxTokens) || maxTokens < 0) {
    throw new CompactionError(
      ErrorCodes.INPUT_INVALID,
      `formatLastTurnSection() expected maxTokens to be a number of at least 0, found ${String(maxTokens)}.`,
      { hint: "Pass the token cap of the section, e.g. 2000." },
    );
  }
  const user = normalize(turn?.user ?? "");
  const assistant = normalize(turn?.assistant ?? "");
  if (user === "" && assistant === "") return "";
  const fits = (u: string, a: string) => counter.count(renderSection(u, a)) <= maxTokens;
  if (fits(user, assistant)) return renderSection(user, assistant);

  let cutAssistant = "";
  if (assistant !== "") {
    const k = longestFittingPrefix(assistant, (a) => fits(user, a));
    if (k !== null) return renderSection(user, cutText(assistant, k));
    cutAssistant = TRUNCATION_MARKER;
  }
  if (user !== "") {
    const k = longestFittingPrefix(user, (u) => fits(u, cutAssistant));
    if (k !== null) return renderSection(cutText(user, k), cutAssistant);
  }
  return "";
}

/** The section with both texts as given (no cap). Empty parts are left out. */
export function renderSection(user: string, assistant: string): string {
  const quoted: string[] = [];
  if (user !== "") quoted.push(quote(USER_LABEL + user));
  if (assistant !== "") quoted.push(quote(ASSISTANT_LABEL + assistant));
  if (quoted.length === 0) return "";
  return `${LAST_TURN_HEADING}\n\n${quoted.join("\n>\n")}`;
}

/**
 * `text` without a section headed `## Last Exchange (Verbatim)` (up to the next `#` or `##`
 * heading), e.g. one a summarizer carried over from the previous summary.
 */
export function removeLastTurnSection(text: string): string {
  const lines = text.split("\n");
  const out: string[] = [];
  let inSection = false;
  for (const line of lines) {
    if (line.trimEnd() === LAST_TURN_HEADING) {
      inSection = true;
      continue;
    }
    if (inSection && /^#{1,2} /.test(line)) inSection = false;
    if (!inSection) out.push(line);
  }
  if (out.length === lines.length) return text;
  return out.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd();
}

function quote(text: string): string {
  return text
    .split("\n")
    .map((line) => (line === "" ? ">" : `> ${line}`))
    .join("\n");
}

function normalize(text: string): string {
  return text.replace(/\r\n?/g, "\n");
}

/** `text` cut to its first `length` characters (never inside a surrogate pair) and marked. */
function cutText(text: string, length: number): string {
  let end = Math.max(0, Math.min(length, text.length));
  if (end > 0 && end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
  const kept = text.slice(0, end).trimEnd();
  return kept === "" ? TRUNCATION_MARKER : `${kept} ${TRUNCATION_MARKER}`;
}

/**
 * The longest prefix length of `text` whose cut form `fits`, or `null` when not even the bare
 * marker fits. Binary search (counts grow with length); then it moves back to a space when one
 * is close, so the cut does not end inside a word.
 */
function longestFittingPrefix(text: string, fits: (cut: string) => boolean): number | null {
  if (!fits(cutText(text, 0))) return null;
  let lo = 0;
  let hi = text.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(cutText(text, mid))) lo = mid;
    else hi = mid - 1;
  }
  if (lo > 0 && lo < text.length && !/\s/.test(text[lo] as string)) {
    const space = text.slice(Math.max(0, lo - WORD_BOUNDARY_WINDOW), lo).search(/\s\S*$/);
    if (space >= 0) {
      const boundary = Math.max(0, lo - WORD_BOUNDARY_WINDOW) + space;
      if (boundary > 0 && fits(cutText(text, boundary))) return boundary;
    }
  }
  return lo;
}
