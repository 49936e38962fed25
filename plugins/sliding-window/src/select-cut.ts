import { type Cut, type MessageView, checkCut, findCutPoint, lastUserIndex } from "@compaction/core";

/** The sliding window's cut, with what it keeps. */
export interface WindowCut extends Cut {
  /** Tokens of the messages from `firstKeptIndex` on. */
  readonly keptTokens: number;
  /**
   * True when the kept messages need more than `keepTokens`: the newest turn (from the last
   * user message) did not fit, and is kept whole anyway.
   */
  readonly overShare: boolean;
}

/**
 * Tokens the newest messages may hold: `keepRatio` of the context window, rounded down, and
 * never more than `room` (the run's budget less what the core preserves anyway, see
 * `preservedTokens`), so a small budget shrinks the window instead of failing the run.
 */
export function keepTokensFor(contextWindow: number, room: number, keepRatio: number): number {
  return Math.max(0, Math.floor(Math.min(contextWindow * keepRatio, room)));
}

/**
 * Tokens of the messages the core keeps wherever the cut falls: system and pinned messages.
 * Counted whole even when some of them end up in the kept suffix, so the estimate errs on the
 * safe side.
 */
export function preservedTokens(view: MessageView): number {
  let total = 0;
  view.facts.forEach((f, i) => {
    if (f.kind === "system" || f.pinned) total += view.tokens[i] ?? 0;
  });
  return total;
}

/**
 * The sliding window's cut over a working set:
 * - keep the newest contiguous messages whose tokens fit `keepTokens`, starting at a valid cut
 *   point (never a tool result); a large message stops the window, it is never skipped to take
 *   an older, smaller one (core's `findCutPoint`);
 * - the last user message and everything after it are always kept: when the window does not
 *   reach back to it (the newest turn is larger than `keepTokens`), the cut moves back to it,
 *   and the kept part is then larger than `keepTokens` (the core's budget check still applies);
 * - returns `undefined` when the cut would compact nothing but the system prompt, pinned
 *   messages (with their tool partners) and earlier summaries.
 */
export function selectWindowCut(view: MessageView, keepTokens: number): WindowCut | undefined {
  const found = findCutPoint(view, { keepRecentTokens: keepTokens }).firstKeptIndex;
  const lastUser = lastUserIndex(view.facts);
  const firstKeptIndex = lastUser >= 0 && found > lastUser ? lastUser : found;
  if (!compactsSomething(view, firstKeptIndex)) return undefined;
  let keptTokens = 0;
  for (let i = firstKeptIndex; i < view.tokens.length; i++) keptTokens += view.tokens[i] ?? 0;
  return { firstKeptIndex, keptTokens, overShare: keptTokens > keepTokens };
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
