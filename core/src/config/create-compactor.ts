import { Compactor } from "../compactor/compactor.js";
import { CompactionError, isCompactionError, ErrorCodes } from "../errors.js";
import type { MessageAdapter } from "../messages/adapter.js";
import { createAnthropicAdapter } from "../messages/anthropic-adapter.js";
import { createOpenAIAdapter } from "../messages/openai-adapter.js";
import { createPiAdapter } from "../messages/pi-adapter.js";
import { EXTRACTIVE_SUMMARIZER_PACKAGE } from "../summarizer/summarizer.js";
import { createEstimateCounter } from "../tokens/estimate-counter.js";
import { type TokenCountStore, withCountStore } from "../tokens/count-store.js";
import type { EncoderImageStore } from "../tokens/encoder-image.js";
import { createTiktokenCounter, tiktokenEncodingNames } from "../tokens/tiktoken-counter.js";
import type { TokenCounter } from "../tokens/token-counter.js";
import { configInvalid } from "./config-error.js";
import { loadConfigDetailed, type LoadConfigOptions, type LoadedConfig } from "./load-config.js";
import { resolvePlugin, shortName } from "./resolve-module.js";
import { resolvePlugins } from "./resolve-plugins.js";
import { DEFAULT_AUTO_COMPACT_THRESHOLD } from "../compactor/compactor.js";
import type { ReserveSource } from "../compactor/reply-reserve.js";
import { deepFreeze } from "./plain-data.js";
import { didYouMean, suggest } from "./suggest.js";
import type { AdapterName } from "./types.js";

/** Where to find the config and which agent's section to apply. */
export interface CreateCompactorOptions extends LoadConfigOptions {
  /**
   * Read messages in this format instead of the config's `adapter`: for a caller whose messages
   * come from elsewhere (e.g. a Claude Code transcript, which holds Anthropic messages), by name,
   * or a MessageAdapter of the caller's own (a framework integration's message format).
   */
  readonly adapter?: AdapterName | MessageAdapter<any>;
  /**
   * Counts kept between processes (see `withCountStore`): the tiktoken counter reads them first
   * and keeps in it what it counts. The estimate counter does not use it.
   */
  readonly countStore?: TokenCountStore;
  /**
   * Where the tiktoken counter keeps its built encoder's image, so that a new process starts it
   * in 80–90 ms (see `startEncoderWithImage`). The estimate counter does not use it.
   */
  readonly encoderImage?: EncoderImageStore;
}

/**
 * The summarizers `summarizer.name` may name, and the plugin package of each. The core ships
 * none: the named package is loaded, the way config loads plugins, only when no plugin of the
 * config or preset installed a summarizer.
 */
export const BUILTIN_SUMMARIZERS: Readonly<Record<string, string>> = Object.freeze({
  extractive: EXTRACTIVE_SUMMARIZER_PACKAGE,
});

const ADAPTERS: Readonly<Record<AdapterName, () => MessageAdapter<any>>> = {
  pi: () => createPiAdapter(),
  openai: () => createOpenAIAdapter(),
  anthropic: () => createAnthropicAdapter(),
};

/**
 * A Compactor built from the config found for `cwd` (or `configPath`), with `agent`'s section
 * applied: its adapter, token counter, summarizer, and the config's plugins followed by the
 * preset's. `compactor.config` is the ResolvedConfig. The message type `T` is the caller's
 * to state, since the adapter is chosen by config.
 */
export async function createCompactor<T = unknown>(options: CreateCompactorOptions = {}): Promise<Compactor<T>> {
  const loaded = await loadConfigDetailed(options);
  const { config } = loaded;
  const summarizerPackage = summarizerPackageOf(loaded);
  const { plugins, preset, warnings, applied } = await resolvePlugins(loaded);
  const adapter = adapterFor(options.adapter ?? config.adapter) as MessageAdapter<T>;
  const tokenCounter = createTokenCounter(loaded, options);
  try {
    const compactor = new Compactor<T>({
      adapter,
      tokenCounter,
      ownsTokenCounter: true,
      ...(config.tokenizer.ratio === undefined ? {} : { tokenRatio: config.tokenizer.ratio }),
      plugins,
      contextWindow: config.contextWindow,
      ...(config.reserveTokens === undefined ? {} : { reserveTokens: config.reserveTokens, reserveSource: reserveSourceOf(loaded) }),
      summaryMaxTokens: config.summarizer.maxTokens,
      autoCompact: {
        enabled: config.autoCompact.enabled,
        threshold: config.autoCompact.threshold ?? preset.preset.autoCompact?.threshold ?? DEFAULT_AUTO_COMPACT_THRESHOLD,
      },
      // The config with what was loaded, and what plugin resolution skipped after what the file search skipped.
      config: deepFreeze({
        ...config,
        warnings: [...config.warnings, ...warnings],
        applied: { preset: { name: preset.name, request: preset.request, file: preset.file }, plugins: applied },
      }),
    });
    if (!compactor.hasSummarizer) await installConfiguredSummarizer(compactor, summarizerPackage, loaded);
    return compactor;
  } catch (error) {
    tokenCounter.dispose();
    throw error;
  }
}

/** Where the config set `reserveTokens`: its file and key, for the error when a host's window cannot hold it. */
function reserveSourceOf(loaded: LoadedConfig): ReserveSource {
  const { filepath } = loaded.config;
  return filepath === null ? { name: "reserveTokens" } : { name: "reserveTokens", file: filepath, path: loaded.pointerTo("reserveTokens") };
}

function adapterFor(adapter: AdapterName | MessageAdapter<any>): MessageAdapter<any> {
  return typeof adapter === "string" ? ADAPTERS[adapter]() : adapter;
}

/** The package of the summarizer `summarizer.name` names; a name not known fails here, before anything is loaded. */
function summarizerPackageOf(loaded: LoadedConfig): string {
  const { name } = loaded.config.summarizer;
  const found = Object.hasOwn(BUILTIN_SUMMARIZERS, name) ? BUILTIN_SUMMARIZERS[name] : undefined;
  if (found !== undefined) return found;
  const known = Object.keys(BUILTIN_SUMMARIZERS);
  const nearest = suggest(name, known);
  throw configInvalid(loaded.config.filepath ?? undefined, [
    {
      path: loaded.pointerTo("summarizer", "name"),
      message: `expected a known summarizer (${known.join(", ")}), found '${name}'`,
      hint: `${nearest === undefined ? "" : `Did you mean '${nearest}'? `}Known summarizers: ${known.join(", ")}.`,
    },
  ]);
}

/**
 * Where no plugin of the config or preset installed a summarizer (a preset of the user's own
 * that lists none), the one `summarizer.name` names: its plugin package is resolved the way
 * config plugins are, and applied with the options the config gives it under its short name.
 */
async function installConfiguredSummarizer(compactor: Compactor<any>, packageName: string, loaded: LoadedConfig): Promise<void> {
  const file = loaded.config.filepath ?? undefined;
  const path = loaded.pointerTo("summarizer", "name");
  const { name } = loaded.config.summarizer;
  let factory;
  try {
    ({ factory } = await resolvePlugin(packageName, loaded.baseDir, {
      cwd: loaded.cwd,
      namedBy: `summarizer '${name}'`,
      ...(file === undefined ? {} : { file }),
      path,
      ...(loaded.boundary === null ? {} : { boundary: loaded.boundary }),
    }));
  } catch (error) {
    if (!isCompactionError(error) || error.code !== ErrorCodes.PLUGIN_NOT_FOUND) throw error;
    throw new CompactionError(
      ErrorCodes.PLUGIN_NOT_FOUND,
      `The summarizer '${name}' is the package ${packageName}, which is not installed, and no plugin of the config or preset installs a summarizer.`,
      {
        ...(file === undefined ? {} : { file }),
        path,
        plugin: packageName,
        hint: `Install it (npm install ${packageName}), or add a summarizer plugin to the config's plugins. ${error.hint ?? ""}`.trimEnd(),
        cause: error,
      },
    );
  }
  const key = shortName("plugin", packageName);
  const options = Object.hasOwn(loaded.config.options, key) ? loaded.config.options[key] : undefined;
  compactor.use(options === undefined ? factory() : factory({ ...options }));
}

function createTokenCounter(loaded: LoadedConfig, { countStore, encoderImage }: CreateCompactorOptions): TokenCounter {
  const { counter, encoding } = loaded.config.tokenizer;
  if (counter === "estimate") return createEstimateCounter();
  try {
    const tiktoken = createTiktokenCounter({ encoding, ...(encoderImage === undefined ? {} : { image: encoderImage }) });
    return countStore === undefined ? tiktoken : withCountStore(tiktoken, countStore);
  } catch (error) {
    if (!isCompactionError(error) || error.code !== ErrorCodes.ENCODING_UNKNOWN) throw error;
    throw configInvalid(loaded.config.filepath ?? undefined, [
      {
        path: loaded.pointerTo("tokenizer", "encoding"),
        message: `expected a tiktoken encoding, found '${encoding}'`,
        hint: `${didYouMean(encoding, tiktokenEncodingNames())} Known encodings: ${tiktokenEncodingNames().join(", ")}.`.trimStart(),
      },
    ]);
  }
}
