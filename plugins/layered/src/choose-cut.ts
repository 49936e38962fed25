import { checkCut, type CheckedCut, findCutPoint, keptRoom, lastUserIndex, type MessageView } from "@compaction/core";

/** Room the cut must leave: the kept part plus a summary of `summaryTokens` must fit `budget`. */
export interface CutRoom {
  /**
   * The most the kept part and the summary may hold: the run's budget (context window minus
   * reserve), or the run's target when the context is over it (`keepLimit`).
   */
  readonly budget: number;
  /** What layer 3 keeps of a last turn it splits, with the summary: the run's target when the context is over it. Default `budget`. */
  readonly splitBudget?: number;
  /** Tokens kept free for the summary. */
  readonly summaryTokens: number;
  /** Plugin name, for the core's cut check messages. */
  readonly plugin: string;
}

/** A cut chosen by layer 3. */
export interface FullCut {
  readonly firstKeptIndex: number;
  /** True when the last turn did not fit (or was all there was), so only its newest part is kept. */
  readonly splitLastTurn: boolean;
}

/**
 * Layer 2: keeps about `protectTokens` of the newest messages verbatim (whole messages, never
 * starting at a tool result). When the preserved messages, the kept part and the summary would
 * not fit `room.budget` (the budget, or the run's target), keeps only as much as fits. `undefined` when the cut would compact nothing.
 */
export function summarizeLayerCut(view: MessageView, protectTokens: number, room: CutRoom): number | undefined {
  let first = findCutPoint(view, { keepRecentTokens: protectTokens }).firstKeptIndex;
  let cut = check(view, first, room);
  if (!fits(cut, room)) {
    first = findCutPoint(view, { keepRecentTokens: keptRoom(view, { budget: room.budget, summaryTokens: room.summaryTokens }) }).firstKeptIndex;
    cut = check(view, first, room);
  }
  return cut.compactedIndices.length > 0 ? first : undefined;
}

/**
 * Layer 3: summarises what it must and keeps the newest turns that fit. It keeps what layer 2
 * keeps (about `protectTokens` of the newest messages, no more than fits beside the summary) and,
 * when the last turn is longer than that and fits whole, the whole last turn; everything older,
 * except system and pinned messages (which the core preserves), is summarised. Keeping only the
 * last turn threw away the room a compaction far over the window still has: a 131k-token history
 * at a 64k window became a summary and one user message, where the agent went on to use names
 * from the turns just before it. When the last turn alone does not fit, or nothing precedes it
 * to summarise, keeps only its newest part: at most `protectTokens`, and no more than fits
 * `room.splitBudget` (the turn goes on after the compaction, and needs the room).
 * "Fits" is within `room.budget`: the budget, or the run's target for a context over it. A
 * conversation without a user message has no turns; its newest message that may start a cut
 * stands in for the last turn. `undefined` when even that would compact nothing.
 */
export function fullLayerCut(view: MessageView, protectTokens: number, room: CutRoom): FullCut | undefined {
  const lastUser = lastUserIndex(view.facts);
  const turnStart = lastUser >= 0 ? lastUser : findCutPoint(view, { keepRecentTokens: 0 }).firstKeptIndex;
  const keep = Math.min(protectTokens, keptRoom(view, { budget: room.budget, summaryTokens: room.summaryTokens }));
  const whole = check(view, turnStart, room);
  if (whole.compactedIndices.length > 0 && fits(whole, room)) {
    const recent = findCutPoint(view, { keepRecentTokens: keep }).firstKeptIndex;
    const newest = recent < turnStart ? check(view, recent, room) : undefined;
    const keepsMore = newest !== undefined && newest.compactedIndices.length > 0 && fits(newest, room);
    return { firstKeptIndex: keepsMore ? recent : turnStart, splitLastTurn: false };
  }
  const splitKeep = Math.min(protectTokens, keptRoom(view, { budget: room.splitBudget ?? room.budget, summaryTokens: room.summaryTokens }));
  const inside = findCutPoint(view, { keepRecentTokens: splitKeep, startIndex: Math.min(turnStart + 1, view.facts.length) });
  if (check(view, inside.firstKeptIndex, room).compactedIndices.length === 0) return undefined;
  return { firstKeptIndex: inside.firstKeptIndex, splitLastTurn: true };
}

function check(view: MessageView, firstKeptIndex: number, room: CutRoom): CheckedCut {
  return checkCut(view, { firstKeptIndex }, { plugin: room.plugin, budget: Number.POSITIVE_INFINITY });
}

function fits(cut: CheckedCut, room: CutRoom): boolean {
  return cut.keptTokens + room.summaryTokens <= room.budget;
}
