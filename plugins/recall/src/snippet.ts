/** The snippet shown for a search result: the entry's text around its matching words. */

const ELLIPSIS = "…";
/** How far a window edge may move to land on a word boundary. */
const BOUNDARY_SLACK = 20;

/**
 * About `width` characters of `text` (whitespace collapsed) around the place where most of
 * `terms` occur close together (case-insensitive; the earliest such place), a third of the window
 * before it; the start of the text when none occurs. A term inside an identifier (a path, a
 * camelCase or snake_case name: `src/theme-selector.ts` for "selector") counts twice: what an
 * agent searches for is mostly a file or a name it needs back, and the identifier is what it can
 * use. Cut ends land on word boundaries where one is near and are marked with `…`.
 */
export function snippet(text: string, terms: readonly string[], width = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= width) return flat;
  const at = bestOccurrence(flat, terms, width);
  let start = Math.max(0, Math.min(at - Math.floor(width / 3), flat.length - width));
  let end = Math.min(flat.length, start + width);
  if (start > 0) start = wordStartAfter(flat, start, at);
  if (end < flat.length) end = wordEndBefore(flat, end, start);
  return `${start > 0 ? ELLIPSIS : ""}${flat.slice(start, end).trim()}${end < flat.length ? ELLIPSIS : ""}`;
}

/**
 * Where the snippet should centre: the first occurrence in the stretch of text (two thirds of a
 * window) with the best score, counting occurrences at word starts, or anywhere when no term
 * starts a word; 0 when no term occurs. A stretch scores one per distinct term in it, and one
 * more per distinct term it holds inside an identifier.
 */
function bestOccurrence(flat: string, terms: readonly string[], width: number): number {
  const lower = flat.toLowerCase();
  const needles = [...new Set(terms.map((term) => term.toLowerCase().trim()).filter((term) => term !== ""))];
  let hits = occurrences(flat, lower, needles, true);
  if (hits.length === 0) hits = occurrences(flat, lower, needles, false);
  if (hits.length === 0) return 0;
  const span = Math.max(1, Math.floor((width * 2) / 3));
  let best = { at: hits[0]?.at ?? 0, score: 0 };
  const counts = new Map<number, number>();
  const inNames = new Map<number, number>();
  const add = (map: Map<number, number>, term: number, by: number) => {
    const left = (map.get(term) ?? 0) + by;
    if (left === 0) map.delete(term);
    else map.set(term, left);
  };
  let from = 0;
  for (const hit of hits) {
    add(counts, hit.term, 1);
    if (hit.inIdentifier) add(inNames, hit.term, 1);
    while ((hits[from] as Occurrence).at < hit.at - span) {
      const gone = hits[from] as Occurrence;
      add(counts, gone.term, -1);
      if (gone.inIdentifier) add(inNames, gone.term, -1);
      from += 1;
    }
    const score = counts.size + inNames.size;
    if (score > best.score) best = { at: (hits[from] as Occurrence).at, score };
  }
  return best.at;
}

interface Occurrence {
  readonly at: number;
  readonly term: number;
  /** Whether the occurrence is inside an identifier (see `isIdentifier`). */
  readonly inIdentifier: boolean;
}

/**
 * Every occurrence of each needle in `lower` (at word starts only, or anywhere), in text order. A
 * camelCase hump starts a word too (`Selector` in `ThemeSelector`), read from the original case.
 */
function occurrences(flat: string, lower: string, needles: readonly string[], wordStart: boolean): Occurrence[] {
  const found: Occurrence[] = [];
  needles.forEach((needle, term) => {
    for (const match of lower.matchAll(new RegExp(escapeRegExp(needle), "gu"))) {
      if (wordStart && !startsWord(flat, match.index)) continue;
      found.push({ at: match.index, term, inIdentifier: isIdentifier(tokenAt(flat, match.index)) });
    }
  });
  return found.sort((a, b) => a.at - b.at);
}

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

function startsWord(text: string, at: number): boolean {
  const before = text[at - 1];
  if (before === undefined || !LETTER_OR_DIGIT.test(before)) return true;
  return /\p{Ll}/u.test(before) && /\p{Lu}/u.test(text[at] as string);
}

/** Characters that end a token around an occurrence: spaces, quotes, brackets and sentence punctuation. */
const TOKEN_END = /[\s"'`()[\]{}<>,;:!?]/u;

/** The token (see TOKEN_END) holding the character at `at`, without a trailing full stop. */
function tokenAt(text: string, at: number): string {
  let start = at;
  while (start > 0 && !TOKEN_END.test(text[start - 1] as string)) start -= 1;
  let end = at;
  while (end < text.length && !TOKEN_END.test(text[end] as string)) end += 1;
  return text.slice(start, end).replace(/\.+$/, "");
}

/**
 * A path (`a/b`, `name.ts`), a camelCase or PascalCase name of two humps, a snake_case name, a
 * `--flag`: what the core calls identifiers, roughly (not a hyphenated word of prose).
 */
function isIdentifier(token: string): boolean {
  return (
    /[\p{L}\p{N}_.-]\/[\p{L}\p{N}_.-]/u.test(token) ||
    /^[\w-]+\.[a-z][a-z0-9]{0,5}$/i.test(token) ||
    /\p{Ll}\p{Lu}/u.test(token) ||
    /\p{L}_\p{L}/u.test(token) ||
    /^--\p{L}/u.test(token)
  );
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The start of the next word at or after `start`, if one begins soon enough and before `limit`. */
function wordStartAfter(text: string, start: number, limit: number): number {
  if (text[start - 1] === " ") return start;
  const space = text.indexOf(" ", start);
  return space !== -1 && space + 1 <= limit && space - start <= BOUNDARY_SLACK ? space + 1 : start;
}

/** The end of the last whole word at or before `end`, if one ends close enough and after `floor`. */
function wordEndBefore(text: string, end: number, floor: number): number {
  if (text[end] === " ") return end;
  const space = text.lastIndexOf(" ", end);
  return space > floor && end - space <= BOUNDARY_SLACK ? space : end;
}

/** The words of a query, for finding them in a text when the scorer reports no matched terms. */
export function queryWords(query: string): string[] {
  return query
    .toLowerCase()
    .split(/[\s\p{P}]+/u)
    .filter((word) => word.length > 1);
}
