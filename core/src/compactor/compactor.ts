import { CompactionError, ErrorCodes, describeError } from "../errors.js";
import { FactsCache, type MessageAdapter } from "../messages/adapter.js";
import { describeValue } from "../messages/message-fields.js";
import { missingSummarizer, type Summarizer } from "../summarizer/summarizer.js";
import { MessageTokenCounter } from "../tokens/message-tokens.js";
import { createTiktokenCounter } from "../tokens/tiktoken-counter.js";
import type { TokenCounter } from "../tokens/token-counter.js";
import { compact } from "./compact.js";
import type { CompactionEngine } from "./engine.js";
import { type CompactorHooks, createHooks } from "./hooks.js";
import type { CompactionPlugin } from "./plugin.js";
import { replyReserveTokens, type ReserveSetting, type ReserveSource } from "./reply-reserve.js";
import { RequestShaper } from "./request-shaper.js";
import type { CompactionResult } from "./result.js";
import type { CompactInput } from "./run.js";
import { type ShapedRequest, type ShapeRequestInput, type ShapingEngine, shapeRequest } from "./shape-request.js";
import { autoCompactTokens } from "./usable-window.js";

export type { CompactorHooks } from "./hooks.js";

export interface CompactorOptions<T> {
  readonly adapter: MessageAdapter<T>;
  /** Default: tiktoken with o200k_base, owned (and disposed) by the compactor. */
  readonly tokenCounter?: TokenCounter;
  /** Whether `dispose()` frees `tokenCounter`. Default: only when the compactor created it. */
  readonly ownsTokenCounter?: boolean;
  /**
   * Provider tokens per counted token, when the host knows it. Without it the ratio is learned
   * from the usage figures in the messages (see `MessageTokenCounter.calibration`).
   */
  readonly tokenRatio?: number;
  /**
   * The summarizer plugins call. Default: none until a summarizer plugin installs one (every
   * built-in preset lists `@compaction/plugin-summarizer-extractive`, which needs no model and no
   * key); a run that asks for a summary without one fails with COMPACTION_SUMMARIZER_MISSING.
   */
  readonly summarizer?: Summarizer;
  /** Applied in order. */
  readonly plugins?: readonly CompactionPlugin[];
  /** Default context window for `compact()` calls that do not pass one. */
  readonly contextWindow?: number;
  /**
   * Tokens kept free for the reply, as the user set them (checked against each window: at most
   * half of it). Default: the window's own (`replyReserveTokens`: the smaller of 16,384 and an
   * eighth of the window, or `maxOutputTokens` where known).
   */
  readonly reserveTokens?: number;
  /** Where `reserveTokens` was set, for the error when it does not fit a window. */
  readonly reserveSource?: ReserveSource;
  /** The most tokens the model writes in one reply, when the host knows it: the default reserve. */
  readonly maxOutputTokens?: number;
  /** Longest summary `run.summarize()` asks for when a plugin does not say. Default 4,000. */
  readonly summaryMaxTokens?: number;
  /** When the host should compact on its own. Default: enabled at 0.8 of the context window. */
  readonly autoCompact?: AutoCompactSettings;
  /** The resolved configuration this compactor was built from, if any (see `createCompactor`). */
  readonly config?: unknown;
}

/** The auto-compaction settings a host's agent loop reads (the compactor itself never triggers). */
export interface AutoCompactSettings {
  readonly enabled: boolean;
  /** Share of the context window (0..1) above which the host should compact. */
  readonly threshold: number;
}

/** The threshold used when neither the config nor the preset sets one. */
export const DEFAULT_AUTO_COMPACT_THRESHOLD = 0.8;

/**
 * The engine. Holds its hooks and plugins and nothing global: two compactors with different
 * plugins run side by side in one process.
 */
export class Compactor<T> implements CompactionEngine<T> {
  readonly hooks: CompactorHooks<T> = createHooks<T>();
  readonly adapter: MessageAdapter<T>;
  readonly facts: FactsCache<T>;
  readonly tokens: MessageTokenCounter<T>;
  readonly plugins: CompactionPlugin[] = [];
  readonly config: unknown;
  contextWindow: number | undefined;
  /** The reserve for the reply the user set, or undefined for each window's own (see `reserveFor`). */
  reserveTokens: number | undefined;
  /** Where `reserveTokens` was set (a config file's key, an option), named when it does not fit. */
  reserveSource: ReserveSource;
  /** The model's reply limit, when the host knows it: the reserve where the user set none. */
  maxOutputTokens: number | undefined;
  summaryMaxTokens: number;
  autoCompact: AutoCompactSettings;
  readonly #ownsCounter: boolean;
  #overhead: number | undefined;
  #summarizer: Summarizer | undefined;

  constructor(options: CompactorOptions<T>) {
    if (!options || typeof options.adapter?.readFacts !== "function") {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, "new Compactor() needs an `adapter` (a MessageAdapter).", {
        hint: "Pass createPiAdapter(), createOpenAIAdapter() or createAnthropicAdapter().",
      });
    }
    this.adapter = options.adapter;
    this.facts = new FactsCache(options.adapter);
    this.#ownsCounter = options.ownsTokenCounter ?? options.tokenCounter === undefined;
    this.tokens = new MessageTokenCounter(this.facts, options.tokenCounter ?? createTiktokenCounter(), {
      ...(options.tokenRatio === undefined ? {} : { tokenRatio: options.tokenRatio }),
    });
    if (options.summarizer !== undefined) this.summarizer = options.summarizer;
    this.contextWindow = options.contextWindow;
    this.reserveTokens = options.reserveTokens;
    this.reserveSource = options.reserveSource ?? { name: "the compactor's reserveTokens" };
    this.maxOutputTokens = options.maxOutputTokens;
    this.summaryMaxTokens = options.summaryMaxTokens ?? 4000;
    this.autoCompact = options.autoCompact ?? { enabled: true, threshold: DEFAULT_AUTO_COMPACT_THRESHOLD };
    this.config = options.config;
    for (const plugin of options.plugins ?? []) this.use(plugin);
  }

  /**
   * The size, as the provider counts it, past which a host compacts on its own: the auto-compaction
   * threshold's share of the usable window (`usableWindow`: the window, or less when the reserve
   * for the reply takes over a tenth of it), so a host compacts before what it holds outgrows what
   * it can send, and between two compactions its requests only grow at their end. `reserveTokens`:
   * a host's own reserve; default the compactor's for the window (`reserveFor`).
   */
  autoCompactTokens(contextWindow: number | undefined = this.contextWindow, reserveTokens?: number): number {
    if (contextWindow === undefined || !Number.isFinite(contextWindow) || contextWindow <= 0) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `autoCompactTokens() needs a positive contextWindow; found ${String(contextWindow)}.`, {
        hint: "Pass the model's context window, or set contextWindow in .compactionrc.",
      });
    }
    return autoCompactTokens(contextWindow, Math.min(reserveTokens ?? this.reserveFor(contextWindow), contextWindow - 1), this.autoCompact.threshold);
  }

  /**
   * The tokens a request at `contextWindow` leaves free for the reply (`replyReserveTokens`): a
   * host's `reserveTokens` option, else the config's, else the window's own reserve (from the
   * host's or the compactor's `maxOutputTokens` where known). Every host sizes its budget with it.
   * Throws COMPACTION_CONFIG_INVALID or COMPACTION_INPUT_INVALID, naming where it was set, when the
   * user's does not fit the window (more than half of it).
   */
  reserveFor(contextWindow: number | undefined = this.contextWindow, host: ReserveSetting = {}): number {
    if (contextWindow === undefined || !Number.isFinite(contextWindow) || contextWindow <= 0) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `reserveFor() needs a positive contextWindow; found ${String(contextWindow)}.`, {
        hint: "Pass the model's context window, or set contextWindow in .compactionrc.",
      });
    }
    // A host's own setting (its reserveTokens option, the model's reply limit it knows) wins over the compactor's.
    const own = host.reserveTokens !== undefined;
    return replyReserveTokens(contextWindow, {
      reserveTokens: own ? host.reserveTokens : this.reserveTokens,
      source: own ? (host.source ?? { name: "the reserveTokens option" }) : this.reserveSource,
      maxOutputTokens: host.maxOutputTokens ?? this.maxOutputTokens,
    });
  }

  /**
   * The summarizer plugins use. A summarizer plugin sets it in `apply` (a model summarizer
   * replaces any other; the extractive one fills in only where none is installed). Without one
   * it is a stand-in whose every summary fails with COMPACTION_SUMMARIZER_MISSING, naming the
   * packages to install, so a compactor whose plugins never summarise needs no summarizer.
   */
  get summarizer(): Summarizer {
    return this.#summarizer ?? missingSummarizer;
  }

  set summarizer(summarizer: Summarizer) {
    if (typeof summarizer?.summarize !== "function" || typeof summarizer.name !== "string") {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `Expected a summarizer { name, summarize(request) }, found ${describeValue(summarizer)}.`, {
        hint: "Apply a summarizer plugin (summarizerExtractive(), summarizerOpenAI({ model }), ...) or pass one of their summarizers.",
      });
    }
    // The stand-in of a compactor with none (copied from another compactor) installs nothing.
    this.#summarizer = summarizer === missingSummarizer ? undefined : summarizer;
  }

  /** True once a summarizer is installed (given to the constructor or set by a plugin). */
  get hasSummarizer(): boolean {
    return this.#summarizer !== undefined;
  }

  /** Applies a plugin: it taps the hooks it needs. */
  use(plugin: CompactionPlugin): this {
    if (typeof plugin !== "object" || plugin === null || typeof plugin.name !== "string" || typeof plugin.apply !== "function") {
      const found = typeof plugin === "function" ? "a function (a plugin factory?)" : describeValue(plugin);
      throw new CompactionError(ErrorCodes.PLUGIN_INVALID, `Expected a plugin { name, apply(compactor) }, found ${found}.`, {
        hint: "Call the plugin package's factory: rolling(options), not rolling.",
      });
    }
    try {
      plugin.apply(this);
    } catch (error) {
      throw new CompactionError(ErrorCodes.PLUGIN_FAILED, `Plugin '${plugin.name}' failed in apply(): ${describeError(error)}`, {
        plugin: plugin.name,
        hook: "apply",
        cause: error,
      });
    }
    this.plugins.push(plugin);
    return this;
  }

  /** True when an applied plugin declares the capability (see `CompactionPlugin.provides`). */
  provides(capability: string): boolean {
    return this.plugins.some((plugin) => plugin.provides?.includes(capability) === true);
  }

  /**
   * Runs one compaction, the chain of stages in compact.ts. Never throws for plugin or summarizer
   * failures: a run that is cancelled or fails returns the input messages untouched and says why.
   */
  async compact(input: CompactInput<T>): Promise<CompactionResult<T>> {
    return await compact(this, input);
  }

  /**
   * The messages to send for `messages` (the context a host holds, which is not changed): the
   * plugins' `shapeRequest` taps (layered prunes old tool outputs), then the core's shrinking of
   * what is still over the budget. Deterministic: the same messages and input give the same
   * request. Hosts call it before every model call (the context manager's `send()`, the pi
   * extension's `context` event, OpenClaw's `assemble`).
   */
  shapeRequest(messages: readonly T[], input: ShapeRequestInput = {}): ShapedRequest<T> {
    return shapeRequest(this.#shapingEngine(), messages, input);
  }

  /**
   * A sender for one conversation that keeps what it sends prefix-stable (see `RequestShaper`):
   * a message shrunk or left out once goes out in that same form until the context is compacted,
   * and a request that must shrink frees room for the ones after it. Hosts that send request
   * after request (the context manager, the pi extension, OpenClaw) use one per conversation, so
   * the provider's prompt cache holds between compactions; `shapeRequest()` is the same shaping
   * without the memory.
   */
  createRequestShaper(): RequestShaper<T> {
    const engine = this.#shapingEngine();
    return new RequestShaper<T>({ ...engine, autoCompactTokens: (contextWindow, reserveTokens) => this.autoCompactTokens(contextWindow, reserveTokens) });
  }

  #shapingEngine(): ShapingEngine<T> {
    return {
      adapter: this.adapter,
      tokens: this.tokens,
      contextWindow: this.contextWindow,
      reserveFor: (contextWindow) => this.reserveFor(contextWindow),
      recallTool: this.recallTool(),
      runTaps: (list, shaping) => (this.hooks.shapeRequest.isUsed() ? this.hooks.shapeRequest.call(list, shaping) : list),
    };
  }

  /**
   * The recall tool shrink markers point at: `memory_search` when an applied plugin provides it
   * (the recall plugin's default tool name), else the tool a plugin named `recall` provides.
   */
  recallTool(): string | undefined {
    if (this.provides("memory_search")) return "memory_search";
    return this.plugins.find((plugin) => plugin.name === "recall")?.provides?.[0];
  }

  /** Frees the token counter if the compactor created it. */
  dispose(): void {
    if (this.#ownsCounter) this.tokens.counter.dispose();
  }

  /** What an empty summary message costs in this format (its wrapper text), counted once. */
  summaryOverheadTokens(): number {
    this.#overhead ??= this.tokens.count(this.adapter.createSummary(""));
    return this.#overhead;
  }
}
