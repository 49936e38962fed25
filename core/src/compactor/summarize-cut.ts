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

/** What joins a split turn's two summaries: the history summary, this, then the turn prefix's. */
export const SPLIT_TURN_SEPARATOR = `\n\n---\n\n${SPLIT_TURN_HEADING}\n\n`;

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
  const lengths = summaryLengths({
    maxTokens: requested,
    turnPrefixMaxTokens: requestedPrefix,
    isSplitTurn: prefix.length > 0,
    separatorTokens: prefix.length > 0 ? run.countText(SPLIT_TURN_SEPARATOR) : 0,
    available: room,
  });
  // Not even one token per part: each part gets one, and the summarizer fits what it can.
  const historyMax = lengths?.history ?? 1;
  const prefixMax = lengths?.turnPrefix ?? 1;
  if (historyMax < requested) {
    run.warn(`The summary was limited to ${room} tokens: that is what the kept messages leave of the budget of ${run.budget}.`);
  }
  // A turn split again (its request kept ahead of the previous summary): the previous summary's
  // history part stands for the history, its split-turn part is updated with the turn's new messages.
  const previous: { history: string | undefined; turnPrefix: string | undefined } = run.previousSummaryInTurn()
    ? splitTurnSummary(run.previousSummary ?? "")
    : { history: run.previousSummary, turnPrefix: undefined };
  if (previous.history !== run.previousSummary) run.setPreviousSummary(previous.history ?? "");
  const historyText =
    history.length === 0 ? (previous.history ?? "") : await summarizeInChunks(run, history, { ...options, maxTokens: historyMax });
  if (history.length > 0) requireText(run, historyText, "history");
  if (prefix.length === 0) return historyText;
  const prefixText = await run.summarize(prefix, {
    kind: "turnPrefix",
    maxTokens: prefixMax,
    ...(previous.turnPrefix !== undefined ? { previousSummary: previous.turnPrefix } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  });
  requireText(run, prefixText, "turn prefix");
  return historyText.trim() === "" ? prefixText : `${historyText}${SPLIT_TURN_SEPARATOR}${prefixText}`;
}

/**
 * The two parts of a summary written inside the turn it split: the history summary and, after
 * `SPLIT_TURN_SEPARATOR`, the split turn's. Without the separator (nothing came before the turn)
 * it is all the turn's.
 */
export function splitTurnSummary(text: string): { history: string; turnPrefix: string } {
  const at = text.lastIndexOf(SPLIT_TURN_SEPARATOR);
  if (at < 0) return { history: "", turnPrefix: text };
  return { history: text.slice(0, at), turnPrefix: text.slice(at + SPLIT_TURN_SEPARATOR.length) };
}

/**
 * Tokens the budget leaves for the summary's text: the budget less what the cut keeps verbatim,
 * less what the summary message's own wrapping costs in this message format. 0 or less when the
 * kept messages leave nothing. When they leave less than `MIN_SUMMARY_ROOM`, the core first
 * shrinks them to make it (`CompactionRun.summaryRoomLeft`).
 */
export function summaryRoomLeft<T>(run: CompactionRun<T>): number {
  return run.summaryRoomLeft();
}

/** `summaryRoomLeft`, at least 1: what a summary may take. */
export function summaryRoom<T>(run: CompactionRun<T>): number {
  return Math.max(1, summaryRoomLeft(run));
}

export interface SummaryLengthsInput {
  /** The wanted length of the history summary. */
  readonly maxTokens: number;
  /** The wanted length of a split turn's summary. */
  readonly turnPrefixMaxTokens: number;
  readonly isSplitTurn: boolean;
  /** Tokens of the separator between the two parts (counted once). */
  readonly separatorTokens: number;
  /** Tokens the budget leaves for the summary's text (`summaryRoomLeft`). */
  readonly available: number;
}

export interface SummaryLengths {
  readonly history: number;
  readonly turnPrefix: number;
  /** The most the whole summary may take: both parts and the separator of a split turn. */
  readonly total: number;
  /** True when the wanted lengths were cut to fit `available`. */
  readonly shortened: boolean;
}

/**
 * How long each part of a summary may be: the wanted lengths when they fit `available`; else a
 * split turn's two parts share it in proportion to what was wanted for each. `undefined` when not
 * even one token per part fits.
 */
export function summaryLengths(input: SummaryLengthsInput): SummaryLengths | undefined {
  const { maxTokens, turnPrefixMaxTokens, isSplitTurn, separatorTokens, available } = input;
  const wanted = maxTokens + (isSplitTurn ? turnPrefixMaxTokens + separatorTokens : 0);
  if (wanted <= available) return { history: maxTokens, turnPrefix: turnPrefixMaxTokens, total: wanted, shortened: false };
  if (!isSplitTurn) {
    return available >= 1 ? { history: available, turnPrefix: turnPrefixMaxTokens, total: available, shortened: true } : undefined;
  }
  const room = available - separatorTokens;
  if (room < 2) return undefined;
  const turnPrefix = Math.max(1, Math.floor((turnPrefixMaxTokens * room) / (maxTokens + turnPrefixMaxTokens)));
  const history = room - turnPrefix;
  return { history, turnPrefix, total: available, shortened: true };
}

/** A summarizer that answers with nothing for messages that exist has failed: never drop them for a blank summary. */
function requireText<T>(run: CompactionRun<T>, text: string, part: string): void {
  if (text.trim() !== "") return;
  throw new CompactionError(
    ErrorCodes.SUMMARIZER_FAILED,
    `Summarizer '${run.summarizer.name}' returned an empty ${part} summary; nothing was changed.`,
    { plugin: run.plugin, hint: "Check the summarizer (a model may have answered with no text), or try again." },
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
