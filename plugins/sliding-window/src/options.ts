/**
 * Options of the sliding-window plugin: a draft-07 JSON Schema (copied into the core's config
 * schema) and the type the validated options have.
 */

/** JSON Schema of the `sliding-window` plugin's options. A plain JSON-compatible literal. */
export const SLIDING_WINDOW_OPTIONS_SCHEMA = {
  type: "object",
  additionalProperties: false,
  properties: {
    keepRatio: {
      type: "number",
      exclusiveMinimum: 0,
      maximum: 1,
      default: 0.4,
      description:
        "Share of the context window kept verbatim: the newest messages whose tokens fit keepRatio * contextWindow, as the provider counts them (our count at the calibrated ratio: learned from the usage figures, or the config's tokenizer.ratio; our count itself with neither). For a context larger than the whole window (a switch to a smaller model, an overflow), the newest messages up to the run's target (0.75 of the auto-compaction threshold) beside the summary, when that is more. The last user message and what follows it are always kept, even when they need more.",
    },
    summaryPrefix: {
      type: "string",
      minLength: 1,
      pattern: "\\S",
      default: "Previously:",
      description: "Text the summary message begins with; the summary of the older messages follows it.",
    },
    summaryMaxTokens: {
      type: ["integer", "null"],
      minimum: 1,
      default: null,
      description: "Longest summary, in tokens (the prefix not counted). null: the compactor's summaryMaxTokens.",
    },
    chunkTokens: {
      type: "integer",
      minimum: 1,
      default: 100000,
      description:
        "Most tokens of conversation handed to the summarizer at once; longer histories are summarised in chunks, oldest first, each updating the summary so far.",
    },
  },
} as const;

/** The sliding-window plugin's options after validation (every default filled in). */
export interface SlidingWindowOptions {
  /** Share of the context window kept verbatim. Default 0.4. */
  readonly keepRatio: number;
  /** Text the summary begins with. Default `Previously:`. */
  readonly summaryPrefix: string;
  /** Longest summary in tokens; `null` for the compactor's `summaryMaxTokens`. Default `null`. */
  readonly summaryMaxTokens: number | null;
  /** Most tokens summarised in one summarizer call. Default 100,000. */
  readonly chunkTokens: number;
}

/** What the factory accepts: any subset of the options. */
export type SlidingWindowInput = Partial<SlidingWindowOptions>;
