/** Options of the summarizer-anthropic plugin, as a draft-07 JSON Schema and a type. */

/**
 * JSON Schema (draft-07) of the plugin's options. A plain JSON literal: the core's config schema
 * carries a copy of it. `model` has no default; the factory requires it (a schema `required`
 * would reject `options.summarizer-anthropic` entries that set only some options).
 */
export const SUMMARIZER_ANTHROPIC_OPTIONS_SCHEMA = {
  title: "summarizer-anthropic options",
  description:
    "Summarises with a model behind the Anthropic Messages API (Anthropic, or a server or proxy speaking it). The API key is read from an environment variable at call time and never written anywhere.",
  type: "object",
  additionalProperties: false,
  properties: {
    model: {
      type: "string",
      minLength: 1,
      description: "Required. The model to ask, e.g. `claude-haiku-4-5` or `claude-sonnet-4-5`.",
    },
    provider: {
      type: "string",
      minLength: 1,
      default: "anthropic",
      description: "Who serves the model: named in errors and in the summarizer's name `<provider>:<model>`.",
    },
    baseUrl: {
      type: "string",
      pattern: "^https?://",
      default: "https://api.anthropic.com",
      description: "The API's base URL, without `/v1`; requests go to `<baseUrl>/v1/messages`.",
    },
    apiKeyEnv: {
      type: ["string", "null"],
      pattern: "^[A-Za-z_][A-Za-z0-9_]*$",
      default: null,
      description:
        "Name of the environment variable holding the API key, sent as `x-api-key`. The key itself never goes in the config. `null`: `ANTHROPIC_API_KEY` when baseUrl is api.anthropic.com, and no key for any other server (so your Anthropic key is never sent elsewhere). A named variable that is not set fails the summary with an error naming it.",
    },
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
    maxInputTokens: {
      type: "integer",
      minimum: 1000,
      default: 100000,
      description:
        "Most tokens of one request's prompt, counted with the compactor's token counter. A longer history is summarised in chunks, oldest first, each request updating the summary so far. Set it below the model's context window less maxTokens.",
    },
    timeoutMs: {
      type: "integer",
      minimum: 0,
      maximum: 2147483647,
      default: 120000,
      description: "Time one request may take, retries included, in milliseconds. `0`: no limit.",
    },
    maxRetries: {
      type: "integer",
      minimum: 0,
      maximum: 10,
      default: 3,
      description:
        "Retries of a request that failed with 429, 5xx, 529 (overloaded) or a network error, with exponential backoff and jitter; a server's Retry-After is honoured (up to 60 s).",
    },
    retryDelayMs: {
      type: "integer",
      minimum: 0,
      maximum: 60000,
      default: 1000,
      description: "Base of the backoff in milliseconds: retry n waits between half and all of `retryDelayMs * 2^n`.",
    },
    fallback: {
      type: "string",
      enum: ["none", "extractive"],
      default: "none",
      description:
        "When the model fails: `none` fails the compaction and leaves the history exactly as it was; `extractive` writes the core's extractive summary instead and adds a warning to the result.",
    },
  },
};

/** The plugin's options after validation, defaults filled in. */
export interface SummarizerAnthropicOptions {
  /** The model to ask. Required. */
  readonly model: string;
  /** Named in errors and the summarizer's name. Default `anthropic`. */
  readonly provider: string;
  /** Default `https://api.anthropic.com`. */
  readonly baseUrl: string;
  /** Environment variable holding the key; `null`: ANTHROPIC_API_KEY for api.anthropic.com, else none. Default `null`. */
  readonly apiKeyEnv: string | null;
  /** Default 0.3. */
  readonly temperature: number;
  /** The API's `max_tokens`. Default 4,000. */
  readonly maxTokens: number;
  /** Most prompt tokens per request. Default 100,000. */
  readonly maxInputTokens: number;
  /** Per request, retries included; 0 for none. Default 120,000. */
  readonly timeoutMs: number;
  /** Default 3. */
  readonly maxRetries: number;
  /** Default 1,000. */
  readonly retryDelayMs: number;
  /** Default `none`. */
  readonly fallback: "none" | "extractive";
}

/** What the factory accepts: `model` and any other options (`undefined` means the default). */
export type SummarizerAnthropicOptionsInput = { readonly model: string } & {
  readonly [K in Exclude<keyof SummarizerAnthropicOptions, "model">]?: SummarizerAnthropicOptions[K] | undefined;
};
