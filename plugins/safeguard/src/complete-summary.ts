/**
 * Makes sure a summary keeps the cumulative file lists and the failed tool calls, whatever
 * summarizer wrote it: what the summary does not state is written into the extractive
 * summarizer's headings (`## Files` / `### Read` / `### Modified`, `## Commands & Tool Calls` /
 * `### Failed`), existing or added, so the next compaction reads it back.
 */
import { SPLIT_TURN_HEADING, type TokenCounter, readSummary } from "@compaction/core";
import type { FileLists } from "./file-lists.js";

/** What the summary must state. */
export interface RequiredLists {
  readonly files: FileLists;
  /** Failed tool calls, oldest first. Added only when the summary has no failed calls at all. */
  readonly failed: readonly string[];
}

export interface CompleteSummaryOptions {
  /** The completed summary must not exceed this many tokens (unless `text` alone already does). */
  readonly maxTokens: number;
  readonly counter: TokenCounter;
}

export interface CompletedSummary {
  readonly text: string;
  /** Items appended. */
  readonly added: number;
  /** Missing items left out because they did not fit `maxTokens`. */
  readonly leftOut: number;
}

type Group = "read" | "modified" | "failed";

interface MissingItem {
  readonly group: Group;
  readonly text: string;
  /** Position in its list, to render oldest first. */
  readonly order: number;
}

const SPLIT_SEPARATOR = `\n\n---\n\n${SPLIT_TURN_HEADING}`;

/**
 * `text` with the missing file paths (a path counts as listed when the summary names it in the
 * right list; a modified file listed only as read is missing) and, when the summary lists no
 * failed call, the failed calls, written into the history part (before a split turn's section).
 * When not everything fits `maxTokens`, modified files go first, then failed calls, then files
 * read, newest first within each.
 */
export function completeSummary(text: string, lists: RequiredLists, options: CompleteSummaryOptions): CompletedSummary {
  const missing = missingItems(text, lists);
  if (missing.length === 0) return { text, added: 0, leftOut: 0 };

  const build = (count: number) => insertItems(text, missing.slice(0, count));
  const fits = (count: number) => options.counter.count(build(count)) <= options.maxTokens;
  // Usually everything fits: one count. Else the longest prefix (in priority order) that fits;
  // each item only adds tokens.
  if (fits(missing.length)) return { text: build(missing.length), added: missing.length, leftOut: 0 };
  let low = 0;
  let high = missing.length - 1;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (fits(mid)) low = mid;
    else high = mid - 1;
  }
  return { text: low === 0 ? text : build(low), added: low, leftOut: missing.length - low };
}

/** Tokens the lists take written as sections of their own: what a summary must leave room for. */
export function listsTokens(lists: RequiredLists, counter: TokenCounter): number {
  const items = missingItems("", lists);
  return items.length === 0 ? 0 : counter.count(withItems("", items));
}

/** Missing items in priority order: modified files, failed calls, files read, newest first in each. */
function missingItems(text: string, lists: RequiredLists): MissingItem[] {
  const { slots } = readSummary(text);
  const listedModified = new Set(slots.filesModified);
  const listedRead = new Set(slots.filesRead);
  const modified = lists.files.modified.filter((path) => !listedModified.has(path));
  const read = lists.files.read.filter((path) => !listedModified.has(path) && !listedRead.has(path));
  const failed = slots.failed.length === 0 ? lists.failed : [];
  const newestFirst = (group: Group, items: readonly string[]): MissingItem[] =>
    items.map((item, order) => ({ group, text: item, order })).reverse();
  return [...newestFirst("modified", modified), ...newestFirst("failed", failed), ...newestFirst("read", read)];
}

/** Where each group goes: its `## ` section, `### ` subsection and item style. */
const PLACES: Readonly<Record<Group, { parent: string; parentAliases: readonly string[]; child: string; code: boolean }>> = {
  read: { parent: "Files", parentAliases: ["files"], child: "Read", code: true },
  modified: { parent: "Files", parentAliases: ["files"], child: "Modified", code: true },
  failed: { parent: "Commands & Tool Calls", parentAliases: ["commands and tool calls", "commands"], child: "Failed", code: false },
};

const HEADING_LINE = /^(#{2,3})[ \t]+(.+?)[ \t]*#*[ \t]*$/;

/**
 * The history part with the items written into it: at the top of their existing subsection
 * (`### Modified` under `## Files`), else as a new subsection at the end of their section, else
 * as a new section at the end.
 */
function withItems(history: string, items: readonly MissingItem[]): string {
  const lines = history.split("\n");
  for (const group of ["read", "modified", "failed"] as const) {
    const texts = items
      .filter((item) => item.group === group)
      .sort((a, b) => a.order - b.order)
      .map((item) => renderLine(item.text, PLACES[group].code));
    if (texts.length > 0) insertGroup(lines, group, texts);
  }
  return lines.join("\n");
}

function insertGroup(lines: string[], group: Group, items: readonly string[]): void {
  const place = PLACES[group];
  const { parentEnd, child } = locate(lines, place.parentAliases, place.child);
  if (child !== undefined) {
    lines.splice(child + 1, 0, ...items);
  } else if (parentEnd !== undefined) {
    lines.splice(parentEnd, 0, `### ${place.child}`, ...items);
  } else {
    while (lines.length > 0 && (lines[lines.length - 1] ?? "").trim() === "") lines.pop();
    if (lines.length > 0) lines.push("");
    lines.push(`## ${place.parent}`, `### ${place.child}`, ...items);
  }
}

/**
 * The first `## ` section named by one of `parentAliases`: the index just after its last
 * non-blank line (`parentEnd`), and the index of its `### child` heading when it has one.
 */
function locate(lines: readonly string[], parentAliases: readonly string[], child: string): { parentEnd?: number; child?: number } {
  let inParent = false;
  let found = false;
  let childIndex: number | undefined;
  let lastContent = -1;
  for (let i = 0; i < lines.length; i++) {
    const heading = HEADING_LINE.exec((lines[i] ?? "").trimEnd());
    if (heading !== null && heading[1] === "##") {
      if (inParent) break;
      inParent = !found && parentAliases.includes(normaliseTitle(heading[2] ?? ""));
      if (inParent) found = true;
    } else if (heading !== null && inParent && childIndex === undefined && normaliseTitle(heading[2] ?? "") === normaliseTitle(child)) {
      childIndex = i;
    }
    if (inParent && (lines[i] ?? "").trim() !== "") lastContent = i;
  }
  if (!found) return {};
  return childIndex === undefined ? { parentEnd: lastContent + 1 } : { parentEnd: lastContent + 1, child: childIndex };
}

function normaliseTitle(title: string): string {
  return title
    .toLowerCase()
    .replace(/&/g, " and ")
    .replace(/[^a-z0-9 ]+/g, " ")
    .replace(/ +/g, " ")
    .trim();
}

function renderLine(text: string, code: boolean): string {
  return code && !text.includes("`") ? `- \`${text}\`` : `- ${text}`;
}

/** Writes the items into the history part: before a split turn's section, else the whole text. */
function insertItems(text: string, items: readonly MissingItem[]): string {
  const split = text.indexOf(SPLIT_SEPARATOR);
  if (split < 0) return withItems(text.trimEnd(), items);
  const history = withItems(text.slice(0, split).trimEnd(), items).replace(/^\n+/, "");
  return history + text.slice(split);
}
