/**
 * Significant words of a text: used to match items against the user's focus and to see that
 * new work finished an item that was in progress.
 */

const WORD = /[\p{L}\p{N}_][\p{L}\p{N}_./-]*/gu;
const TRAILING_SYMBOLS = /[./-]+$/;

const STOP_WORDS = new Set(
  (
    "the and for with that this from into onto then than them they their there these those have has had " +
    "was were are been being will would could should shall about after before over under again also just " +
    "only some more most such very what when where which while who whom why how its it's our your you " +
    "can not but all any each both few other same own too let me now make sure please want need use using " +
    "file files code work done thing things part keep focus on of to in is be do a an or as at by if so up"
  ).split(" "),
);

/** Lower-cased words of three or more characters that are not stop words, each once, in order. */
export function significantWords(text: string): string[] {
  const words: string[] = [];
  const seen = new Set<string>();
  for (const match of text.toLowerCase().matchAll(WORD)) {
    const word = match[0].replace(TRAILING_SYMBOLS, "");
    if (word.length < 3 || STOP_WORDS.has(word) || seen.has(word)) continue;
    seen.add(word);
    words.push(word);
  }
  return words;
}

/** A test for "does this item mention the focus": any focus keyword as a case-insensitive substring. */
export function focusMatcher(focus: string | undefined): (text: string) => boolean {
  const keywords = significantWords(focus ?? "");
  if (keywords.length === 0) return () => false;
  return (text) => {
    const lower = text.toLowerCase();
    return keywords.some((keyword) => lower.includes(keyword));
  };
}
