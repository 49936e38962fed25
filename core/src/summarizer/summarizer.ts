import { CompactionError, ErrorCodes } from "../errors.js";
import type { MessageFacts } from "../messages/adapter.js";
import type { TokenCounter } from "../tokens/token-counter.js";

/** What a summarizer is asked to do. Messages arrive as facts, so any message format works. */
export interface SummarizeRequest {
  /** The messages to summarise, oldest first. */
  readonly messages: readonly MessageFacts[];
  /** The summary from the previous compaction, to be updated rather than summarised again. */
  readonly previousSummary?: string;
  /** The user's focus instruction (`/compact <focus>`). */
  readonly focus?: string;
  /** The summary must not be longer than this, counted with `counter`. */
  readonly maxTokens: number;
  readonly counter: TokenCounter;
  /**
   * `history`: the older conversation. `turnPrefix`: the early part of a turn too large to keep
   * whole (its later part stays verbatim).
   */
  readonly kind: "history" | "turnPrefix";
  readonly signal?: AbortSignal;
}

export interface Summarizer {
  readonly name: string;
  /** Resolves to the summary text; rejects on failure (the caller keeps the history as it was). */
  summarize(request: SummarizeRequest): Promise<string>;
}

/** The package of the summarizer that needs no model and no key, named where none is installed. */
export const EXTRACTIVE_SUMMARIZER_PACKAGE = "@compaction/plugin-summarizer-extractive";

/** The error of a summary asked for where no summarizer is installed; `plugin` is the one that asked. */
export function summarizerMissing(plugin?: string): CompactionError {
  const asker = plugin === undefined ? "A summary was asked for" : `Plugin '${plugin}' asked for a summary`;
  return new CompactionError(
    ErrorCodes.SUMMARIZER_MISSING,
    `${asker}, but this compactor has no summarizer: no summarizer plugin was applied and none was passed to new Compactor().`,
    {
      ...(plugin === undefined ? {} : { plugin }),
      hint: `Install ${EXTRACTIVE_SUMMARIZER_PACKAGE} (no model, no API key) and add summarizerExtractive() to the plugins, use a built-in preset (each lists it), or apply a model summarizer plugin (@compaction/plugin-summarizer-openai, -anthropic, -ai-sdk). Nothing was changed.`,
    },
  );
}

/**
 * The stand-in of a compactor with no summarizer: every summary it is asked for fails with
 * COMPACTION_SUMMARIZER_MISSING, saying which packages install one. The core ships no strategy,
 * so it never writes a summary of its own.
 */
export const missingSummarizer: Summarizer = Object.freeze({
  name: "none",
  summarize: (): Promise<string> => Promise.reject(summarizerMissing()),
});
