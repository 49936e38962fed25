/**
 * Options of the rolling plugin: a plain draft-07 JSON Schema (copied into the core's config
 * schema, so keep it JSON-compatible) and the matching TypeScript type.
 */

/** JSON Schema of `rolling(options)`; every property has a description and a default. */
export const ROLLING_OPTIONS_SCHEMA = {
  title: "rolling",
  description:
    "Options of @compaction/plugin-rolling: evict the oldest messages, leave an eviction note, recall them by search.",
  type: "object",
  additionalProperties: false,
  properties: {
    targetUtilization: {
      description:
        "Share of the usable context window the context may fill after a roll: the oldest messages are evicted until the context (eviction note included) is at or under floor(usableWindow * targetUtilization), and never over the budget (window minus reserve). The usable window is the context window, or (window - reserve) / 0.9 when the reserve takes over a tenth of it. A low target makes rolls rarer: each one is a miss of the provider's prompt cache (the rolling preset sets 0.5 beside its 0.9 threshold).",
      type: "number",
      exclusiveMinimum: 0,
      maximum: 1,
      default: 0.8,
    },
    minKeepMessages: {
      description:
        "Fewest of the newest messages kept verbatim, even when the target is then missed. The system prompt and pinned messages are kept on top of these.",
      type: "integer",
      minimum: 0,
      default: 10,
    },
    evictionNote: {
      description:
        "Replace the evicted messages with one note: '[Context rolled: N messages evicted (T tokens). Full transcript available via <recallTool>. Evicted range: <first> to <last>. Files: <files>; declared: <names>; ran: <commands>; also named: <paths>]', naming the newest 12 files the evicted messages read or modified and the newest 12 functions and types their edits declared, then, within what those leave of 3% of the roll's target, the newest shell commands they ran (at most 12) and the other files and folders they named (a listing's output, a reply), newest kept. When false they are dropped with no trace.",
      type: "boolean",
      default: true,
    },
    recallTool: {
      description:
        "Name of the tool the agent recalls evicted messages with. Named in the eviction note, and the capability looked up with compactor.provides() when recall is 'auto'.",
      type: "string",
      minLength: 1,
      default: "memory_search",
    },
    recall: {
      description:
        "Whether the agent can recall evicted messages. 'auto': only when an applied plugin provides recallTool. true: the host offers it outside this framework. false: never. Without recall, rolling falls back to a safeguard summary and warns.",
      type: ["string", "boolean"],
      enum: ["auto", true, false],
      default: "auto",
    },
    keepRecentTokens: {
      description:
        "Safeguard fallback only (no recall): tokens of the newest messages kept verbatim after the summary, as the provider counts them (our count at the calibrated ratio: learned from the usage figures, or the config's tokenizer.ratio; our count itself with neither), capped at the rolling target.",
      type: "integer",
      minimum: 0,
      default: 20000,
    },
  },
} as const;

/** Whether evicted messages can be recalled: detected, or forced on or off. */
export type RecallSetting = "auto" | boolean;

/** The options after validation, defaults filled in. */
export interface RollingOptions {
  readonly targetUtilization: number;
  readonly minKeepMessages: number;
  readonly evictionNote: boolean;
  readonly recallTool: string;
  readonly recall: RecallSetting;
  readonly keepRecentTokens: number;
}

/** What `rolling(options)` accepts: any subset of the options. */
export type RollingOptionsInput = Partial<RollingOptions>;
