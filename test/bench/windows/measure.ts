/**
 * The measures of one replay that the replay package does not take itself: requests that hold
 * fewer of the newest messages than plain truncation would, truncation to half the window (the
 * continuity baseline), and the compaction-storm bound.
 */

/**
 * Our count of a recording, summed once, to answer "how many of the newest messages before
 * index i fit in a budget" (plain truncation) without walking the history at every call.
 */
export class NewestFit {
  /** `prefix[i]`: tokens of messages[0..i). */
  readonly #prefix: number[];

  constructor(tokens: readonly number[]) {
    this.#prefix = [0];
    for (const count of tokens) this.#prefix.push((this.#prefix.at(-1) as number) + count);
  }

  /** How many of the newest messages before `index` fit in `budget` together (0 when the newest alone does not). */
  count(index: number, budget: number): number {
    const prefix = this.#prefix;
    const end = prefix[index] as number;
    // The smallest start whose suffix up to `index` fits: the suffix sum only shrinks as start grows.
    let low = 0;
    let high = index;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (end - (prefix[mid] as number) <= budget) high = mid;
      else low = mid + 1;
    }
    return index - low;
  }
}

/**
 * Requests a replay sent with fewer messages than truncation to `budget` would have held (the
 * windows benchmark passes an eighth of the window: what every preset keeps verbatim at least).
 */
export class CutRequests {
  cut = 0;
  calls = 0;
  /** The cut request that held the smallest share of what fit: its count and the fit. */
  worst: { held: number; fit: number } | undefined;

  constructor(
    private readonly fit: NewestFit,
    private readonly budget: number,
  ) {}

  record(index: number, held: number): void {
    this.calls += 1;
    const fit = this.fit.count(index, this.budget);
    if (held >= fit) return;
    this.cut += 1;
    if (this.worst === undefined || held / fit < this.worst.held / this.worst.fit) this.worst = { held, fit };
  }
}

/** The newest messages of `history` whose tokens fit in `budget` together (plain truncation). */
export function truncated<T>(history: readonly T[], budget: number, tokensOf: (message: T) => number): T[] {
  let start = history.length;
  let held = 0;
  while (start > 0 && held + tokensOf(history[start - 1] as T) <= budget) held += tokensOf(history[--start] as T);
  return history.slice(start);
}

/**
 * The most compactions a replay should need: one per quarter window of tokens appended, plus the
 * first. More means compactions that freed too little, run again and again (a storm).
 */
export function stormBound(appendedTokens: number, window: number): number {
  return appendedTokens / (window / 4) + 1;
}
