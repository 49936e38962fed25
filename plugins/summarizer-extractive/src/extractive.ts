/**
 * The default summarizer: builds a structured markdown summary from MessageFacts alone, with
 * no model and no network. Deterministic: the same request gives byte-identical output.
 */
import {
  CompactionError,
  DEFAULT_SECTION_LIMITS,
  ErrorCodes,
  fitToBudget,
  FOCUS_TITLE,
  NOTHING_KEPT_TITLE,
  type SectionLimits,
  type Summarizer,
  type SummarizeRequest,
  type SummaryBlock,
} from "@compaction/core";
import { historyBlocks, turnPrefixBlocks } from "./blocks.js";
import { extractFacts } from "./extract.js";
import { focusMatcher } from "./keywords.js";
import { historyState } from "./merge.js";

/** Limits of the extractive summarizer; every one is optional. */
export interface ExtractiveSummarizerOptions {
  /** Most items per section (goal, constraints, progress, decisions, commands, failures, next steps). Default 20. */
  readonly maxItemsPerSection?: number;
  /** Most paths in each of Files/Read and Files/Modified. Default 50. */
  readonly maxFilesPerList?: number;
  /** Most entries under Identifiers (names, paths, the names declared in the code being changed). Default 64. */
  readonly maxIdentifiers?: number;
  /** Longest item in characters; longer ones are cut with "…". Default 300. */
  readonly maxItemChars?: number;
}

const SUMMARIZER_NAME = "extractive";

/** The limits used for every option left out (also what session-state export uses). */
export const EXTRACTIVE_DEFAULT_LIMITS: SectionLimits = DEFAULT_SECTION_LIMITS;

/** Shortest `maxItemChars` accepted: below this, clipped items could no longer be matched when merging. */
const MIN_ITEM_CHARS = 40;

/**
 * Creates the extractive summarizer (`name: "extractive"`).
 *
 * History summaries have the sections Goal, Constraints & Preferences, Progress (Done,
 * In Progress), Key Decisions, Files (Read, Modified), Commands & Tool Calls (Failed),
 * Identifiers and Next Steps, in that order; `previousSummary` is merged, not summarised again.
 * Turn-prefix summaries have Original Request, Early Progress and Context for Suffix.
 */
export function createExtractiveSummarizer(options: ExtractiveSummarizerOptions = {}): Summarizer {
  const limits = normaliseOptions(options);
  return {
    name: SUMMARIZER_NAME,
    async summarize(request: SummarizeRequest): Promise<string> {
      // The work is synchronous and fast (about 20 ms for 1,000 messages), so the signal is
      // checked before, between and after the two phases rather than inside them.
      throwIfAborted(request.signal);
      validateRequest(request);
      // Nothing to summarise: an empty answer, so callers notice instead of keeping bare headings.
      if (request.messages.length === 0 && !request.previousSummary?.trim()) return "";
      const extraction = extractFacts(request.messages, limits);
      throwIfAborted(request.signal);
      const matchesFocus = focusMatcher(request.focus);
      let blocks: SummaryBlock[];
      if (request.kind === "turnPrefix") {
        blocks = turnPrefixBlocks(extraction, request.focus, matchesFocus, limits);
      } else {
        blocks = historyBlocks(historyState(extraction, request.previousSummary), request.focus, matchesFocus, limits);
        if (!blocks.some((block) => block.items.length > 0 && block.heading !== `## ${FOCUS_TITLE}`)) {
          blocks = [...blocks, nothingKeptBlock(request.messages.length)];
        }
      }
      const summary = fitToBudget(blocks, request.maxTokens, request.counter);
      throwIfAborted(request.signal);
      return summary;
    },
  };
}

/** The note of a history summary whose messages held nothing to keep. */
function nothingKeptBlock(messages: number): SummaryBlock {
  const text = `${messages} ${messages === 1 ? "message" : "messages"} with no request, file change, command, decision or error to keep`;
  return { heading: `## ${NOTHING_KEPT_TITLE}`, style: "bullet", items: [{ text, rank: 1 }], optional: false };
}

function normaliseOptions(options: ExtractiveSummarizerOptions): SectionLimits {
  const read = (key: keyof ExtractiveSummarizerOptions, minimum: number): number => {
    const value = options[key];
    if (value === undefined) return EXTRACTIVE_DEFAULT_LIMITS[key];
    if (!Number.isInteger(value) || value < minimum) {
      throw new CompactionError(
        ErrorCodes.INPUT_INVALID,
        `Extractive summarizer option "${key}" must be an integer of at least ${minimum}, but found ${String(value)}.`,
        { path: `/${key}`, hint: `Pass a whole number >= ${minimum}, or leave "${key}" out to use ${EXTRACTIVE_DEFAULT_LIMITS[key]}.` },
      );
    }
    return value;
  };
  return {
    maxItemsPerSection: read("maxItemsPerSection", 1),
    maxFilesPerList: read("maxFilesPerList", 1),
    maxIdentifiers: read("maxIdentifiers", 0),
    maxItemChars: read("maxItemChars", MIN_ITEM_CHARS),
  };
}

function validateRequest(request: SummarizeRequest): void {
  if (!Array.isArray(request.messages)) {
    throw new CompactionError(
      ErrorCodes.INPUT_INVALID,
      `Extractive summarizer expected request.messages to be an array of MessageFacts, but found ${typeof request.messages}.`,
      { path: "/messages", hint: "Read each message's facts with a MessageAdapter (or FactsCache) and pass them in order." },
    );
  }
  if (typeof request.maxTokens !== "number" || Number.isNaN(request.maxTokens) || request.maxTokens < 0) {
    throw new CompactionError(
      ErrorCodes.INPUT_INVALID,
      `Extractive summarizer expected request.maxTokens to be a number >= 0, but found ${String(request.maxTokens)}.`,
      { path: "/maxTokens", hint: "Pass the token budget for the summary, e.g. 20% of the context window." },
    );
  }
  if (typeof request.counter?.count !== "function") {
    throw new CompactionError(
      ErrorCodes.INPUT_INVALID,
      "Extractive summarizer expected request.counter to be a TokenCounter with a count(text) method, but found none.",
      { path: "/counter", hint: "Pass createEstimateCounter() or a tiktoken counter." },
    );
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted !== true) return;
  throw new CompactionError(
    ErrorCodes.CANCELLED,
    "Extractive summarizer was cancelled: the request's AbortSignal is aborted, so no summary was written.",
    { cause: signal.reason, hint: "Nothing to fix unless the abort was unexpected; the history is unchanged." },
  );
}
