/**
 * The usable window: what the shares in thresholds and targets are shares of. A request can hold
 * at most the context window less the reserve for the reply; what a host holds beyond that is
 * shrunk when sent, and a shrunk form changes with every message appended, so every request
 * misses the provider's prompt cache. So a share of "the window" is a share of the window only
 * while the reserve leaves at least `USABLE_SHARE` of it; with a larger reserve (a 32k or 64k
 * model and the default 16,384), the shares apply to `(window - reserve) / USABLE_SHARE`, and
 * every threshold at or below `USABLE_SHARE` (the presets' 80% and 90%) is crossed before the
 * context outgrows what can be sent.
 */

/** The highest share of the usable window that still fits the window less the reserve. */
export const USABLE_SHARE = 0.9;

/**
 * The share of the auto-compaction trigger a compaction should leave at most, so that the next
 * one is many turns away (each compaction costs a cache miss of the whole request): strategies
 * that can choose how much they keep (safeguard, sliding-window, rolling's low-water mark) keep
 * within it (`CompactionRun.targetTokens`). Measured on the real transcripts (`npm run bench`):
 * 0.5 left the agent less of what it used next than the presets kept before they compacted
 * early (up to 1.6 points in a loop); 0.6 keeps it, for 2-13% more billed input at 32k and 64k.
 */
export const COMPACTED_SHARE = 0.6;

/**
 * The share for a context larger than the whole window (a switch to a smaller model, a session
 * opened at a smaller window, one turn that outgrew the window): that compaction is not one of a
 * host's regular ones, and the newest turns hold most of what the agent uses next; at 0.6 the
 * presets kept less of it than plain truncation to half the window (measured: 74-75% against 77%
 * on claude-code-deep-manifest at 32k). 0.75 of the trigger is half the window at the default
 * threshold and reserve.
 */
export const OVERFLOW_COMPACTED_SHARE = 0.75;

/**
 * The share of the context window a compaction keeps verbatim of the newest messages at least,
 * where cut points and the budget allow (`CompactionRun.minKeptTokens`): the newest turns hold
 * most of what the agent uses next, and a compaction that keeps fewer of them than truncation
 * would (a turn boundary far back, a summary's room taken from a small target, a preserved
 * request) loses them for what a summary of them says. An eighth stays below what the built-in
 * strategies keep by their own rules where nothing else takes the room (16,000 tokens at 128k
 * against safeguard's 20,000; 1,000 at 8k, a quarter to a third of the run's target), so it
 * binds only where something does.
 */
export const MIN_KEPT_SHARE = 1 / 8;

/** See the file's comment: the context window, or less when the reserve takes over a tenth of it. */
export function usableWindow(contextWindow: number, reserveTokens: number): number {
  return Math.min(contextWindow, (contextWindow - reserveTokens) / USABLE_SHARE);
}

/** The size, as the provider counts it, past which a host compacts on its own: `threshold` of the usable window. */
export function autoCompactTokens(contextWindow: number, reserveTokens: number, threshold: number): number {
  return Math.floor(threshold * usableWindow(contextWindow, reserveTokens));
}

/**
 * The most a compaction should leave, as the provider counts it: `COMPACTED_SHARE` of the
 * auto-compaction trigger, or `OVERFLOW_COMPACTED_SHARE` when the context being compacted
 * (`contextTokens`, as the provider counts it) is larger than the context window.
 */
export function compactedTargetTokens(contextWindow: number, reserveTokens: number, threshold: number, contextTokens = 0): number {
  const share = contextTokens > contextWindow ? OVERFLOW_COMPACTED_SHARE : COMPACTED_SHARE;
  return Math.floor(share * autoCompactTokens(contextWindow, reserveTokens, threshold));
}
