/**
 * Where a text can be counted in parts without changing its count.
 *
 * tiktoken cuts text into pieces with its encoding's regex, then encodes each piece on its own.
 * At a line break that has a character other than white space on both sides, every encoding's
 * regex (gpt2, r50k, p50k, cl100k, o200k) ends a piece at the line break and starts the next
 * piece after it, and no part of the regex looks across it: white space runs end there, no
 * letter, number or punctuation piece takes a line break in, and the one piece that takes line
 * breaks and slashes after punctuation (o200k's `[\r\n/]*`) is why a line that starts with "/"
 * is not a cut. So the count of the whole is the sum of the counts of the parts.
 */

/** True for characters any encoding's `\s` may take (Unicode White_Space and the control codes), so a cut is never placed beside them. */
function isSpaceLike(code: number): boolean {
  if (code <= 0x20) return true;
  if (code < 0x85) return false;
  return (
    code === 0x85 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

const SLASH = 0x2f;
const LINE_FEED = "\n";

/**
 * Calls `part` with each piece of `text` cut after every line break that has a character other
 * than white space before it and a character other than white space or "/" after it, in order;
 * the pieces joined are `text`. A text with no such line break is passed whole.
 */
export function forEachLineSegment(text: string, part: (segment: string) => void): void {
  let start = 0;
  let at = text.indexOf(LINE_FEED, 1);
  while (at !== -1 && at + 1 < text.length) {
    const after = text.charCodeAt(at + 1);
    if (!isSpaceLike(text.charCodeAt(at - 1)) && !isSpaceLike(after) && after !== SLASH) {
      part(text.slice(start, at + 1));
      start = at + 1;
    }
    at = text.indexOf(LINE_FEED, at + 1);
  }
  part(start === 0 ? text : text.slice(start));
}
