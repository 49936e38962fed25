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
  const historyText =
    history.length === 0
      ? (run.previousSummary ?? "")
      : await summarizeInChunks(run, history, options);
  if (prefix.length === 0) return historyText;
  const maxTokens = options.turnPrefixMaxTokens ?? Math.max(1, Math.floor((options.maxTokens ?? run.summaryMaxTokens) / 2));
  const prefixText = await run.summarize(prefix, {
    kind: "turnPrefix",
    maxTokens,
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  });
  return historyText === "" ? prefixText : `${historyText}\n\n---\n\n${SPLIT_TURN_HEADING}\n\n${prefixText}`;
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
