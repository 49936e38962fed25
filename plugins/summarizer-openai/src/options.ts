/** Options of the summarizer-openai plugin, as a draft-07 JSON Schema and a type. */

/**
 * JSON Schema (draft-07) of the plugin's options. A plain JSON literal: the core's config schema
 * carries a copy of it. `model` has no default; the factory requires it (a schema `required`
 * would reject `options.summarizer-openai` entries that set only some options).
 */
export const SUMMARIZER_OPENAI_OPTIONS_SCHEMA = {
  title: "summarizer-openai options",
  description:
    "Summarises with a model behind an OpenAI-compatible chat completions API (OpenAI, OpenRouter, llama.cpp, vLLM, Ollama, LM Studio). The API key is read from an environment variable at call time and never written anywhere.",
  type: "object",
  additionalProperties: false,
  properties: {
    model: {
      type: "string",
      minLength: 1,
      description:
        "Required. The model to ask, as the server names it (e.g. `gpt-4o-mini`, `qwen2.5:7b-instruct` for Ollama, `openai/gpt-4o-mini` for OpenRouter).",
    },
    provider: {
      type: "string",
      minLength: 1,
      default: "openai",
      description: "Who serves the model (e.g. `openrouter`, `ollama`, `llama.cpp`): named in errors and in the summarizer's name `<provider>:<model>`.",
    },
    baseUrl: {
      type: "string",
      pattern: "^https?://",
      default: "https://api.openai.com/v1",
      description:
        "The API's base URL; requests go to `<baseUrl>/chat/completions`. llama.cpp: `http://localhost:8080/v1`, Ollama: `http://localhost:11434/v1`, vLLM: `http://localhost:8000/v1`, OpenRouter: `https://openrouter.ai/api/v1`.",
    },
    apiKeyEnv: {
      type: ["string", "null"],
      pattern: "^[A-Za-z_][A-Za-z0-9_]*$",
      default: null,
      description:
        "Name of the environment variable holding the API key, sent as `Authorization: Bearer`. The key itself never goes in the config. `null`: `OPENAI_API_KEY` when baseUrl is api.openai.com, and no key for any other server (so your OpenAI key is never sent elsewhere). A named variable that is not set fails the summary with an error naming it.",
    },
    temperature: {
      type: ["number", "null"],
      minimum: 0,
      maximum: 2,
      default: 0.3,
      description:
        "Sampling temperature: low keeps the summary close to the conversation. `null` sends none (the server's default), for models that accept no other, such as OpenAI's reasoning models.",
    },
    maxTokens: {
      type: "integer",
      minimum: 1,
      default: 4000,
      description:
        "Most tokens the model may write per request (sent as `maxTokensParameter`). The summary itself is also kept within the length the compaction asks for.",
    },
    maxTokensParameter: {
      type: "string",
      enum: ["max_tokens", "max_completion_tokens"],
      default: "max_tokens",
      description:
        "The body field maxTokens is sent in: `max_tokens` (every OpenAI-compatible server), or `max_completion_tokens`, which OpenAI's reasoning models (o-series, gpt-5) require.",
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
      description: "Retries of a request that failed with 429, 5xx or a network error, with exponential backoff and jitter; a server's Retry-After is honoured (up to 60 s).",
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
export interface SummarizerOpenAIOptions {
  /** The model to ask. Required. */
  readonly model: string;
  /** Named in errors and the summarizer's name. Default `openai`. */
  readonly provider: string;
  /** Default `https://api.openai.com/v1`. */
  readonly baseUrl: string;
  /** Environment variable holding the key; `null`: OPENAI_API_KEY for api.openai.com, else none. Default `null`. */
  readonly apiKeyEnv: string | null;
  /** Default 0.3; `null` sends none. */
  readonly temperature: number | null;
  /** Most tokens written per request. Default 4,000. */
  readonly maxTokens: number;
  /** The body field for maxTokens. Default `max_tokens`. */
  readonly maxTokensParameter: "max_tokens" | "max_completion_tokens";
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
export type SummarizerOpenAIOptionsInput = { readonly model: string } & {
  readonly [K in Exclude<keyof SummarizerOpenAIOptions, "model">]?: SummarizerOpenAIOptions[K] | undefined;
};
