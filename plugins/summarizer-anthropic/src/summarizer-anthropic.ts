/**
 * summarizer-anthropic: the compactor's summaries written by a model behind the Anthropic
 * Messages API. Prompting, chunking, retries, the time limit and error reports are the core's
 * model-summarizer machinery; this plugin speaks the protocol.
 */
import {
  type CompactionPlugin,
  CompactionError,
  type Compactor,
  ErrorCodes,
  type Summarizer,
  type SummarizerWarn,
  createModelSummarizer,
  createOptionsValidator,
  installModelSummarizer,
  postJson,
} from "@compaction/core";
import { messagesBody, messagesErrorMessage, messagesHeaders, readMessage } from "./messages-api.js";
import {
  SUMMARIZER_ANTHROPIC_OPTIONS_SCHEMA,
  type SummarizerAnthropicOptions,
  type SummarizerAnthropicOptionsInput,
} from "./options.js";

export const PLUGIN_NAME = "summarizer-anthropic";

/** The key variable used for api.anthropic.com when `apiKeyEnv` is not set. */
export const ANTHROPIC_API_KEY_ENV = "ANTHROPIC_API_KEY";

const validate = createOptionsValidator<SummarizerAnthropicOptions>(PLUGIN_NAME, SUMMARIZER_ANTHROPIC_OPTIONS_SCHEMA);

/**
 * Creates the plugin. In `apply` it makes its summarizer the compactor's (wrapped with the
 * extractive fallback when `fallback: extractive`); strategy plugins (safeguard, layered, ...)
 * then summarise with the model. Throws COMPACTION_PLUGIN_OPTIONS_INVALID for bad options or a
 * missing `model`.
 */
export function summarizerAnthropic(options?: SummarizerAnthropicOptionsInput): CompactionPlugin {
  const settings = resolveOptions(options);
  return {
    name: PLUGIN_NAME,
    apply(compactor: Compactor<unknown>) {
      installModelSummarizer(compactor, {
        plugin: PLUGIN_NAME,
        fallback: settings.fallback,
        create: (warn) => createAnthropicSummarizer(settings, warn),
      });
    },
  };
}

/**
 * The summarizer alone, for hosts that pass it to `new Compactor({ summarizer })`. Without a
 * fallback: a failure rejects. `onWarning` hears when a summary was trimmed to its length.
 */
export function createAnthropicSummarizer(options: SummarizerAnthropicOptionsInput, onWarning?: SummarizerWarn): Summarizer {
  const settings = resolveOptions(options);
  const url = `${settings.baseUrl.replace(/\/+$/, "")}/v1/messages`;
  return createModelSummarizer({
    provider: settings.provider,
    model: settings.model,
    url,
    plugin: PLUGIN_NAME,
    apiKeyEnv: keyVariable(settings),
    maxInputTokens: settings.maxInputTokens,
    maxRetries: settings.maxRetries,
    retryDelayMs: settings.retryDelayMs,
    timeoutMs: settings.timeoutMs,
    ...(onWarning !== undefined ? { onWarning } : {}),
    async complete({ system, user, signal, apiKey }) {
      const body = await postJson({
        url,
        headers: messagesHeaders(apiKey),
        body: messagesBody({ system, user }, settings),
        errorMessage: messagesErrorMessage,
        ...(signal !== undefined ? { signal } : {}),
      });
      return readMessage(body);
    },
  });
}

/** The environment variable to read the key from: the option, else ANTHROPIC_API_KEY for api.anthropic.com only. */
export function keyVariable(settings: Pick<SummarizerAnthropicOptions, "apiKeyEnv" | "baseUrl">): string | null {
  if (settings.apiKeyEnv !== null) return settings.apiKeyEnv;
  return hostOf(settings.baseUrl) === "api.anthropic.com" ? ANTHROPIC_API_KEY_ENV : null;
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** Validated options with defaults; `model` must be set. */
function resolveOptions(options: unknown): SummarizerAnthropicOptions {
  const settings = validate(options);
  if (typeof settings.model !== "string") {
    throw new CompactionError(
      ErrorCodes.PLUGIN_OPTIONS_INVALID,
      `Invalid options for plugin '${PLUGIN_NAME}': /model: expected the name of the model to ask, found none. Set model, e.g. "claude-haiku-4-5".`,
      { plugin: PLUGIN_NAME, path: "/model", hint: `See the '${PLUGIN_NAME}' options in @compaction/core/schema.json.` },
    );
  }
  return settings;
}
