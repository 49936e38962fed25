/** Where safeguard cuts: the newest messages within a token allowance, at a turn boundary when that costs little. */
import { type Cut, type MessageView, findCutPoint } from "@compaction/core";

export interface ChooseCutOptions {
  /** Most tokens of the newest messages kept verbatim. */
  readonly keepRecentTokens: number;
  /**
   * Largest share (0..1) of the verbatim tokens the cut may give up to start at a turn boundary
   * instead of inside a turn. 0 never moves the cut; 1 always moves it to the next turn start.
   */
  readonly maxTurnBoundaryLoss: number;
  /**
   * Fewest verbatim tokens a move to a turn boundary may leave (the run's least kept part): a move
   * that would keep less splits the turn instead, and a suffix already below it is not moved.
   * Default 0.
   */
  readonly minKeptTokens?: number;
}

/** The `layer` safeguard's cuts carry (shown in the compaction event). */
export const SAFEGUARD_LAYER = "summarize";

/**
 * The cut safeguard proposes, or `undefined` when nothing is older than `keepRecentTokens` (or
 * no message can start the kept part).
 *
 * Starts from the largest suffix that fits (`findCutPoint`). When that suffix begins inside a
 * turn, the cut moves to the next turn's start if that gives up at most `maxTurnBoundaryLoss`
 * of the suffix's tokens and keeps at least `minKeptTokens`, so whole turns are kept. Otherwise
 * (or when the suffix begins inside the last turn) the turn is split; the core reports it and its
 * early part is summarised apart.
 */
export function chooseCut(view: MessageView, options: ChooseCutOptions): Cut | undefined {
  const { facts, tokens } = view;
  const found = findCutPoint(view, { keepRecentTokens: options.keepRecentTokens }).firstKeptIndex;
  if (found <= 0 || found >= facts.length) return undefined;
  if (facts[found]?.kind === "user") return wholeTurns(found);
  let kept = 0;
  for (let i = found; i < facts.length; i++) kept += tokens[i] ?? 0;
  let given = 0;
  for (let i = found; i < facts.length; i++) {
    if (facts[i]?.kind === "user") {
      if (given <= options.maxTurnBoundaryLoss * kept && kept - given >= Math.min(options.minKeptTokens ?? 0, kept)) return wholeTurns(i);
      break;
    }
    given += tokens[i] ?? 0;
  }
  return {
    firstKeptIndex: found,
    layer: SAFEGUARD_LAYER,
    reason: "the turn is split: its early part is summarised, the rest kept",
  };
}

function wholeTurns(firstKeptIndex: number): Cut {
  return { firstKeptIndex, layer: SAFEGUARD_LAYER, reason: "kept the newest whole turns" };
}
