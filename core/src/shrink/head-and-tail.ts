/**
 * Cutting one piece of text to its head and tail, with a marker in the middle that says how
 * much was removed and where the full text is. The marker's wording is a documented format
 * (docs/guarantees.md, "No session is ever stuck"): hosts and models may rely on it.
 */
import { formatCount } from "../format-count.js";
import { isLowSurrogate } from "../summarizer/text.js";
import { elidedNames, namesLine } from "./elided-names.js";

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
 *
 * With `namesShare` (0 to 1), up to that share of `keepChars` goes to a line after the marker
 * that lists the names in the removed middle the head and tail do not show (elided-names.ts),
 * and the head and tail share the rest: the same allowance, and the names the agent may need
 * next stay in the text.
 */
export function headAndTail(text: string, keepChars: number, marker: (removedChars: number) => string, namesShare = 0): string {
  const keep = Math.max(0, Math.floor(keepChars));
  if (text.length <= keep + marker(text.length).length + 2) return text;
  const namesRoom = Math.floor(keep * Math.min(1, Math.max(0, namesShare)));
  let names = "";
  if (namesRoom > 0) {
    const first = split(text, keep - namesRoom);
    if (first === undefined) return text;
    const shown = `${text.slice(0, first.headEnd)}\n${text.slice(first.tailStart)}`;
    names = namesLine(elidedNames(text, shown, first.headEnd, first.tailStart), namesRoom);
  }
  const cut = split(text, keep - names.length);
  if (cut === undefined) return text;
  const removed = cut.tailStart - cut.headEnd;
  const namesPart = names === "" ? "" : `\n${names}`;
  return `${text.slice(0, cut.headEnd)}\n${marker(removed)}${namesPart}\n${text.slice(cut.tailStart)}`;
}

/** Where the head ends and the tail starts when `keep` characters stay; undefined when they would overlap. */
function split(text: string, keep: number): { headEnd: number; tailStart: number } | undefined {
  const headEnd = avoidSurrogateSplit(text, snapToLine(text, Math.ceil(Math.max(0, keep) / 2), -1));
  const tailStart = avoidSurrogateSplit(text, snapToLine(text, text.length - Math.floor(Math.max(0, keep) / 2), 1));
  return tailStart <= headEnd ? undefined : { headEnd, tailStart };
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
