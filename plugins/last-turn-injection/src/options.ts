/** Options of the last-turn-injection plugin, as a draft-07 JSON Schema and a type. */

/**
 * JSON Schema (draft-07) of the plugin's options. A plain JSON literal: the core's config schema
 * carries a copy of it.
 */
export const LAST_TURN_INJECTION_OPTIONS_SCHEMA = {
  title: "last-turn-injection options",
  description:
    "Appends the last user message and the assistant's reply to it, verbatim, to the summary of the compacted messages.",
  type: "object",
  additionalProperties: false,
  properties: {
    lastTurnInjection: {
      type: "boolean",
      default: true,
      description: "Append the '## Last Exchange (Verbatim)' section to the summary. `false` turns the plugin off.",
    },
    lastTurnMaxTokens: {
      type: "integer",
      minimum: 1,
      default: 2000,
      description:
        "Most tokens the whole section may take (heading included), counted with the compactor's token counter; never more than half the run's summary allowance (a quarter of the budget at a small window) nor what the budget leaves. Longer text is cut, assistant text first, and ends with '[...truncated]'.",
    },
  },
};

/** The plugin's options after validation, defaults filled in. */
export interface LastTurnInjectionOptions {
  /** Append the section. Default `true`. */
  readonly lastTurnInjection: boolean;
  /** Token cap of the whole section. Default 2,000. */
  readonly lastTurnMaxTokens: number;
}
