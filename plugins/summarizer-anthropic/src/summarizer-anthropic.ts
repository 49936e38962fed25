/**
 * summarizer-anthropic: the compactor's summaries written by a model behind the Anthropic
 * Messages API. Prompting, chunking, retries, the time limit and error reports are
 * @compaction/model-summarizer's; this plugin speaks the protocol.
 */
import type { CompactionPlugin, Summarizer } from "@compaction/core";
import { defineModelSummarizer, joinUrl, type SummarizerWarn } from "@compaction/model-summarizer";
import { messagesBody, messagesErrorMessage, messagesHeaders, readMessage } from "./messages-api.js";
import {
  SUMMARIZER_ANTHROPIC_OPTIONS_SCHEMA,
  type SummarizerAnthropicOptions,
  type SummarizerAnthropicOptionsInput,
} from "./options.js";

export const PLUGIN_NAME = "summarizer-anthropic";

/** The key variable used for api.anthropic.com when `apiKeyEnv` is not set. */
export const ANTHROPIC_API_KEY_ENV = "ANTHROPIC_API_KEY";

const kit = defineModelSummarizer<SummarizerAnthropicOptions, SummarizerAnthropicOptionsInput>({
  plugin: PLUGIN_NAME,
  schema: SUMMARIZER_ANTHROPIC_OPTIONS_SCHEMA,
  modelExample: `"claude-haiku-4-5"`,
  defaultKey: { host: "api.anthropic.com", env: ANTHROPIC_API_KEY_ENV },
  endpoint: (options) => joinUrl(options.baseUrl, "/v1/messages"),
  request: (prompt, apiKey, options) => ({
    headers: messagesHeaders(apiKey),
    body: messagesBody(prompt, options),
    errorMessage: messagesErrorMessage,
  }),
  read: readMessage,
});

/**
 * Creates the plugin. In `apply` it makes its summarizer the compactor's (wrapped with the
 * extractive fallback when `fallback: extractive`); strategy plugins (safeguard, layered, ...)
 * then summarise with the model. Throws COMPACTION_PLUGIN_OPTIONS_INVALID for bad options or a
 * missing `model`.
 */
export function summarizerAnthropic(options?: SummarizerAnthropicOptionsInput): CompactionPlugin {
  return kit.plugin(options);
}

/**
 * The summarizer alone, for hosts that pass it to `new Compactor({ summarizer })`. Without a
 * fallback: a failure rejects. `onWarning` hears when a summary was trimmed to its length.
 */
export function createAnthropicSummarizer(options: SummarizerAnthropicOptionsInput, onWarning?: SummarizerWarn): Summarizer {
  return kit.createSummarizer(options, onWarning);
}

/** The environment variable to read the key from: the option, else ANTHROPIC_API_KEY for api.anthropic.com only. */
export const keyVariable: (settings: Pick<SummarizerAnthropicOptions, "apiKeyEnv" | "baseUrl">) => string | null = kit.keyVariable;
