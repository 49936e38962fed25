/**
 * summarizer-openai: the compactor's summaries written by a model behind an OpenAI-compatible
 * chat completions API (OpenAI, OpenRouter, llama.cpp, vLLM, Ollama, LM Studio). Prompting,
 * chunking, retries, the time limit and error reports are @compaction/model-summarizer's; this
 * plugin speaks the protocol.
 */
import type { CompactionPlugin, Summarizer } from "@compaction/core";
import { defineModelSummarizer, joinUrl, type SummarizerWarn } from "@compaction/model-summarizer";
import { chatCompletionsBody, chatCompletionsErrorMessage, readChatCompletion } from "./chat-completions.js";
import { SUMMARIZER_OPENAI_OPTIONS_SCHEMA, type SummarizerOpenAIOptions, type SummarizerOpenAIOptionsInput } from "./options.js";

export const PLUGIN_NAME = "summarizer-openai";

/** The key variable used for api.openai.com when `apiKeyEnv` is not set. */
export const OPENAI_API_KEY_ENV = "OPENAI_API_KEY";

const kit = defineModelSummarizer<SummarizerOpenAIOptions, SummarizerOpenAIOptionsInput>({
  plugin: PLUGIN_NAME,
  schema: SUMMARIZER_OPENAI_OPTIONS_SCHEMA,
  modelExample: `"gpt-4o-mini", or the name your local server gives its model`,
  defaultKey: { host: "api.openai.com", env: OPENAI_API_KEY_ENV },
  endpoint: (options) => joinUrl(options.baseUrl, "/chat/completions"),
  request: (prompt, apiKey, options) => ({
    headers: {
      "content-type": "application/json",
      accept: "application/json",
      ...(apiKey !== undefined ? { authorization: `Bearer ${apiKey}` } : {}),
    },
    body: chatCompletionsBody(prompt, options),
    errorMessage: chatCompletionsErrorMessage,
  }),
  read: readChatCompletion,
});

/**
 * Creates the plugin. In `apply` it makes its summarizer the compactor's (wrapped with the
 * extractive fallback when `fallback: extractive`); strategy plugins (safeguard, layered, ...)
 * then summarise with the model. Throws COMPACTION_PLUGIN_OPTIONS_INVALID for bad options or a
 * missing `model`.
 */
export function summarizerOpenAI(options?: SummarizerOpenAIOptionsInput): CompactionPlugin {
  return kit.plugin(options);
}

/**
 * The summarizer alone, for hosts that pass it to `new Compactor({ summarizer })`. Without a
 * fallback: a failure rejects. `onWarning` hears when a summary was trimmed to its length.
 */
export function createOpenAISummarizer(options: SummarizerOpenAIOptionsInput, onWarning?: SummarizerWarn): Summarizer {
  return kit.createSummarizer(options, onWarning);
}

/** The environment variable to read the key from: the option, else OPENAI_API_KEY for api.openai.com only. */
export const keyVariable: (settings: Pick<SummarizerOpenAIOptions, "apiKeyEnv" | "baseUrl">) => string | null = kit.keyVariable;
