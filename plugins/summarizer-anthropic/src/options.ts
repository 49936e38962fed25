/** Options of the summarizer-anthropic plugin, as a draft-07 JSON Schema and a type. */
import { type ModelSummarizerPluginOptions, modelSummarizerOptionsSchema } from "@compaction/model-summarizer";

/** JSON Schema (draft-07) of the plugin's options; the core's config schema carries a copy of it. */
export const SUMMARIZER_ANTHROPIC_OPTIONS_SCHEMA = modelSummarizerOptionsSchema({
  plugin: "summarizer-anthropic",
  description:
    "Summarises with a model behind the Anthropic Messages API (Anthropic, or a server or proxy speaking it). The API key is read from an environment variable at call time and never written anywhere.",
  describe: {
    model: "Required. The model to ask, e.g. `claude-haiku-4-5` or `claude-sonnet-4-5`.",
    provider: "Who serves the model: named in errors and in the summarizer's name `<provider>:<model>`.",
    baseUrl: "The API's base URL, without `/v1`; requests go to `<baseUrl>/v1/messages`.",
    apiKeyEnv:
      "Name of the environment variable holding the API key, sent as `x-api-key`. The key itself never goes in the config. `null`: `ANTHROPIC_API_KEY` when baseUrl is api.anthropic.com, and no key for any other server (so your Anthropic key is never sent elsewhere). A named variable that is not set fails the summary with an error naming it.",
  },
  defaults: { provider: "anthropic", baseUrl: "https://api.anthropic.com" },
  protocolProperties: {
    temperature: {
      type: "number",
      minimum: 0,
      maximum: 1,
      default: 0.3,
      description: "Sampling temperature (0..1): low keeps the summary close to the conversation.",
    },
    maxTokens: {
      type: "integer",
      minimum: 1,
      default: 4000,
      description:
        "Most tokens the model may write per request (the API's `max_tokens`). The summary itself is also kept within the length the compaction asks for.",
    },
  },
  retriedStatuses: "429, 5xx, 529 (overloaded)",
});

/** The plugin's options after validation, defaults filled in. */
export interface SummarizerAnthropicOptions extends ModelSummarizerPluginOptions {
  /** Default 0.3. */
  readonly temperature: number;
  /** The API's `max_tokens`. Default 4,000. */
  readonly maxTokens: number;
}

/** What the factory accepts: `model` and any other options (`undefined` means the default). */
export type SummarizerAnthropicOptionsInput = { readonly model: string } & {
  readonly [K in Exclude<keyof SummarizerAnthropicOptions, "model">]?: SummarizerAnthropicOptions[K] | undefined;
};
