/**
 * The markdown shape of a summary: `## ` sections with optional `### ` subsections, each a
 * list of one-line items. Parses any markdown with `## ` headings and renders blocks back.
 */

/** How an item line is written. */
export type ItemStyle = "bullet" | "done" | "todo" | "numbered" | "code" | "text" | "verbatim";

/** One item of a block. Higher `rank` is kept longer when the summary must shrink. */
export interface SummaryItem {
  readonly text: string;
  readonly rank: number;
}

/** A heading and its items, ready to render. */
export interface SummaryBlock {
  /** The heading line, e.g. `## Goal` or `### Done`. */
  readonly heading: string;
  readonly style: ItemStyle;
  readonly items: readonly SummaryItem[];
  /** An optional block (an unknown section kept from an earlier summary) is left out when empty. */
  readonly optional: boolean;
}

/** A section as found in markdown: its heading and the lines under it, verbatim. */
export interface RawSection {
  readonly level: 2 | 3;
  readonly title: string;
  /** The heading line as written. */
  readonly heading: string;
  readonly lines: readonly string[];
}

export interface ParsedMarkdown {
  /** Lines before the first heading. */
  readonly preamble: readonly string[];
  readonly sections: readonly RawSection[];
}

/** An item read back from a line: marker and checkbox removed. */
export interface ParsedItem {
  readonly text: string;
  /** `true` for `[x]`, `false` for `[ ]`, `undefined` without a checkbox. */
  readonly checked: boolean | undefined;
}

const HEADING_LINE = /^(#{2,3})[ \t]+(.+?)[ \t]*#*[ \t]*$/;
const LINE_BREAK = /\r?\n/;
const ITEM_MARKER = /^(?:[-*+]|\d{1,3}[.)])\s+(?:\[([ xX])\]\s*)?/;
const HORIZONTAL_RULE = /^(?:-{3,}|\*{3,}|_{3,})$/;
const NONE_ITEM = /^\(none\)$/i;
const LEADING_HASHES = /^#+\s*/;
const CODE_WRAPPED = /^`([^`]+)`$/;

/**
 * Splits markdown into sections at `## ` and `### ` headings. Code fences are not tracked on
 * purpose: a fence cut open by trimming must never hide the headings after it.
 */
export function parseSections(text: string): ParsedMarkdown {
  const preamble: string[] = [];
  const sections: { level: 2 | 3; title: string; heading: string; lines: string[] }[] = [];
  for (const raw of text.split(LINE_BREAK)) {
    const line = raw.trimEnd();
    const heading = HEADING_LINE.exec(line);
    if (heading !== null) {
      const level = heading[1] === "##" ? 2 : 3;
      sections.push({ level, title: (heading[2] ?? "").trim(), heading: line.trim(), lines: [] });
      continue;
    }
    const current = sections[sections.length - 1];
    (current === undefined ? preamble : current.lines).push(line);
  }
  return { preamble: trimBlankEnds(preamble), sections: sections.map((s) => ({ ...s, lines: trimBlankEnds(s.lines) })) };
}

/** Reads one item line; `undefined` for blank lines, rules and `(none)`. */
export function parseItemLine(line: string): ParsedItem | undefined {
  const trimmed = line.trim();
  if (trimmed.length === 0 || HORIZONTAL_RULE.test(trimmed)) return undefined;
  const marker = ITEM_MARKER.exec(trimmed);
  const text = (marker === null ? trimmed : trimmed.slice(marker[0].length)).trim();
  if (text.length === 0 || NONE_ITEM.test(text)) return undefined;
  const box = marker?.[1];
  return { text, checked: box === undefined ? undefined : box !== " " };
}

/** The text inside one pair of backticks, as `code` items are written; other text unchanged. */
export function unwrapCode(text: string): string {
  return CODE_WRAPPED.exec(text)?.[1] ?? text;
}

/** Writes one item line in its block's style. `position` counts from 0 (for numbered lists). */
export function renderItem(style: ItemStyle, text: string, position: number): string {
  switch (style) {
    case "bullet":
      return `- ${text}`;
    case "done":
      return `- [x] ${text}`;
    case "todo":
      return `- [ ] ${text}`;
    case "numbered":
      return `${position + 1}. ${text}`;
    case "code":
      return text.includes("`") ? `- ${text}` : `- \`${text}\``;
    case "text":
      // A plain line must never read back as a heading.
      return HEADING_LINE.test(text) ? text.replace(LEADING_HASHES, "") : text;
    case "verbatim":
      // Lines of an unknown section, kept as written (its `### ` lines stay headings).
      return text;
  }
}

/** Renders blocks: a blank line before each `## ` heading, items one per line. */
export function renderBlocks(blocks: readonly SummaryBlock[]): string {
  const lines: string[] = [];
  for (const block of blocks) {
    if (block.optional && block.items.length === 0) continue;
    if (lines.length > 0 && block.heading.startsWith("## ")) lines.push("");
    lines.push(block.heading);
    block.items.forEach((item, position) => lines.push(renderItem(block.style, item.text, position)));
  }
  return lines.join("\n");
}

function trimBlankEnds(lines: string[]): string[] {
  let start = 0;
  let end = lines.length;
  while (start < end && (lines[start] ?? "").trim().length === 0) start++;
  while (end > start && (lines[end - 1] ?? "").trim().length === 0) end--;
  return lines.slice(start, end);
}
