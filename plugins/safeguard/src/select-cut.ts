/** safeguard's `selectCut` tap: the cut within keepRecentTokens and what the budget leaves. */
import { type CompactionRun, type Cut, findTurnStartIndex, keptRoom, MIN_SUMMARY_ROOM, type MessageFacts } from "@compaction/core";
import { chooseCut } from "./choose-cut.js";
import type { SummarySizes } from "./write-summary.js";

/**
 * `chooseCut` within the tokens the budget leaves after the summary message (and, when the
 * turn is split, the split turn's summary) and the preserved messages. `keepRecentTokens` is a
 * size of messages as the provider counts them: the cut keeps `run.countedMessageTokens(keepRecentTokens)`
 * of our count (at the calibrated ratio, which leaves out the system prompt and tools), or, for a
 * context larger than the window (`run.overWindow`), up to what the target leaves when that is
 * more. Warns when less than keepRecentTokens fits.
 */
export function selectCut(
  run: CompactionRun<unknown>,
  options: { readonly keepRecentTokens: number; readonly maxTurnBoundaryLoss: number },
  sizes: SummarySizes,
): Cut | undefined {
  const { keepRecentTokens, maxTurnBoundaryLoss } = options;
  const setting = run.countedMessageTokens(keepRecentTokens);
  let summaryTokens = sizes.maxTokens + run.summaryOverheadTokens;
  // keepRecentTokens, but never more than the budget leaves after the summary and what the core
  // always keeps (system prompt, pinned messages and their tool partners), nor, for a context over
  // the run's target (0.6 of the auto-compaction threshold; 0.75 for a context larger than the
  // window), more than the target leaves: at a small window, keeping up to the budget would bring
  // the next compaction, and its cache miss, a few turns later. A context already within the
  // target is not cut for it.
  let total = 0;
  for (const tokens of run.view.tokens) total += tokens;
  const target = run.countedTokens(run.targetTokens);
  const limit = total > target ? Math.min(run.budget, target) : run.budget;
  // A context larger than the whole window (a smaller model, an overflow) keeps the newest
  // messages up to the target, not only keepRecentTokens: it is no regular compaction, and
  // truncation to the window would keep more of what the agent uses next (`run.overWindow`).
  const keepCounted = run.overWindow ? Math.max(setting, limit) : setting;
  // Never below the run's least kept part (the newest messages that fit in an eighth of the
  // window) where the budget has room for it beside the least summary: the target's room for a
  // summary of the usual length does not take it from the newest turns, and the summary is written
  // in what they leave (`summaryRoomLeft`). A keepRecentTokens below it stands (the default
  // 20,000 is below it above a 160k window), and so does what the setting itself allows.
  const least =
    setting < run.minKeptTokens ? 0 : Math.min(run.minKeptTokens, keptRoom(run.view, { budget: run.budget, summaryTokens: run.summaryOverheadTokens + MIN_SUMMARY_ROOM }));
  const roomFor = () => Math.min(keepCounted, keptRoom(run.view, { budget: limit, summaryTokens }));
  const choose = (keep: number) => chooseCut(run.view, { keepRecentTokens: keep, maxTurnBoundaryLoss, minKeptTokens: least });
  let room = roomFor();
  let cut = choose(Math.max(least, room));
  if (cut !== undefined && Math.max(least, room) < keepCounted && splitsTurn(run.view.facts, cut.firstKeptIndex)) {
    summaryTokens += sizes.turnPrefixMaxTokens + sizes.separatorTokens;
    room = roomFor();
    cut = choose(Math.max(least, room));
  }
  const keep = Math.max(least, room);
  if (keep < setting) {
    // Every figure in the warning is in the run's counter, as hosts say of warnings; the setting
    // itself is the provider's measure, and says so.
    const named = run.messageRatio > 1 ? `${keepRecentTokens} in the provider's measure, ${setting} in our count` : `${keepRecentTokens}`;
    const why =
      least > room
        ? `the newest messages in an eighth of the window (the summary, of up to ${summaryTokens} tokens, is written in what they leave of the budget of ${run.budget} tokens${limit < run.budget ? `, past the run's target of ${limit}` : ""})`
        : `to leave room for the summary (${summaryTokens} tokens) and the preserved messages ${limit < run.budget ? `within the run's target (${limit} tokens, so the next compaction is many turns away) ` : ""}in the budget of ${run.budget} tokens`;
    run.warn(`keepRecentTokens (${named}) was lowered to ${keep} for this run, ${least > room ? "keeping " : ""}${why}.`);
  }
  return cut;
}

/** True when the kept part would start inside a turn (after its user message). */
function splitsTurn(facts: readonly MessageFacts[], firstKeptIndex: number): boolean {
  if (facts[firstKeptIndex]?.kind === "user") return false;
  return findTurnStartIndex(facts, firstKeptIndex - 1) >= 0;
}
