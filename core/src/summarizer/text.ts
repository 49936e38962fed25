/**
 * Plain-text helpers of summaries: whitespace, clipping, surrogate pairs. Every function is
 * linear in the length of its input.
 */

/** Marks text that was cut short. */
export const ELLIPSIS = "…";

/** A whitespace run that is not already one plain space: a longer run, or one other whitespace character. */
const WHITESPACE_TO_COLLAPSE = /\s{2,}|[^\S ]/g;

/** Collapses every whitespace run (newlines included) to one space and trims. */
export function collapseWhitespace(text: string): string {
  // Single spaces are left alone, so a text with nothing to collapse is not copied.
  return text.replace(WHITESPACE_TO_COLLAPSE, " ").trim();
}

/**
 * Cuts `text` to at most `maxChars` characters, ending with "…" when cut. Prefers a word
 * boundary near the end and never splits a surrogate pair, so the kept part is a prefix.
 */
export function clip(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  if (maxChars <= 0) return "";
  if (maxChars === 1) return ELLIPSIS;
  let kept = text.slice(0, maxChars - 1);
  if (isHighSurrogate(kept.charCodeAt(kept.length - 1))) kept = kept.slice(0, -1);
  const space = kept.lastIndexOf(" ");
  if (space > maxChars * 0.6) kept = kept.slice(0, space);
  return `${kept.trimEnd()}${ELLIPSIS}`;
}

/** True when the UTF-16 code unit starts a surrogate pair. */
export function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** True when the UTF-16 code unit ends a surrogate pair. */
export function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
