/**
 * The kit a model-summarizer plugin is built from: a protocol (where to send a prompt, what to
 * send, how to read the answer) becomes the plugin factory, the stand-alone summarizer and the
 * default-key rule, all on the shared machinery (prompt, chunking, retries, deadline, key
 * handling, fallback). Every such plugin shares most of its options too, so their JSON Schema
 * fragments live here as well: one wording, one set of bounds.
 */
import {
  type CompactionPlugin,
  CompactionError,
  type Compactor,
  createOptionsValidator,
  ErrorCodes,
  type Summarizer,
} from "@compaction/core";
import { type ModelFallback, installModelSummarizer } from "./install-model-summarizer.js";
import { createModelSummarizer } from "./model-summarizer.js";
import { type PostJsonOptions, postJson } from "./post-json.js";
import type { SummaryPrompt } from "./summary-prompt.js";
import type { SummarizerWarn } from "./warnings.js";

/** The options every model-summarizer plugin has, after validation with defaults. */
export interface ModelSummarizerPluginOptions {
  /** The model to ask. Required. */
  readonly model: string;
  /** Named in errors and the summarizer's name. */
  readonly provider: string;
  readonly baseUrl: string;
  /** Environment variable holding the key; `null`: the protocol's own variable for its own host, else none. */
  readonly apiKeyEnv: string | null;
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

/** One request of a protocol: what `postJson` sends (the URL is the kit's). */
export type ProtocolRequest = Pick<PostJsonOptions, "headers" | "body" | "errorMessage">;

/** What a protocol plugin supplies; everything else is the kit's. */
export interface ModelProtocol<Options extends ModelSummarizerPluginOptions> {
  /** The plugin's name (`summarizer-openai`): its tap, its errors and its options key. */
  readonly plugin: string;
  /** The plugin's options schema (draft-07), usually built with `modelSummarizerOptionsSchema`. */
  readonly schema: object;
  /** How a user names a model, for the error when `model` is missing: `"gpt-4o-mini"`. */
  readonly modelExample: string;
  /** The key the protocol uses without `apiKeyEnv`, sent only to its own host. */
  readonly defaultKey: { readonly host: string; readonly env: string };
  /** The endpoint one prompt goes to, from the options (`<baseUrl>/chat/completions`). */
  endpoint(options: Options): string;
  /** Headers, body and error reader of one request. */
  request(prompt: SummaryPrompt, apiKey: string | undefined, options: Options): ProtocolRequest;
  /** The summary text in a successful answer; throws a ModelCallError for an unusable one. */
  read(body: unknown): string;
}

/** A model-summarizer plugin, made from its protocol. */
export interface ModelSummarizerPlugin<Options extends ModelSummarizerPluginOptions, Input> {
  /** The plugin factory: `summarizer-openai({ model })` in a preset or config. */
  plugin(options?: Input): CompactionPlugin;
  /**
   * The summarizer alone, for hosts that pass it to `new Compactor({ summarizer })`. Without a
   * fallback: a failure rejects. `onWarning` hears when a summary was trimmed to its length.
   */
  createSummarizer(options: Input, onWarning?: SummarizerWarn): Summarizer;
  /** The environment variable the key is read from: the option, else the protocol's own for its own host only. */
  keyVariable(options: Pick<Options, "apiKeyEnv" | "baseUrl">): string | null;
}

/** Builds a model-summarizer plugin from its protocol. Options are validated once per factory call. */
export function defineModelSummarizer<Options extends ModelSummarizerPluginOptions, Input = Partial<Options>>(
  protocol: ModelProtocol<Options>,
): ModelSummarizerPlugin<Options, Input> {
  const validate = createOptionsValidator<Options>(protocol.plugin, protocol.schema);

  function resolveOptions(input: unknown): Options {
    const options = validate(input);
    if (typeof options.model !== "string") {
      throw new CompactionError(
        ErrorCodes.PLUGIN_OPTIONS_INVALID,
        `Invalid options for plugin '${protocol.plugin}': /model: expected the name of the model to ask, found none. Set model, e.g. ${protocol.modelExample}.`,
        { plugin: protocol.plugin, path: "/model", hint: `See the '${protocol.plugin}' options in @compaction/core/schema.json.` },
      );
    }
    return options;
  }

  function keyVariable(options: Pick<Options, "apiKeyEnv" | "baseUrl">): string | null {
    if (options.apiKeyEnv !== null) return options.apiKeyEnv;
    return hostOf(options.baseUrl) === protocol.defaultKey.host ? protocol.defaultKey.env : null;
  }

  function summarizerFor(options: Options, onWarning?: SummarizerWarn): Summarizer {
    const url = protocol.endpoint(options);
    return createModelSummarizer({
      provider: options.provider,
      model: options.model,
      url,
      plugin: protocol.plugin,
      apiKeyEnv: keyVariable(options),
      maxInputTokens: options.maxInputTokens,
      maxRetries: options.maxRetries,
      retryDelayMs: options.retryDelayMs,
      timeoutMs: options.timeoutMs,
      ...(onWarning !== undefined ? { onWarning } : {}),
      async complete({ system, user, signal, apiKey }) {
        const request = protocol.request({ system, user }, apiKey, options);
        const body = await postJson({ url, ...request, ...(signal !== undefined ? { signal } : {}) });
        return protocol.read(body);
      },
    });
  }

  return {
    plugin(input?: Input): CompactionPlugin {
      const options = resolveOptions(input);
      return {
        name: protocol.plugin,
        apply(compactor: Compactor<unknown>) {
          installModelSummarizer(compactor, {
            plugin: protocol.plugin,
            fallback: options.fallback,
            create: (warn) => summarizerFor(options, warn),
          });
        },
      };
    },
    createSummarizer: (input, onWarning) => summarizerFor(resolveOptions(input), onWarning),
    keyVariable,
  };
}

/** `<baseUrl><path>` without doubled slashes. */
export function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, "")}${path}`;
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// The shared options schema

/** What differs between protocols in the options every model-summarizer plugin has. */
export interface ModelSummarizerSchemaInput {
  /** The plugin's name, for the schema's title. */
  readonly plugin: string;
  readonly description: string;
  /** Descriptions of `model`, `provider`, `baseUrl` and `apiKeyEnv` (their wording names the protocol). */
  readonly describe: { readonly model: string; readonly provider: string; readonly baseUrl: string; readonly apiKeyEnv: string };
  readonly defaults: { readonly provider: string; readonly baseUrl: string };
  /** The protocol's own options, placed after `apiKeyEnv` (temperature, maxTokens, ...). */
  readonly protocolProperties: ModelSummarizerOptionsSchema["properties"];
  /** What is retried, for the description of `maxRetries`: `429, 5xx`. */
  readonly retriedStatuses: string;
}

/** A draft-07 options schema: one closed object whose every property is described. */
export interface ModelSummarizerOptionsSchema {
  readonly title: string;
  readonly description: string;
  readonly type: "object";
  readonly additionalProperties: false;
  readonly properties: Readonly<Record<string, { readonly description: string; readonly default?: unknown; readonly [keyword: string]: unknown }>>;
}

/**
 * The options schema of a model-summarizer plugin (draft-07, a plain JSON literal the core's
 * config schema carries a copy of). `model` has no default and is not `required`: the factory
 * requires it, so `options.<plugin>` entries that set only some options stay valid.
 */
export function modelSummarizerOptionsSchema(input: ModelSummarizerSchemaInput): ModelSummarizerOptionsSchema {
  return {
    title: `${input.plugin} options`,
    description: input.description,
    type: "object",
    additionalProperties: false,
    properties: {
      model: { type: "string", minLength: 1, description: input.describe.model },
      provider: { type: "string", minLength: 1, default: input.defaults.provider, description: input.describe.provider },
      baseUrl: { type: "string", pattern: "^https?://", default: input.defaults.baseUrl, description: input.describe.baseUrl },
      apiKeyEnv: { type: ["string", "null"], pattern: "^[A-Za-z_][A-Za-z0-9_]*$", default: null, description: input.describe.apiKeyEnv },
      ...input.protocolProperties,
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
        description: `Retries of a request that failed with ${input.retriedStatuses} or a network error, with exponential backoff and jitter; a server's Retry-After is honoured (up to 60 s).`,
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
}
