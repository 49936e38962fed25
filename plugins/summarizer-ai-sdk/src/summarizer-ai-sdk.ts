/**
 * summarizer-ai-sdk: the compactor's summaries written by any AI SDK LanguageModel, so every
 * provider the AI SDK has (OpenAI, Anthropic, Google, Bedrock, Mistral, Ollama and other local
 * ones) can summarise. Prompting, chunking, retries, the time limit, error reports and the
 * extractive fallback are @compaction/model-summarizer's; this plugin makes one `generateText`
 * call per prompt, with the AI SDK's own retries off so the shared backoff decides.
 */
import type { CompactionPlugin, Compactor, Summarizer } from "@compaction/core";
import {
  createModelSummarizer,
  installModelSummarizer,
  ModelCallError,
  type ModelCompletionRequest,
  retryAfterMs,
  type SummarizerWarn,
} from "@compaction/model-summarizer";
import { generateText } from "ai";
import { PLUGIN_NAME, resolveOptions, type SummarizerAiSdkOptions, type SummarizerAiSdkOptionsInput } from "./options.js";

export { PLUGIN_NAME };

/** `provider` and `modelId` of a model, for the summarizer's name and its errors. */
function describeModel(model: SummarizerAiSdkOptions["model"]): { provider: string; modelId: string } {
  if (typeof model === "string") return { provider: "gateway", modelId: model };
  return { provider: model.provider || "ai-sdk", modelId: model.modelId || "model" };
}

/** The fields of the AI SDK's APICallError (and RetryError's last error) the retry decision needs. */
interface ApiCallErrorLike {
  readonly message?: unknown;
  readonly statusCode?: unknown;
  readonly isRetryable?: unknown;
  readonly responseBody?: unknown;
  readonly responseHeaders?: unknown;
  readonly lastError?: unknown;
}

/** A ModelCallError from what generateText threw: retryable as the AI SDK judged it (429, 5xx, network). */
export function toModelCallError(thrown: unknown): ModelCallError {
  const error = ((thrown as ApiCallErrorLike)?.lastError ?? thrown) as ApiCallErrorLike;
  const status = typeof error?.statusCode === "number" ? error.statusCode : undefined;
  const headers = error?.responseHeaders;
  const retryAfter =
    typeof headers === "object" && headers !== null ? retryAfterMs(new Headers(headers as Record<string, string>)) : undefined;
  const message = typeof error?.message === "string" && error.message !== "" ? error.message : String(thrown);
  return new ModelCallError(status === undefined ? `the AI SDK call failed: ${message}` : `the provider answered ${status}`, {
    ...(status !== undefined ? { status } : {}),
    ...(status !== undefined ? { serverMessage: typeof error.responseBody === "string" && error.responseBody !== "" ? error.responseBody : message } : {}),
    ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
    retryable: error?.isRetryable === true,
    cause: thrown,
  });
}

async function complete(options: SummarizerAiSdkOptions, request: ModelCompletionRequest): Promise<string> {
  try {
    const result = await generateText({
      model: options.model,
      system: request.system,
      prompt: request.user,
      maxOutputTokens: options.maxOutputTokens,
      ...(options.temperature !== null ? { temperature: options.temperature } : {}),
      ...(options.providerOptions !== undefined ? { providerOptions: options.providerOptions as never } : {}),
      ...(request.signal !== undefined ? { abortSignal: request.signal } : {}),
      maxRetries: 0,
    });
    return result.text;
  } catch (error) {
    if (request.signal?.aborted) throw request.signal.reason;
    throw toModelCallError(error);
  }
}

function summarizerFor(options: SummarizerAiSdkOptions, onWarning?: SummarizerWarn): Summarizer {
  const { provider, modelId } = describeModel(options.model);
  return createModelSummarizer({
    provider,
    model: modelId,
    url: `ai-sdk:${provider}/${modelId}`,
    plugin: PLUGIN_NAME,
    apiKeyEnv: null,
    maxInputTokens: options.maxInputTokens,
    maxRetries: options.maxRetries,
    retryDelayMs: options.retryDelayMs,
    timeoutMs: options.timeoutMs,
    ...(onWarning !== undefined ? { onWarning } : {}),
    complete: (request) => complete(options, request),
  });
}

/**
 * Creates the plugin. In `apply` it makes its summarizer the compactor's (wrapped with the
 * extractive fallback when `fallback: extractive`); strategy plugins (safeguard, layered, ...)
 * then summarise with the model. Throws COMPACTION_PLUGIN_OPTIONS_INVALID for bad options or a
 * missing `model`.
 */
export function summarizerAiSdk(input: SummarizerAiSdkOptionsInput): CompactionPlugin {
  const options = resolveOptions(input);
  return {
    name: PLUGIN_NAME,
    apply(compactor: Compactor<unknown>) {
      installModelSummarizer(compactor, { plugin: PLUGIN_NAME, fallback: options.fallback, create: (warn) => summarizerFor(options, warn) });
    },
  };
}

/**
 * The summarizer alone, for hosts that pass it to `new Compactor({ summarizer })`. Without a
 * fallback: a failure rejects. `onWarning` hears when a summary was trimmed to its length.
 */
export function createAiSdkSummarizer(input: SummarizerAiSdkOptionsInput, onWarning?: SummarizerWarn): Summarizer {
  return summarizerFor(resolveOptions(input), onWarning);
}
