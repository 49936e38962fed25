/**
 * Whether a summary says anything: a text of only headings (`## Goal`), labels alone on a line
 * (`**Turn Context (split turn):**`), rules (`---`) and blank lines has nothing in it, and such a
 * summary is never written.
 */
const EMPTY_LINE = /^(?:#{1,6}\s.*|#{1,6}|\*\*[^*]+\*\*:?|[-*_]{3,}|>\s*|\s*)$/;

export function summaryHasContent(text: string): boolean {
  for (const line of text.split("\n")) if (!EMPTY_LINE.test(line.trim())) return true;
  return false;
}
