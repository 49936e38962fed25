/** Options of the safeguard plugin, as a draft-07 JSON Schema and a type. */

/**
 * JSON Schema (draft-07) of the plugin's options. A plain JSON literal: the core's config schema
 * carries a copy of it.
 */
export const SAFEGUARD_OPTIONS_SCHEMA = {
  title: "safeguard options",
  description:
    "Summarises the messages older than keepRecentTokens and keeps the rest verbatim. If the summarizer fails or times out, the compaction is cancelled and the history is left as it was.",
  type: "object",
  additionalProperties: false,
  properties: {
    keepRecentTokens: {
      type: "integer",
      minimum: 0,
      default: 20000,
      description:
        "Most tokens of the newest messages kept verbatim, as the provider counts them (our count at the calibrated ratio: learned from the usage figures, or the config's tokenizer.ratio; our count itself with neither; it leaves out the system prompt and tools), never more than the budget leaves after the summary and the preserved messages. For a context larger than the whole window (a switch to a smaller model, an overflow), the newest messages up to the run's target (0.75 of the auto-compaction threshold) beside the summary, when that is more. The cut starts at a turn boundary when that costs little (see maxTurnBoundaryLoss); otherwise the turn is split and its early part summarised separately.",
    },
    maxTurnBoundaryLoss: {
      type: "number",
      minimum: 0,
      maximum: 1,
      default: 0.5,
      description:
        "Largest share (0..1) of the verbatim tokens the cut may give up to start at a turn boundary rather than inside a turn. When moving the cut to the next turn start would give up more, or keep less than the newest messages in an eighth of the window, the turn is split instead and its early part summarised separately. 0: never move (split turns as pi-coding-agent does); 1: always keep whole turns.",
    },
    summaryMaxTokens: {
      type: ["integer", "null"],
      minimum: 1,
      default: null,
      description:
        "Longest history summary, in tokens of the compactor's counter. `null`: the compactor's summaryMaxTokens (4,000 unless configured).",
    },
    turnPrefixMaxTokens: {
      type: ["integer", "null"],
      minimum: 1,
      default: null,
      description:
        "Longest summary of a split turn's early part, in tokens. `null`: half of the history summary's length.",
    },
    chunkTokens: {
      type: "integer",
      minimum: 1,
      default: 100000,
      description:
        "Most conversation tokens handed to the summarizer at once. A longer history is summarised in chunks, oldest first, each chunk updating the summary of the ones before.",
    },
    timeoutMs: {
      type: "integer",
      minimum: 0,
      maximum: 2147483647,
      default: 120000,
      description:
        "Milliseconds the summarizer has for the whole summary (every chunk and the split-turn part). When it runs out, the compaction fails with COMPACTION_SUMMARIZER_FAILED and nothing changes. `0`: no limit.",
    },
  },
};

/** The plugin's options after validation, defaults filled in. */
export interface SafeguardOptions {
  /** Most tokens of the newest messages kept verbatim. Default 20,000. */
  readonly keepRecentTokens: number;
  /** Largest share of the kept tokens given up to cut at a turn boundary. Default 0.5. */
  readonly maxTurnBoundaryLoss: number;
  /** Longest history summary; `null` for the compactor's `summaryMaxTokens`. Default `null`. */
  readonly summaryMaxTokens: number | null;
  /** Longest split-turn summary; `null` for half the history summary's length. Default `null`. */
  readonly turnPrefixMaxTokens: number | null;
  /** Most conversation tokens per summarizer call. Default 100,000. */
  readonly chunkTokens: number;
  /** Time limit of the whole summary in milliseconds; 0 for none. Default 120,000. */
  readonly timeoutMs: number;
}

/** What the factory accepts: any subset of the options (`undefined` means the default). */
export type SafeguardOptionsInput = { readonly [K in keyof SafeguardOptions]?: SafeguardOptions[K] | undefined };
