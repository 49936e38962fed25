/**
 * What of an entry Postgres full-text search sees: the text transcript's `entrySearchText` gives
 * every index (recall's, SQLite's FTS5), in the two forms a `tsvector` search needs. The words are
 * split at spaces, punctuation and symbols and lower-cased in JavaScript (so
 * `user-message-selector.ts` is found by `selector`, and Postgres' parser, which keeps paths and
 * hosts whole, never sees the raw text); the literal text is kept too, for exact matches.
 */
import { entrySearchText, type SessionEntry } from "@compaction/transcript";

/** Longer "words" (base64, minified code) only bloat the index: nobody searches for them (as recall). */
const MAX_WORD_LENGTH = 64;
/** A tsvector holds at most 1 MB; words beyond this many characters are kept once each. */
const MAX_WORDS_CHARS = 256 * 1024;

const WORD_SEPARATORS = /[\p{Z}\p{P}\p{S}\p{Cc}\s]+/u;

/** The searchable forms of an entry's text, or undefined when it has none. */
export interface SearchableText {
  /** The text with runs of white space as one space, lower-cased: what an exact match looks in. */
  readonly literal: string;
  /** The words, lower-cased, space-separated: what the tsvector is made of. */
  readonly words: string;
}

/** The searchable text of an entry (see the top of this file). */
export function searchableText(entry: SessionEntry): SearchableText | undefined {
  const text = entrySearchText(entry);
  if (text === undefined) return undefined;
  return { literal: literalText(text), words: wordsText(text) };
}

/** The query as typed, white space collapsed and lower-cased: what an exact match looks for. */
export function literalText(text: string): string {
  // Postgres text cannot hold NUL.
  return text.replaceAll("\u0000", " ").trim().replace(/\s+/g, " ").toLowerCase();
}

/** The words of `text`, lower-cased, at most 64 characters each. */
export function words(text: string): string[] {
  return text
    .split(WORD_SEPARATORS)
    .filter((word) => word !== "" && word.length <= MAX_WORD_LENGTH)
    .map((word) => word.toLowerCase());
}

function wordsText(text: string): string {
  const all = words(text);
  let joined = all.join(" ");
  if (joined.length <= MAX_WORDS_CHARS) return joined;
  joined = [...new Set(all)].join(" ");
  return joined.length <= MAX_WORDS_CHARS ? joined : joined.slice(0, joined.lastIndexOf(" ", MAX_WORDS_CHARS));
}
