/**
 * safeguard's `summarize` tap: the summarizer's text for the run's cut, completed with the file
 * lists and failed calls it lacks, within what the budget leaves. Every failure rejects, so the
 * compaction fails with the history untouched.
 */
import { CompactionError, type CompactionRun, ErrorCodes, summarizeCut, summaryLengths, summaryRoomLeft, type TokenCounter } from "@compaction/core";
import { completeSummary, listsTokens } from "./complete-summary.js";
import { collectFailedCalls } from "./failed-calls.js";
import { collectFileLists } from "./file-lists.js";
import { guardSummary } from "./guard-summary.js";

/** The configured summary lengths of one run, and the token costs around them. */
export interface SummarySizes {
  /** Longest history summary. */
  readonly maxTokens: number;
  /** Longest split-turn summary. */
  readonly turnPrefixMaxTokens: number;
  /** Tokens of the separator before a split turn's summary. */
  readonly separatorTokens: number;
}

export interface WriteSummaryOptions {
  readonly plugin: string;
  readonly sizes: SummarySizes;
  readonly chunkTokens: number;
  readonly timeoutMs: number;
  readonly counter: TokenCounter;
}

/**
 * Writes the summary. The summarizer is asked for a history summary shorter by the room the
 * lists need (at most half), so the completed summary keeps them and still fits. Rejects with
 * COMPACTION_SUMMARIZER_FAILED on failure, timeout or an empty summary, and with
 * COMPACTION_CUT_REFUSED when the kept messages leave the budget no room for a summary.
 */
export async function writeSummary(run: CompactionRun<unknown>, options: WriteSummaryOptions): Promise<string> {
  const { plugin, sizes, counter } = options;
  if (run.cut === null) {
    throw new CompactionError(ErrorCodes.PLUGIN_FAILED, `${plugin} was asked for a summary before a cut was selected.`, { plugin });
  }
  // Asking for the room first: the core may shrink the kept messages to make it, changing the cut.
  const available = summaryRoomLeft(run);
  const cut = run.cut;
  const lengths = summaryLengths({ ...sizes, isSplitTurn: cut.isSplitTurn, available });
  if (lengths === undefined) {
    throw new CompactionError(
      ErrorCodes.CUT_REFUSED,
      `The kept messages take ${cut.keptTokens} of the budget's ${run.budget} tokens, leaving no room for a summary; nothing was changed.`,
      { plugin, hint: "Lower keepRecentTokens, unpin messages, or raise the context window." },
    );
  }
  if (lengths.shortened) {
    run.warn(`The summary was limited to ${lengths.total} tokens to fit the budget of ${run.budget} tokens.`);
  }

  const compacted = run.compactedMessages().map((m) => run.factsOf(m));
  const lists = { files: collectFileLists(compacted), failed: collectFailedCalls(compacted) };
  const reserved = Math.min(listsTokens(lists, counter), Math.floor(lengths.history / 2));
  const summarizer = run.summarizer.name;
  const text = await guardSummary(
    (signal) =>
      summarizeCut(run, {
        maxTokens: Math.max(1, lengths.history - reserved),
        turnPrefixMaxTokens: lengths.turnPrefix,
        chunkTokens: options.chunkTokens,
        signal,
      }),
    { summarizer, plugin, timeoutMs: options.timeoutMs, signal: run.signal },
  );
  if (typeof text !== "string" || text.trim() === "") {
    throw new CompactionError(
      ErrorCodes.SUMMARIZER_FAILED,
      `Summarizer '${summarizer}' returned an empty summary for ${cut.compactedIndices.length} messages; the compaction was cancelled and the history left as it was.`,
      { plugin, hint: "Check the summarizer: it must resolve to the summary text." },
    );
  }

  const completed = completeSummary(text, lists, { maxTokens: lengths.total, counter });
  if (completed.leftOut > 0) {
    run.warn(
      `${completed.leftOut} file paths or failed tool calls the summary did not state were left out: they did not fit the summary's ${lengths.total} tokens.`,
    );
  }
  const tokens = counter.count(completed.text);
  if (tokens > lengths.total) {
    run.warn(`Summarizer '${summarizer}' wrote ${tokens} tokens, more than the ${lengths.total} asked for.`);
  }
  return completed.text;
}
