/** Options of the summarizer-openai plugin, as a draft-07 JSON Schema and a type. */
import { type ModelSummarizerPluginOptions, modelSummarizerOptionsSchema } from "@compaction/model-summarizer";

/** JSON Schema (draft-07) of the plugin's options; the core's config schema carries a copy of it. */
export const SUMMARIZER_OPENAI_OPTIONS_SCHEMA = modelSummarizerOptionsSchema({
  plugin: "summarizer-openai",
  description:
    "Summarises with a model behind an OpenAI-compatible chat completions API (OpenAI, OpenRouter, llama.cpp, vLLM, Ollama, LM Studio). The API key is read from an environment variable at call time and never written anywhere.",
  describe: {
    model:
      "Required. The model to ask, as the server names it (e.g. `gpt-4o-mini`, `qwen2.5:7b-instruct` for Ollama, `openai/gpt-4o-mini` for OpenRouter).",
    provider: "Who serves the model (e.g. `openrouter`, `ollama`, `llama.cpp`): named in errors and in the summarizer's name `<provider>:<model>`.",
    baseUrl:
      "The API's base URL; requests go to `<baseUrl>/chat/completions`. llama.cpp: `http://localhost:8080/v1`, Ollama: `http://localhost:11434/v1`, vLLM: `http://localhost:8000/v1`, OpenRouter: `https://openrouter.ai/api/v1`.",
    apiKeyEnv:
      "Name of the environment variable holding the API key, sent as `Authorization: Bearer`. The key itself never goes in the config. `null`: `OPENAI_API_KEY` when baseUrl is api.openai.com, and no key for any other server (so your OpenAI key is never sent elsewhere). A named variable that is not set fails the summary with an error naming it.",
  },
  defaults: { provider: "openai", baseUrl: "https://api.openai.com/v1" },
  protocolProperties: {
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
  },
  retriedStatuses: "429, 5xx",
});

/** The plugin's options after validation, defaults filled in. */
export interface SummarizerOpenAIOptions extends ModelSummarizerPluginOptions {
  /** Default 0.3; `null` sends none. */
  readonly temperature: number | null;
  /** Most tokens written per request. Default 4,000. */
  readonly maxTokens: number;
  /** The body field for maxTokens. Default `max_tokens`. */
  readonly maxTokensParameter: "max_tokens" | "max_completion_tokens";
}

/** What the factory accepts: `model` and any other options (`undefined` means the default). */
export type SummarizerOpenAIOptionsInput = { readonly model: string } & {
  readonly [K in Exclude<keyof SummarizerOpenAIOptions, "model">]?: SummarizerOpenAIOptions[K] | undefined;
};
