/** The snippet shown for a search result: the entry's text around its matching words. */

const ELLIPSIS = "…";
/** How far a window edge may move to land on a word boundary. */
const BOUNDARY_SLACK = 20;

/**
 * About `width` characters of `text` (whitespace collapsed) around the place where most of
 * `terms` occur close together (case-insensitive; the earliest such place), a third of the window
 * before it; the start of the text when none occurs. Cut ends land on word boundaries where one
 * is near and are marked with `…`.
 */
export function snippet(text: string, terms: readonly string[], width = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat.length <= width) return flat;
  const at = bestOccurrence(flat.toLowerCase(), terms, width);
  let start = Math.max(0, Math.min(at - Math.floor(width / 3), flat.length - width));
  let end = Math.min(flat.length, start + width);
  if (start > 0) start = wordStartAfter(flat, start, at);
  if (end < flat.length) end = wordEndBefore(flat, end, start);
  return `${start > 0 ? ELLIPSIS : ""}${flat.slice(start, end).trim()}${end < flat.length ? ELLIPSIS : ""}`;
}

/**
 * Where the snippet should centre: the first occurrence in the stretch of text (two thirds of a
 * window) holding the most distinct terms, counting occurrences at word starts, or anywhere when
 * no term starts a word; 0 when no term occurs.
 */
function bestOccurrence(lower: string, terms: readonly string[], width: number): number {
  const needles = [...new Set(terms.map((term) => term.toLowerCase().trim()).filter((term) => term !== ""))];
  let hits = occurrences(lower, needles, true);
  if (hits.length === 0) hits = occurrences(lower, needles, false);
  if (hits.length === 0) return 0;
  const span = Math.max(1, Math.floor((width * 2) / 3));
  let best = { at: hits[0]?.at ?? 0, distinct: 0 };
  const counts = new Map<number, number>();
  let from = 0;
  for (const hit of hits) {
    counts.set(hit.term, (counts.get(hit.term) ?? 0) + 1);
    while ((hits[from] as Occurrence).at < hit.at - span) {
      const term = (hits[from] as Occurrence).term;
      const left = (counts.get(term) ?? 1) - 1;
      if (left === 0) counts.delete(term);
      else counts.set(term, left);
      from += 1;
    }
    if (counts.size > best.distinct) best = { at: (hits[from] as Occurrence).at, distinct: counts.size };
  }
  return best.at;
}

interface Occurrence {
  readonly at: number;
  readonly term: number;
}

/** Every occurrence of each needle (at word starts only, or anywhere), in text order. */
function occurrences(lower: string, needles: readonly string[], wordStart: boolean): Occurrence[] {
  const found: Occurrence[] = [];
  needles.forEach((needle, term) => {
    const pattern = new RegExp(`${wordStart ? "(?<![\\p{L}\\p{N}])" : ""}${escapeRegExp(needle)}`, "gu");
    for (const match of lower.matchAll(pattern)) found.push({ at: match.index, term });
  });
  return found.sort((a, b) => a.at - b.at);
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
