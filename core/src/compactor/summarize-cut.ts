import { CompactionError, ErrorCodes } from "../errors.js";
import type { CompactionRun } from "./run.js";

export interface SummarizeCutOptions {
  /** Longest history summary, in tokens. Default: the compactor's `summaryMaxTokens`. */
  readonly maxTokens?: number;
  /** Longest summary of a split turn's early part. Default: half of `maxTokens`. */
  readonly turnPrefixMaxTokens?: number;
  /**
   * Most tokens of conversation handed to the summarizer at once. Longer histories are
   * summarised in chunks, oldest first, each chunk updating the summary of the ones before.
   * Default: no limit.
   */
  readonly chunkTokens?: number;
  /** Cancels the summarizer's requests (e.g. a plugin's timeout), besides the run's own signal. */
  readonly signal?: AbortSignal;
  /** Tokens the caller will add to the summary afterwards (e.g. a prefix), kept out of its room. */
  readonly reserveTokens?: number;
}

/** Separator pi-coding-agent uses between the history summary and a split turn's summary. */
export const SPLIT_TURN_HEADING = "**Turn Context (split turn):**";

/**
 * The summary of a checked cut, as pi-coding-agent writes it: the history before the cut
 * (updating the previous summary, never summarising it again), and for a split turn a separate
 * summary of the turn's early part. Rejects when the summarizer does; callers let the rejection
 * propagate so the compaction fails with the history untouched.
 */
export async function summarizeCut<T>(run: CompactionRun<T>, options: SummarizeCutOptions = {}): Promise<string> {
  const history = run.historyMessages();
  const prefix = run.turnPrefixMessages();
  const room = Math.max(1, summaryRoom(run) - (options.reserveTokens ?? 0));
  const requested = options.maxTokens ?? run.summaryMaxTokens;
  const requestedPrefix = options.turnPrefixMaxTokens ?? Math.max(1, Math.floor(requested / 2));
  let historyMax = Math.min(requested, room);
  let prefixMax = Math.min(requestedPrefix, room);
  if (prefix.length > 0 && requested + requestedPrefix > room) {
    // A split turn's two summaries share the room in proportion to what was asked for each.
    historyMax = Math.max(1, Math.floor((room * requested) / (requested + requestedPrefix)));
    prefixMax = Math.max(1, room - historyMax);
  }
  if (historyMax < requested) {
    run.warn(`The summary was limited to ${room} tokens: that is what the kept messages leave of the budget of ${run.budget}.`);
  }
  const historyText =
    history.length === 0 ? (run.previousSummary ?? "") : await summarizeInChunks(run, history, { ...options, maxTokens: historyMax });
  if (history.length > 0) requireText(run, historyText, "history");
  if (prefix.length === 0) return historyText;
  const prefixText = await run.summarize(prefix, {
    kind: "turnPrefix",
    maxTokens: prefixMax,
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  });
  requireText(run, prefixText, "turn prefix");
  return historyText.trim() === "" ? prefixText : `${historyText}\n\n---\n\n${SPLIT_TURN_HEADING}\n\n${prefixText}`;
}

/**
 * Tokens a summary may take: the budget less what the cut keeps verbatim, less what the summary
 * message's own wrapping costs in this message format. At least 1.
 */
export function summaryRoom<T>(run: CompactionRun<T>): number {
  const kept = run.cut?.keptTokens ?? 0;
  return Math.max(1, run.budget - kept - run.summaryOverheadTokens);
}

/** A summarizer that answers with nothing for messages that exist has failed: never drop them for a blank summary. */
function requireText<T>(run: CompactionRun<T>, text: string, part: string): void {
  if (text.trim() !== "") return;
  throw new CompactionError(
    ErrorCodes.SUMMARIZER_FAILED,
    `Summarizer '${run.summarizer.name}' returned an empty ${part} summary; nothing was changed.`,
    { plugin: run.activePlugin, hint: "Check the summarizer (a model may have answered with no text), or try again." },
  );
}

/**
 * Summarises `messages` in chunks of at most `chunkTokens` (a message larger than that is a
 * chunk of its own), each chunk updating the summary so far, starting from the run's previous
 * summary.
 */
export async function summarizeInChunks<T>(
  run: CompactionRun<T>,
  messages: readonly T[],
  options: SummarizeCutOptions = {},
): Promise<string> {
  const limit = options.chunkTokens ?? Number.POSITIVE_INFINITY;
  let summary = run.previousSummary;
  let chunk: T[] = [];
  let chunkTokens = 0;
  const flush = async () => {
    if (chunk.length === 0) return;
    summary = await run.summarize(chunk, {
      ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
      ...(summary !== undefined ? { previousSummary: summary } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    });
    chunk = [];
    chunkTokens = 0;
  };
  for (const message of messages) {
    const tokens = run.tokensOf(message);
    if (chunk.length > 0 && chunkTokens + tokens > limit) await flush();
    chunk.push(message);
    chunkTokens += tokens;
  }
  await flush();
  return summary ?? "";
}
