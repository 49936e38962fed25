import { type Cut, type MessageFacts, type MessageView, checkCut, findCutPoint, lastUserIndex } from "@compaction/core";

/** The sliding window's cut, with what it keeps. */
export interface WindowCut extends Cut {
  /** Tokens of the messages from `firstKeptIndex` on. */
  readonly keptTokens: number;
  /**
   * True when the kept messages need more than `keepTokens`: the newest turn (from the last
   * user message) did not fit, and is kept whole anyway.
   */
  readonly overShare: boolean;
  /**
   * True when the newest turn, kept whole, needs more than `maxKeptTokens` (what the budget
   * leaves beside the summary). It is kept from its user message anyway, and the core fits it:
   * a turn larger than the budget is split (its user message kept ahead of the summary), else
   * its largest parts are shrunk to head and tail.
   */
  readonly overRoom: boolean;
}

/**
 * Tokens the newest messages may hold, in our count: `keepRatio` of the context window (a size
 * as the provider counts it) over `messageRatio` (the run's calibrated ratio,
 * `CompactionRun.messageRatio`; default 1), rounded down, and never more than `room` (the run's
 * budget less what the core always keeps, the core's `alwaysKept`), so a small budget shrinks
 * the window instead of failing the run.
 */
export function keepTokensFor(contextWindow: number, room: number, keepRatio: number, messageRatio = 1): number {
  return Math.max(0, Math.floor(Math.min((contextWindow * keepRatio) / messageRatio, room)));
}

/** Tokens of the earlier summaries in the working set (the next summary takes them in). */
export function summaryTokens(view: MessageView): number {
  return tokensWhere(view, (f) => f.kind === "summary");
}

/** System and pinned messages: the core keeps them wherever the cut falls. */
function isPreserved(f: MessageFacts): boolean {
  return f.kind === "system" || f.pinned;
}

/** Tokens of the messages from `from` on whose facts pass `counts`. */
function tokensWhere(view: MessageView, counts: (f: MessageFacts) => boolean, from = 0): number {
  let total = 0;
  for (let i = from; i < view.tokens.length; i++) {
    const facts = view.facts[i];
    if (facts !== undefined && counts(facts)) total += view.tokens[i] ?? 0;
  }
  return total;
}

/**
 * The sliding window's cut over a working set:
 * - keep the newest contiguous messages whose tokens fit `keepTokens`, starting at a valid cut
 *   point (never a tool result); a large message stops the window, it is never skipped to take
 *   an older, smaller one (core's `findCutPoint`);
 * - the last user message and everything after it are kept whole: when the window does not
 *   reach back to it (the newest turn is larger than `keepTokens`), the cut moves back to it,
 *   and the kept part is then larger than `keepTokens`; when it is also more than
 *   `maxKeptTokens` (what the run's budget leaves for kept messages: one long agent turn of
 *   many tool calls), `overRoom` says so and the core shrinks the turn's largest parts;
 * - returns `undefined` when the cut would compact nothing but the system prompt, pinned
 *   messages (with their tool partners) and earlier summaries.
 */
export function selectWindowCut(view: MessageView, keepTokens: number, maxKeptTokens: number = Number.POSITIVE_INFINITY): WindowCut | undefined {
  const found = findCutPoint(view, { keepRecentTokens: keepTokens }).firstKeptIndex;
  const lastUser = lastUserIndex(view.facts);
  const wholeTurn = lastUser >= 0 && found > lastUser;
  const firstKeptIndex = wholeTurn ? lastUser : found;
  if (!compactsSomething(view, firstKeptIndex)) return undefined;
  const keptTokens = tokensWhere(view, () => true, firstKeptIndex);
  // System and pinned messages are kept wherever the cut falls (and counted outside maxKeptTokens).
  const overRoom = wholeTurn && tokensWhere(view, (f) => !isPreserved(f), lastUser) > maxKeptTokens;
  return { firstKeptIndex, keptTokens, overShare: keptTokens > keepTokens, overRoom };
}

/**
 * True when a cut at `firstKeptIndex` would compact a message that is not an earlier summary
 * (the core preserves system and pinned messages and their tool partners itself).
 */
export function compactsSomething(view: MessageView, firstKeptIndex: number): boolean {
  if (firstKeptIndex <= 0) return false;
  const checked = checkCut(view, { firstKeptIndex }, { plugin: "sliding-window", budget: Number.POSITIVE_INFINITY });
  return checked.compactedIndices.some((i) => view.facts[i]?.kind !== "summary");
}
