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
