/**
 * Prose in messages, for the extractive summarizer: prose lines (code, headings and tables
 * skipped), sentences, and whether a sentence reads as prose. Every function is linear in the
 * length of its input.
 */
import { isHighSurrogate, isLowSurrogate } from "@compaction/core";

const FENCE = /^\s*(?:```|~~~)/;
const HEADING = /^\s{0,3}#{1,6}\s/;
const TABLE_ROW = /^\s*\|/;
const QUOTE_MARKER = /^\s*(?:>\s?)+/;
const NUMBERED_MARKER = /^\s*\d{1,3}[.)]\s+/;
const BULLET_MARKER = /^\s*[-*+]\s+(?:\[[ xX]\]\s+)?/;
const SENTENCE_BOUNDARY = /(?<=[.!?])\s+(?=\S)/;
/** A letter at `lastIndex`. */
const LETTER_AT = /\p{L}/uy;

/** One line of prose: list and quote markers removed, with what kind of list it was in. */
export interface ProseLine {
  readonly text: string;
  readonly list?: "numbered" | "bullet";
}

/**
 * The prose lines of a markdown-ish text: skips fenced code, headings, table rows and blank
 * lines; strips quote and list markers.
 */
export function proseLines(text: string): ProseLine[] {
  const lines: ProseLine[] = [];
  let inFence = false;
  for (const raw of text.split("\n")) {
    if (FENCE.test(raw)) {
      inFence = !inFence;
      continue;
    }
    if (inFence || HEADING.test(raw) || TABLE_ROW.test(raw)) continue;
    let line = raw.replace(QUOTE_MARKER, "");
    let list: ProseLine["list"];
    if (NUMBERED_MARKER.test(line)) {
      list = "numbered";
      line = line.replace(NUMBERED_MARKER, "");
    } else if (BULLET_MARKER.test(line)) {
      list = "bullet";
      line = line.replace(BULLET_MARKER, "");
    }
    line = line.trim();
    if (line.length === 0) continue;
    lines.push(list === undefined ? { text: line } : { text: line, list });
  }
  return lines;
}

/** Splits one line into sentences at `.`, `!` or `?` followed by whitespace. */
export function splitSentences(line: string): string[] {
  return line.split(SENTENCE_BOUNDARY);
}

/** Every sentence of the prose lines of `text`, trimmed. */
export function proseSentences(text: string): string[] {
  const sentences: string[] = [];
  for (const line of proseLines(text)) {
    for (const sentence of splitSentences(line.text)) {
      const trimmed = sentence.trim();
      if (trimmed.length > 0) sentences.push(trimmed);
    }
  }
  return sentences;
}

/**
 * True for a sentence that reads as prose: at least three words and mostly letters, so code,
 * log lines and bare paths are left out.
 */
export function looksLikeProse(sentence: string): boolean {
  if (sentence.length < 12) return false;
  let words = 1;
  for (let i = 0; i < sentence.length; i++) if (sentence.charCodeAt(i) === 32) words++;
  if (words < 3) return false;
  return countLetters(sentence) >= sentence.length * 0.55;
}

/** Letters in `text` (Unicode `\p{L}`), a character outside the BMP counting once. */
function countLetters(text: string): number {
  let letters = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) {
      if ((code | 0x20) >= 0x61 && (code | 0x20) <= 0x7a) letters++;
      continue;
    }
    LETTER_AT.lastIndex = i;
    if (LETTER_AT.test(text)) letters++;
    // A character outside the BMP is two code units: step over the second.
    if (isHighSurrogate(code) && isLowSurrogate(text.charCodeAt(i + 1))) i++;
  }
  return letters;
}

/** The first line of `text` that is not blank, trimmed ("" when there is none). */
export function firstNonBlankLine(text: string): string {
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    const line = text.slice(start, end).trim();
    if (line.length > 0) return line;
    start = end + 1;
  }
  return "";
}
