/**
 * `compaction compare`'s recommendation: which of the replayed presets to use on this session. The
 * rule, in the order the code follows it (the same text is in `compare --help` and cli/README.md):
 *
 * 1. Keeps the most: the presets whose *kept next* is within one point of the best, and of those
 *    the ones whose *long memory* is within one point of their best (a measure the replay could
 *    not take, with nothing past the compaction threshold, is skipped).
 * 2. Costs least: of those, the one that bills least at Anthropic's prices; presets within 1% of
 *    it bill the same, and then the default preset (safeguard) wins where it is among them, else
 *    the one listed first.
 *
 * Continuity comes first because what a compaction loses is paid for later, and dearly: an agent
 * that lost a file name or the task reads, asks or redoes it, and a compaction that kept less
 * costs turns (and tokens) the replay does not see; among presets that keep as much, the cheaper
 * one is simply better. A point of tolerance keeps a difference of one identifier in a hundred
 * from deciding; below that the figures are noise of where the cut points fell.
 */

/** The figures of one preset the rule reads (a `PresetComparison`'s). */
export interface RankedPreset {
  readonly preset: string;
  readonly compactions: number;
  readonly billed: { readonly anthropic: number };
  readonly keptNext: number | null;
  readonly longMemory: number | null;
}

export interface Recommendation {
  readonly preset: string;
  /** Why, in one sentence, starting lower-case (printed after "Recommended  <preset>: "). */
  readonly why: string;
}

/** Continuity within this share of the best (one point) keeps as much. */
export const CONTINUITY_TOLERANCE = 0.01;
/** Billed input within this share of the least bills the same. */
export const COST_TOLERANCE = 0.01;
/** The preset a tie goes to: the config's default. */
export const DEFAULT_PRESET = "safeguard";

/** The rule in one paragraph, for `compare --help` (cli/README.md says the same). */
export const RECOMMENDATION_RULE =
  "How it recommends: what the context keeps first, then what it costs. Of the presets whose 'kept next' is within 1 point of the best, it keeps those whose 'long memory' is within 1 point of the best of them, and of those recommends the one that bills least. Presets within 1% of each other bill the same: then safeguard, the default, where it is among them, else the one listed first. Keeping comes first because an agent that lost a name it needs reads, asks or redoes work, which costs more than the input saved.";

/** The preset to use (see the file's comment), or null with nothing replayed. */
export function recommend(presets: readonly RankedPreset[]): Recommendation | null {
  const [only] = presets;
  if (only === undefined) return null;
  if (presets.length === 1) return { preset: only.preset, why: "it is the only preset replayed (--presets names the ones to compare)" };

  const keptNext = keepingMost(presets, (p) => p.keptNext);
  const keeping = keepingMost(keptNext, (p) => p.longMemory);
  const least = Math.min(...keeping.map(billed));
  const sameCost = keeping.filter((p) => billsSame(billed(p), least));
  const chosen = sameCost.find((p) => p.preset === DEFAULT_PRESET) ?? (sameCost[0] as RankedPreset);
  const tie = sameCost.length > 1 ? (chosen.preset === DEFAULT_PRESET ? "the tie goes to the default" : "the tie goes to the one listed first") : null;
  const alike = sameCost.filter((p) => p !== chosen).map((p) => p.preset);
  const also = tie === null ? "" : `; ${alike.join(", ")} bill${alike.length === 1 ? "s" : ""} as little, and ${tie}`;

  if (keeping.length === presets.length) {
    const keeps = presets.every((p) => p.compactions === 0)
      ? "no preset compacted, so all send the same requests"
      : presets.some((p) => p.keptNext !== null || p.longMemory !== null)
        ? "the presets keep as much (within a point)"
        : "nothing the agent needed was measured";
    if (sameCost.length === presets.length) return { preset: chosen.preset, why: `${keeps} and bill the same (within 1%); ${tie}` };
    const next = Math.min(...presets.filter((p) => !sameCost.includes(p)).map(billed));
    return { preset: chosen.preset, why: `${keeps}; it bills least, ${percentLess(billed(chosen), next)} less than the next${also}` };
  }

  // Some keep less: name the cheapest of them, and what its saving costs in continuity.
  // Cheaper by more than 1%: within that it bills the same, and keeping less buys nothing.
  const cheaper = presets.filter((p) => !keeping.includes(p) && !billsSame(billed(chosen), billed(p)));
  if (cheaper.length === 0) return { preset: chosen.preset, why: `it keeps the most and bills least${also}` };
  const cheapest = cheaper.reduce((a, b) => (billed(b) < billed(a) ? b : a));
  const [lost, measure] = keptNext.includes(cheapest) ? [points(chosen.longMemory, cheapest.longMemory), "long memory"] : [points(chosen.keptNext, cheapest.keptNext), "of what the agent needed next"];
  return { preset: chosen.preset, why: `it keeps the most; ${cheapest.preset} bills ${percentLess(billed(cheapest), billed(chosen))} less but keeps ${lost} points less ${measure}` };
}

const billed = (p: RankedPreset): number => p.billed.anthropic;
const billsSame = (cost: number, least: number): boolean => cost <= least * (1 + COST_TOLERANCE);

/** The presets within a point of the best by `share`; all of them when no preset was measured. */
function keepingMost<P extends RankedPreset>(presets: readonly P[], share: (p: P) => number | null): P[] {
  const shares = presets.map(share).filter((value): value is number => value !== null);
  if (shares.length === 0) return [...presets];
  const best = Math.max(...shares);
  // A hair of slack so that 98.0% against 99.0% (a point, in floating point) counts as within.
  return presets.filter((p) => (share(p) ?? 0) >= best - CONTINUITY_TOLERANCE - 1e-9);
}

/** How much less `low` is than `high`, as a whole percentage of `high`. */
const percentLess = (low: number, high: number): string => `${Math.round(((high - low) / high) * 100)}%`;
/** The difference in points of two shares as the table shows them (rounded to a tenth first, so it matches the columns). */
const points = (high: number | null, low: number | null): string => ((Math.round((high ?? 0) * 1000) - Math.round((low ?? 0) * 1000)) / 10).toFixed(1);
