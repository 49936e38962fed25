/**
 * A cut divides the working set in two: messages before `firstKeptIndex` are compacted
 * (summarised, evicted or noted), messages from it on are kept verbatim. The core checks every
 * cut a plugin proposes (see check-cut.ts) before anything is summarised.
 */
export interface Cut {
  /** Index (in the run's working set) of the first message kept verbatim; `length` keeps none. */
  readonly firstKeptIndex: number;
  /** The layer or step that chose the cut, e.g. `summarize`, `full`, `evict`. */
  readonly layer?: string;
  /** A short human-readable reason, shown in warnings and history. */
  readonly reason?: string;
}

/** A cut after the core's checks and repairs. */
export interface CheckedCut extends Cut {
  readonly firstKeptIndex: number;
  /** Indices before the cut kept anyway: the system prompt, pinned messages, and their tool partners. */
  readonly preservedIndices: readonly number[];
  /** Indices before the cut that are compacted (everything before it that is not preserved). */
  readonly compactedIndices: readonly number[];
  /** True when the first kept message is not the start of its turn. */
  readonly isSplitTurn: boolean;
  /** Index of the user message that starts the split turn; -1 when the turn is not split. */
  readonly turnStartIndex: number;
  /** Tokens of the preserved and kept messages. */
  readonly keptTokens: number;
  /** Tokens of the compacted messages. */
  readonly compactedTokens: number;
  /** Name of the plugin whose `selectCut` tap returned the cut. */
  readonly selectedBy: string;
  /** What the core changed to make the cut valid, one sentence each. */
  readonly repairs: readonly string[];
}
