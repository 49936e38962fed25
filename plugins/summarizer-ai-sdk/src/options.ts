/** Options of the summarizer-ai-sdk plugin: the model (an AI SDK LanguageModel) and the shared model-summarizer options. */
import { CompactionError, createOptionsValidator, describeValue, ErrorCodes } from "@compaction/core";
import { type ModelFallback, modelSummarizerOptionsSchema } from "@compaction/model-summarizer";
import type { LanguageModel } from "ai";

export const PLUGIN_NAME = "summarizer-ai-sdk";

/** Options the AI SDK's provider settles itself (where to send, which key): not options of this plugin. */
const PROVIDER_SETTLED = new Set(["model", "provider", "baseUrl", "apiKeyEnv"]);

const shared = modelSummarizerOptionsSchema({
  plugin: PLUGIN_NAME,
  description: "",
  describe: { model: "", provider: "", baseUrl: "", apiKeyEnv: "" },
  defaults: { provider: "", baseUrl: "" },
  protocolProperties: {
    temperature: {
      type: ["number", "null"],
      minimum: 0,
      maximum: 2,
      default: 0.3,
      description: "Sampling temperature: low keeps the summary close to the conversation. `null` sends none (the provider's default), for models that accept no other.",
    },
    maxOutputTokens: {
      type: "integer",
      minimum: 1,
      default: 4000,
      description: "Most tokens the model may write per request (the AI SDK's `maxOutputTokens`). The summary itself is also kept within the length the compaction asks for.",
    },
  },
  retriedStatuses: "a retryable API error (429, 5xx, network)",
});

/**
 * JSON Schema (draft-07) of the options other than `model` and `providerOptions`, which are
 * objects of the AI SDK (a LanguageModel, per-provider settings) and are checked by the factory.
 */
export const SUMMARIZER_AI_SDK_OPTIONS_SCHEMA = {
  title: `${PLUGIN_NAME} options`,
  description:
    "Summarises with any AI SDK LanguageModel (every provider the AI SDK has, local ones included). The provider settles the endpoint and the API key; the model is passed in code.",
  type: "object",
  additionalProperties: false,
  properties: Object.fromEntries(Object.entries(shared.properties).filter(([key]) => !PROVIDER_SETTLED.has(key))),
} as const;

/** The plugin's options after validation, defaults filled in. */
export interface SummarizerAiSdkOptions {
  /** The model to ask: a LanguageModel from any AI SDK provider, or a model id string (the global provider, e.g. the AI Gateway). */
  readonly model: LanguageModel;
  /** Per-provider settings sent with every request (the AI SDK's `providerOptions`). */
  readonly providerOptions: Readonly<Record<string, Readonly<Record<string, unknown>>>> | undefined;
  /** Default 0.3; `null` sends none. */
  readonly temperature: number | null;
  /** Default 4,000. */
  readonly maxOutputTokens: number;
  /** Most prompt tokens per request. Default 100,000. */
  readonly maxInputTokens: number;
  /** Per request, retries included; 0 for none. Default 120,000. */
  readonly timeoutMs: number;
  /** Default 3. */
  readonly maxRetries: number;
  /** Default 1,000. */
  readonly retryDelayMs: number;
  /** Default `none`. */
  readonly fallback: ModelFallback;
}

/** What the factory accepts: `model` and any other options (`undefined` means the default). */
export type SummarizerAiSdkOptionsInput = { readonly model: LanguageModel } & {
  readonly [K in Exclude<keyof SummarizerAiSdkOptions, "model">]?: SummarizerAiSdkOptions[K] | undefined;
};

const validate = createOptionsValidator<Omit<SummarizerAiSdkOptions, "model" | "providerOptions">>(PLUGIN_NAME, SUMMARIZER_AI_SDK_OPTIONS_SCHEMA);

function invalid(path: string, problem: string, hint: string): CompactionError {
  return new CompactionError(ErrorCodes.PLUGIN_OPTIONS_INVALID, `Invalid options for plugin '${PLUGIN_NAME}': ${path}: ${problem}`, {
    plugin: PLUGIN_NAME,
    path,
    hint,
  });
}

/** A LanguageModel object: what every AI SDK provider returns (`openai("gpt-4o-mini")`, `ollama("qwen3")`, ...). */
function isLanguageModel(value: unknown): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { specificationVersion?: unknown }).specificationVersion === "string" &&
    typeof (value as { doGenerate?: unknown }).doGenerate === "function"
  );
}

/** Validates the options once; throws COMPACTION_PLUGIN_OPTIONS_INVALID naming the option. */
export function resolveOptions(input: unknown): SummarizerAiSdkOptions {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw invalid("/", `expected an options object with a model, found ${describeValue(input)}`, "Pass { model: openai('gpt-4o-mini') } or another AI SDK model.");
  }
  const { model, providerOptions, ...rest } = input as Record<string, unknown>;
  if (!(isLanguageModel(model) || (typeof model === "string" && model.trim() !== ""))) {
    throw invalid(
      "/model",
      `expected an AI SDK LanguageModel (or a model id string), found ${describeValue(model)}`,
      "Pass the model object a provider gives, e.g. model: openai('gpt-4o-mini') from @ai-sdk/openai, or ollama('qwen3') from a community provider.",
    );
  }
  if (providerOptions !== undefined && (typeof providerOptions !== "object" || providerOptions === null || Array.isArray(providerOptions))) {
    throw invalid("/providerOptions", `expected an object keyed by provider, found ${describeValue(providerOptions)}`, "Pass e.g. { openai: { reasoningEffort: 'low' } }, or leave it out.");
  }
  const options = validate(Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined)));
  return { ...options, model: model as LanguageModel, providerOptions: providerOptions as SummarizerAiSdkOptions["providerOptions"] };
}
