import { closest, distance } from "fastest-levenshtein";

/**
 * The candidate nearest to `input`, when it is near enough to be a likely misspelling:
 * an edit distance of at most max(2, a third of the input's length). Case is ignored.
 */
export function suggest(input: string, candidates: Iterable<string>): string | undefined {
  const list = [...new Set(candidates)].filter((candidate) => candidate !== input);
  if (list.length === 0 || input.length === 0) return undefined;
  const lowered = list.map((candidate) => candidate.toLowerCase());
  const needle = input.toLowerCase();
  const nearest = closest(needle, lowered);
  const limit = Math.max(2, Math.floor(input.length / 3));
  if (distance(needle, nearest) > limit) return undefined;
  return list[lowered.indexOf(nearest)];
}

/** `" Did you mean 'x'?"` for a close candidate, or an empty string. */
export function didYouMean(input: string, candidates: Iterable<string>): string {
  const nearest = suggest(input, candidates);
  return nearest === undefined ? "" : `Did you mean '${nearest}'?`;
}
