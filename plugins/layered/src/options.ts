import { CompactionError, ErrorCodes } from "@compaction/core";

/**
 * The options of `layered`, as a draft-07 JSON Schema (copied into the core's config schema).
 * Thresholds are shares of the context window; token amounts are counted with the compactor's
 * token counter.
 */
export const LAYERED_OPTIONS_SCHEMA = {
  type: "object",
  additionalProperties: false,
  properties: {
    pruneThreshold: {
      description:
        "Layer 1 (prune) runs when the context is above this share of the window (and tool outputs exceed pruneMinToolTokens). In (0, 1], below summarizeThreshold.",
      type: "number",
      exclusiveMinimum: 0,
      maximum: 1,
      default: 0.8,
    },
    pruneMinToolTokens: {
      description: "Layer 1 runs only when the tool outputs in the context hold more than this many tokens.",
      type: "integer",
      minimum: 0,
      default: 50000,
    },
    pruneProtectTokens: {
      description:
        "Tool outputs within the newest this-many tokens of the context are never pruned (a message partly inside counts as inside).",
      type: "integer",
      minimum: 0,
      default: 40000,
    },
    pruneMinSavings: {
      description: "Pruning is applied only when it saves at least this many tokens; otherwise the outputs stay as they are.",
      type: "integer",
      minimum: 0,
      default: 20000,
    },
    summarizeThreshold: {
      description:
        "Layer 2 (summarize) runs when the context, after pruning, is above this share of the window. In (0, 1], between pruneThreshold and fullThreshold. A manual compaction runs layer 2 even below it.",
      type: "number",
      exclusiveMinimum: 0,
      maximum: 1,
      default: 0.88,
    },
    summarizeProtectTokens: {
      description:
        "Layer 2 keeps about this many tokens of the newest messages verbatim and summarises the older ones; no more than fits beside the summary in the budget, or, when the context is over the run's target (0.6 of the auto-compaction threshold; 0.75 for a context larger than the window), in that target (a warning says so). For a context larger than the whole window (a switch to a smaller model, an overflow), layers 2 and 3 keep the newest messages up to that target beside the summary when that is more.",
      type: "integer",
      minimum: 0,
      default: 25000,
    },
    fullThreshold: {
      description:
        "Layer 3 (full) runs when the context, after pruning, is above this share of the window: everything but pinned messages, the newest summarizeProtectTokens and the last turn (when it fits whole) is summarised. In (0, 1], above summarizeThreshold.",
      type: "number",
      exclusiveMinimum: 0,
      maximum: 1,
      default: 0.95,
    },
    summaryMaxTokens: {
      description:
        "Longest summary, in tokens; null uses the compactor's summaryMaxTokens (4,000 unless configured). The layers keep room for it in the budget.",
      type: ["integer", "null"],
      minimum: 1,
      default: null,
    },
    chunkTokens: {
      description:
        "Most tokens of conversation handed to the summarizer at once; longer histories are summarised in chunks, each updating the summary so far.",
      type: "integer",
      minimum: 1,
      default: 100000,
    },
  },
} as const;

/** Options of the `layered` plugin, defaults filled in (see LAYERED_OPTIONS_SCHEMA). */
export interface LayeredOptions {
  readonly pruneThreshold: number;
  readonly pruneMinToolTokens: number;
  readonly pruneProtectTokens: number;
  readonly pruneMinSavings: number;
  readonly summarizeThreshold: number;
  readonly summarizeProtectTokens: number;
  readonly fullThreshold: number;
  /** `null`: the compactor's `summaryMaxTokens`. */
  readonly summaryMaxTokens: number | null;
  readonly chunkTokens: number;
}

/**
 * Checks what the schema cannot: the thresholds rise layer by layer
 * (pruneThreshold < summarizeThreshold < fullThreshold). Throws COMPACTION_PLUGIN_OPTIONS_INVALID
 * naming `pluginName` and the option to change.
 */
export function checkThresholdOrder(pluginName: string, options: LayeredOptions): void {
  const { pruneThreshold, summarizeThreshold, fullThreshold } = options;
  if (!(pruneThreshold < summarizeThreshold)) {
    throw thresholdOrderError(
      pluginName,
      "/summarizeThreshold",
      `pruneThreshold (${pruneThreshold}) is not below summarizeThreshold (${summarizeThreshold})`,
    );
  }
  if (!(summarizeThreshold < fullThreshold)) {
    throw thresholdOrderError(
      pluginName,
      "/fullThreshold",
      `summarizeThreshold (${summarizeThreshold}) is not below fullThreshold (${fullThreshold})`,
    );
  }
}

function thresholdOrderError(pluginName: string, path: string, problem: string): CompactionError {
  return new CompactionError(
    ErrorCodes.PLUGIN_OPTIONS_INVALID,
    `Invalid options for plugin '${pluginName}': expected pruneThreshold < summarizeThreshold < fullThreshold, but ${problem}.`,
    {
      plugin: pluginName,
      path,
      hint: "Give the three thresholds rising values; the defaults are 0.8, 0.88 and 0.95.",
    },
  );
}
