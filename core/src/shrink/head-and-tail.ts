/**
 * Cutting one piece of text to its head and tail, with a marker in the middle that says how
 * much was removed and where the full text is. The marker's wording is a documented format
 * (docs/guarantees.md, "No session is ever stuck"): hosts and models may rely on it.
 */
import { formatCount } from "../format-count.js";
import { isLowSurrogate } from "../summarizer/text.js";

/** What the marker says about the removed text. */
export interface ShrinkMarkerInfo {
  /** Characters removed from the middle. */
  readonly removedChars: number;
  /** About how many tokens that was. */
  readonly removedTokens: number;
  /** `tool output`, `message`, `request` (the newest user message) or `tool-call arguments` (a string inside them). */
  readonly what: "tool output" | "message" | "request" | "tool-call arguments";
  /** Tool-call ids the output answers (tool outputs). */
  readonly toolCallIds: readonly string[];
  /** The host's id for the message (its transcript entry), when it has one. */
  readonly messageId?: string | undefined;
  /** The recall tool the agent can search the full text with, when recall is configured. */
  readonly recallTool?: string | undefined;
  /** The short form, for budgets too small for the full marker. */
  readonly short?: boolean;
}

/** Where the full text of a shrunk piece can be found, as the marker says it. */
function whereToFind(info: ShrinkMarkerInfo): string {
  const places: string[] = [];
  if (info.toolCallIds.length > 0) places.push(`tool call ${info.toolCallIds.join(", ")}`);
  if (info.messageId !== undefined) places.push(`entry ${info.messageId}`);
  const where = places.length === 0 ? "" : ` (${places.join(", ")})`;
  const recall = info.recallTool === undefined ? "" : ` Search it with ${info.recallTool}.`;
  return `the full text is in the transcript${where}.${recall}`;
}

/**
 * The marker put between head and tail (the short form, `[compaction: 1,204,311 characters
 * removed; full text in the transcript]`, only where the budget is too small for this one):
 * `[compaction: 1,204,311 characters (~281,004 tokens) removed from the middle of this tool
 * output; the full text is in the transcript (tool call call_7). Search it with memory_search.]`
 */
export function shrinkMarker(info: ShrinkMarkerInfo): string {
  const chars = formatCount(info.removedChars);
  if (info.short === true) return `[compaction: ${chars} characters removed; full text in the transcript]`;
  const tokens = formatCount(info.removedTokens);
  return `[compaction: ${chars} characters (~${tokens} tokens) removed from the middle of this ${info.what}; ${whereToFind(info)}]`;
}

/** The pattern every marker matches (for hosts that look for shrunk text). */
export const SHRINK_MARKER_PATTERN =
  /\[compaction: [\d,]+ characters (?:\(~[\d,]+ tokens\) removed from the middle of this (?:tool output|message|request|tool-call arguments); [^\]]*|removed; full text in the transcript)\]/;

/**
 * `text` cut to about `keepChars` characters: the head and the tail (half each, moved to a line
 * break when one is near, so lines stay whole), with the marker built by `marker(removedChars)`
 * between them. Returns `text` itself when it is not longer than what would be kept.
 */
export function headAndTail(text: string, keepChars: number, marker: (removedChars: number) => string): string {
  const keep = Math.max(0, Math.floor(keepChars));
  if (text.length <= keep + marker(text.length).length + 2) return text;
  let headEnd = snapToLine(text, Math.ceil(keep / 2), -1);
  let tailStart = snapToLine(text, text.length - Math.floor(keep / 2), 1);
  headEnd = avoidSurrogateSplit(text, headEnd);
  tailStart = avoidSurrogateSplit(text, tailStart);
  if (tailStart <= headEnd) return text;
  const removed = tailStart - headEnd;
  return `${text.slice(0, headEnd)}\n${marker(removed)}\n${text.slice(tailStart)}`;
}

/** Moves `at` to just after a line break within 10% of it (looking in `direction`), if there is one. */
function snapToLine(text: string, at: number, direction: -1 | 1): number {
  const reach = Math.floor(Math.min(at, text.length - at) * 0.1);
  if (reach <= 0) return at;
  if (direction < 0) {
    const newline = text.lastIndexOf("\n", at - 1);
    return newline >= 0 && at - newline <= reach ? newline + 1 : at;
  }
  const newline = text.indexOf("\n", at);
  return newline >= 0 && newline - at <= reach ? newline + 1 : at;
}

/** Never cut between the two halves of a surrogate pair. */
function avoidSurrogateSplit(text: string, at: number): number {
  if (at <= 0 || at >= text.length) return at;
  return isLowSurrogate(text.charCodeAt(at)) ? at - 1 : at;
}
