import { AsyncSeriesBailHook, AsyncSeriesHook, AsyncSeriesWaterfallHook, SyncWaterfallHook } from "tapable";
import { CompactionError, ErrorCodes, describeError } from "../errors.js";
import { createCompactionEvent } from "../event.js";
import { FactsCache, type MessageAdapter } from "../messages/adapter.js";
import { describeValue } from "../messages/message-fields.js";
import { checkCut } from "../cut/check-cut.js";
import { carryRequest } from "./carry-request.js";
import type { Cut } from "../cut/cut.js";
import { shrinkToBudget } from "../shrink/shrink-to-budget.js";
import { autoCompactTokens, compactedTargetTokens, usableWindow } from "./usable-window.js";
import { replyReserveTokens, type ReserveSetting, type ReserveSource } from "./reply-reserve.js";
import { RequestShaper } from "./request-shaper.js";
import { summaryHasContent } from "../summarizer/has-content.js";
import { fitCompacted, fitCutToBudget, keepNewestRequest, latestCutIndex, summaryAllowance } from "./fit-budget.js";
import { growthRefusal } from "./refuse-growth.js";
import { summarizeCut } from "./summarize-cut.js";
import { guardShapingTap, type RequestShaping, type ShapedRequest, type ShapeRequestInput, type ShapingEngine, shapeRequest } from "./shape-request.js";
import { missingSummarizer, type Summarizer } from "../summarizer/summarizer.js";
import { recordedCalibration } from "../tokens/calibration.js";
import { budgetRatioOf, checkAnchor, countedBudget, MessageTokenCounter, providerRatio } from "../tokens/message-tokens.js";
import { createTiktokenCounter } from "../tokens/tiktoken-counter.js";
import type { TokenCounter } from "../tokens/token-counter.js";
import type { CompactionPlugin } from "./plugin.js";
import type { CompactionResult } from "./result.js";
import { type CompactInput, CompactionRun, isEmptyDraft, type SummaryDraft } from "./run.js";
import { RunState } from "./run-state.js";

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

function createHooks<T>() {
  return Object.freeze({
    /** Prepare or transform the working set (e.g. prune old tool outputs), or cancel. */
    beforeCompact: new AsyncSeriesHook<[CompactionRun<T>]>(["run"]),
    /** The first plugin that returns a cut wins. */
    selectCut: new AsyncSeriesBailHook<[CompactionRun<T>], Cut | undefined | null>(["run"]),
    /** Each plugin adds to or rewrites the summary draft and passes it on. */
    summarize: new AsyncSeriesWaterfallHook<[SummaryDraft, CompactionRun<T>]>(["draft", "run"]),
    /** Persist the event, index for recall, warn. */
    afterCompact: new AsyncSeriesHook<[CompactionResult<T>, CompactionRun<T>]>(["result", "run"]),
    /**
     * Send time, not a run: each plugin may replace messages in what is sent (never in the
     * transcript) and passes the list on. Sync and pure: the same input gives the same request.
     */
    shapeRequest: new SyncWaterfallHook<[readonly T[], RequestShaping<T>]>(["messages", "shaping"]),
  });
}

export type CompactorHooks<T> = ReturnType<typeof createHooks<T>>;

/**
 * The engine. Holds its hooks and plugins and nothing global: two compactors with different
 * plugins run side by side in one process.
 */
export class Compactor<T> {
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
    for (const [name, hook] of Object.entries(this.hooks)) hook.intercept({ register: (tap) => bindPluginView(tap, name) });
    this.hooks.selectCut.intercept({ register: recordCutChooser });
    this.hooks.summarize.intercept({ register: checkDraftReturned });
    this.hooks.shapeRequest.intercept({ register: guardShapingTap });
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
   * Runs one compaction. Never throws for plugin or summarizer failures: a run that is
   * cancelled or fails returns the input messages untouched and says why.
   */
  async compact(input: CompactInput<T>): Promise<CompactionResult<T>> {
    const run = this.#createRun(input);
    // What the hooks are called with; each tap receives its own plugin's view (bindPluginView).
    const coreView = viewFor(run, "core");
    const untouched = (status: "noop" | "cancelled" | "failed", reason: string, error: CompactionError | null) =>
      this.#untouched(run, status, reason, error);
    try {
      await this.hooks.beforeCompact.promise(coreView);
      const stopped = this.#stopped(run);
      if (stopped) return untouched("cancelled", stopped.message, stopped);

      run.running = "core";
      run.runningHook = null;
      const proposed = await this.hooks.selectCut.promise(coreView);
      const selectedBy = run.cutChosenBy ?? "core";
      run.running = "core";
      run.runningHook = null;
      const stoppedAtCut = this.#stopped(run);
      if (stoppedAtCut) return untouched("cancelled", stoppedAtCut.message, stoppedAtCut);
      const overBudget = sumAll(run.view.tokens) > run.budget;
      // Over the budget, a run must compact even when no plugin chose where: the core cuts at
      // the newest user message (and shrinks what that keeps, below).
      const chosen = proposed ?? (overBudget ? { firstKeptIndex: latestCutIndex(run.view), layer: "fit" } : null);
      if (chosen === null) return await this.#withoutCut(run, noCutReason(run));
      const cutBy = proposed === undefined || proposed === null ? "core" : selectedBy;

      const newestRequest = { targetTokens: run.targetCounted, requestAhead: !run.suffixOnly };
      const kept = keepNewestRequest(run.view, chosen, cutBy, newestRequest);
      if (kept.repair !== null) run.warnings.push(`[core] ${kept.repair}`);
      const checked = checkCut(run.view, kept.cut, { plugin: cutBy, budget: Number.POSITIVE_INFINITY, requestAhead: newestRequest.requestAhead });
      for (const repair of checked.repairs) run.warnings.push(`[core] ${repair}`);
      const fitted = fitCutToBudget({
        view: run.view,
        messages: run.messages,
        tokens: this.tokens,
        checked,
        budget: run.budget,
        summaryOverheadTokens: run.summaryOverheadTokens,
        summaryMaxTokens: run.summaryMaxTokens,
        recallTool: run.recallTool,
        newestRequest,
        headroomTo: run.targetCounted,
        minKeptTokens: run.minKeptTokens,
      });
      for (const repair of fitted.repairs) run.warnings.push(`[core] ${repair}`);
      run.cut = fitted.cut;
      run.shrink = fitted.shrink;
      if (run.cut.compactedIndices.length === 0) {
        run.cut = null;
        run.shrink = null;
        return await this.#withoutCut(run, `The cut chosen by '${cutBy}' compacts no messages.`);
      }
      run.previousSummary = latestSummary(run);
      if (run.cut.compactedIndices.every((i) => run.view.facts[i]?.kind === "summary")) {
        run.cut = null;
        return await this.#withoutCut(run, "Nothing new to compact: the cut would only summarise the previous summary again.");
      }
      const unrecordable = keptMessagesChanged(run);
      if (unrecordable) return untouched("failed", unrecordable.message, unrecordable);

      let draft = await this.hooks.summarize.promise({ text: "", kind: "summary" }, coreView);
      run.running = "core";
      run.runningHook = null;
      // A cut the core chose itself (no plugin selected one) is summarised by the core when no
      // plugin took it, as pi does.
      if (cutBy === "core" && isEmptyDraft(draft)) draft = { kind: "summary", text: await summarizeCut(coreView) };
      if (summaryHasContent(draft.text)) draft = carryRequest(run.view, run.cut, draft, run.previousSummary);
      const stoppedAtSummary = this.#stopped(run);
      if (stoppedAtSummary) return untouched("cancelled", stoppedAtSummary.message, stoppedAtSummary);
      if (draft.kind !== "none" && !summaryHasContent(draft.text)) {
        const what = draft.text.trim() === "" ? "No plugin wrote a summary or note" : "The summary holds only headings (nothing in it)";
        const error = new CompactionError(
          ErrorCodes.SUMMARIZER_FAILED,
          `${what} for the ${run.cut.compactedIndices.length} compacted messages; a summary with nothing in it is never written, so nothing was changed.`,
          { hint: "Add a strategy plugin that summarises (e.g. safeguard), or one that sets the draft kind to 'none' on purpose." },
        );
        return untouched("failed", error.message, error);
      }
      return await this.#finish(run, cutBy, draft);
    } catch (error) {
      const failure = asRunError(error, run);
      const status = failure.code === ErrorCodes.CANCELLED ? "cancelled" : "failed";
      return untouched(status, failure.message, failure);
    }
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
      recallTool: this.#recallTool(),
      runTaps: (list, shaping) => (this.hooks.shapeRequest.isUsed() ? this.hooks.shapeRequest.call(list, shaping) : list),
    };
  }

  /**
   * The recall tool shrink markers point at: `memory_search` when an applied plugin provides it
   * (the recall plugin's default tool name), else the tool a plugin named `recall` provides.
   */
  #recallTool(): string | undefined {
    if (this.provides("memory_search")) return "memory_search";
    return this.plugins.find((plugin) => plugin.name === "recall")?.provides?.[0];
  }

  /** Frees the token counter if the compactor created it. */
  dispose(): void {
    if (this.#ownsCounter) this.tokens.counter.dispose();
  }

  #createRun(input: CompactInput<T>): RunState<T> {
    if (!input || !Array.isArray(input.messages)) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `compact() needs { messages: [...] }; found ${describeValue(input?.messages)}.`);
    }
    const contextWindow = input.contextWindow ?? this.contextWindow;
    if (contextWindow === undefined || !Number.isFinite(contextWindow) || contextWindow <= 0) {
      throw new CompactionError(
        ErrorCodes.INPUT_INVALID,
        `compact() needs a positive contextWindow; found ${String(contextWindow)}.`,
        { hint: "Pass contextWindow to compact() or to new Compactor(), or set it in .compactionrc." },
      );
    }
    // A host's own reserve may hold more than the reply (what it sends beside the messages: a
    // system prompt, tools), so it need only leave the messages some room; the user's setting is
    // checked against the window's half in reserveFor.
    const reserve = input.reserveTokens ?? this.reserveFor(contextWindow);
    if (!Number.isFinite(reserve) || reserve < 0 || reserve >= contextWindow) {
      throw new CompactionError(
        ErrorCodes.INPUT_INVALID,
        `compact()'s reserveTokens must be at least 0 and below the context window (${contextWindow}); found ${String(reserve)}.`,
        { hint: "Leave reserveTokens out to use the compactor's reserve for this window." },
      );
    }
    try {
      checkAnchor(input.anchor, input.messages.length);
    } catch (error) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `compact() was given a bad anchor: ${describeError(error)}`, {
        hint: "Pass the anchor the context's newest compaction recorded (its tokensAfterCompaction, and the index of the last message it covers), or none.",
      });
    }
    const before = this.tokens.contextTokens(input.messages, input.anchor);
    // The window less the reserve is in the provider's measure; every size the run compares with
    // the budget is our count. The budget is our count at the higher of two ratios: the calibrated
    // one (Claude counts about 1.25x o200k; see MessageTokenCounter.budgetRatio), which holds when
    // the newest usage figure is of a request pruned when sent, and the run's own (tokensBefore
    // over our count of the input, `CompactionRun.providerRatio`), by which the run reports its
    // After and its plugins size against the window. A context compacted to the budget then fits
    // the window less the reserve in both, and the After the run reports is within it.
    const runRatio = providerRatio(before.tokens, this.tokens.total(input.messages));
    const budget = countedBudget(contextWindow - reserve, Math.max(budgetRatioOf(before.calibration), runRatio));
    return new RunState({
      input,
      facts: this.facts,
      tokens: this.tokens,
      summarizer: input.summarizer ?? this.summarizer,
      // A summary of summaryMaxTokens (4,000 by default) would fill most of a small window and
      // leave the newest turns no room, though they hold most of what the agent uses next: the
      // summary a run asks for by default is at most a quarter of its budget (`summaryAllowance`,
      // the room the core already leaves it when it moves or shrinks a cut). A plugin's own
      // summaryMaxTokens option still stands as set.
      summaryMaxTokens: summaryAllowance(budget, this.summaryMaxTokens),
      contextWindow,
      usableWindow: usableWindow(contextWindow, reserve),
      targetTokens: runTarget(compactedTargetTokens(contextWindow, reserve, this.autoCompact.threshold, before.tokens), input.targetTokens),
      budget,
      tokensBefore: before.tokens,
      providerRatio: runRatio,
      calibration: before.calibration,
      summaryOverheadTokens: this.#summaryOverhead(),
      recallTool: this.#recallTool(),
    });
  }

  /**
   * The end of a run with no cut to apply: the working set changed in place (e.g. pruned), or a
   * noop saying `reason`. A host that records only a summary and an unchanged suffix
   * (`suffixOnly`) cannot record an in-place change, so that run is a noop too.
   */
  async #withoutCut(run: RunState<T>, reason: string): Promise<CompactionResult<T>> {
    // Nothing to cut, yet over the budget: shrink the working set itself (a host that records
    // only summary + suffix shrinks at send time instead, see shrinkToBudget).
    if (!run.suffixOnly && sumAll(run.view.tokens) > run.budget) {
      const shrink = shrinkToBudget(run.messages, this.tokens, { budget: run.budget, recallTool: run.recallTool, headroomTo: run.targetCounted });
      if (!shrink.fits) {
        const error = new CompactionError(
          ErrorCodes.CONTEXT_OVERFLOW,
          `${reason} The context cannot be brought under the budget of ${run.budget} tokens: with every tool output and message shrunk to head and tail it is still ${shrink.tokens} tokens (the system prompt, pinned messages, the newest user message and what cannot be shortened).`,
          { hint: "Unpin messages, shorten the system prompt, or use a model with a larger context window." },
        );
        return this.#untouched(run, "failed", error.message, error);
      }
      run.warnings.push(
        `[core] ${reason} Shrunk ${shrink.shrunk.length} message(s) to head and tail to fit the budget of ${run.budget} tokens; the full text stays in the transcript.`,
      );
      run.replaceMessages("core", shrink.messages);
      run.shrink = shrink;
      run.layer = "shrink";
      return await this.#finish(run, null, { text: "", kind: "none" });
    }
    if (run.messages === run.input.messages) return this.#untouched(run, "noop", reason, null);
    if (!run.suffixOnly) return await this.#finish(run, null, { text: "", kind: "none" });
    const layer = run.layer === null ? "" : ` (layer ${run.layer})`;
    return this.#untouched(
      run,
      "noop",
      `${reason} Plugin '${run.modifiedBy ?? "core"}' changed the messages in place${layer}, but the host records a compaction only as a summary followed by an unchanged suffix of its messages (suffixOnly), so nothing was compacted.`,
      null,
    );
  }

  /** What an empty summary message costs in this format (its wrapper text), counted once. */
  #summaryOverhead(): number {
    this.#overhead ??= this.tokens.count(this.adapter.createSummary(""));
    return this.#overhead;
  }

  async #finish(run: RunState<T>, selectedBy: string | null, draft: SummaryDraft): Promise<CompactionResult<T>> {
    run.finishing = true;
    const warned = run.warnings.length;
    const cut = run.cut;
    const messages: T[] = [];
    let summary: string | null = null;
    // Shrunk copies replace kept messages, unless the host records only summary + suffix: it
    // applies the same shrinking when it sends the request (shrinkToBudget is deterministic).
    const shrunk = cut !== null && run.shrink !== null && !run.suffixOnly ? shrunkByIndex(run) : null;
    const at = (i: number) => shrunk?.get(i) ?? (run.messages[i] as T);
    if (cut) {
      messages.push(...cut.preservedIndices.map(at));
      if (draft.kind !== "none") {
        summary = draft.text;
        messages.push(
          draft.kind === "note"
            ? this.adapter.createNote(draft.text)
            : this.adapter.createSummary(draft.text, { tokensBefore: run.tokensBefore }),
        );
      }
      for (let i = cut.firstKeptIndex; i < run.messages.length; i++) messages.push(at(i));
    } else {
      messages.push(...run.messages);
    }
    // Our count of the compacted messages, the measure the cut check and the budget use (usage
    // stored on kept messages describes the old context). A host that shows it beside tokensBefore
    // converts it with tokens.calibration (the CLI does).
    let counted = this.tokens.total(messages);
    let shrunkMessages = run.shrink?.shrunk ?? [];
    if (counted > run.budget && cut !== null && !run.suffixOnly) {
      // The summary or note took more than the room the kept messages left (rule 6, fit-budget.ts):
      // the kept messages are shrunk again from their originals, so each marker says all that was cut.
      const summaryAt = draft.kind === "none" ? -1 : cut.preservedIndices.length;
      const originals = cut.preservedIndices.map((i) => run.messages[i] as T);
      if (summaryAt >= 0) originals.push(messages[summaryAt] as T);
      originals.push(...run.messages.slice(cut.firstKeptIndex));
      const fitted = fitCompacted({
        messages: originals,
        summaryAt,
        summaryKind: draft.kind === "note" ? "note" : "summary",
        cut,
        tokens: this.tokens,
        budget: run.budget,
        over: counted - run.budget,
        recallTool: run.recallTool,
      });
      if (fitted !== null) {
        run.warnings.push(`[core] ${fitted.repair}`);
        messages.splice(0, messages.length, ...fitted.messages);
        shrunkMessages = fitted.shrunk;
        counted = fitted.tokens;
        run.cut = { ...cut, keptTokens: counted - (summaryAt < 0 ? 0 : this.tokens.count(messages[summaryAt] as T)) };
      }
    }
    // The result and the event, which transcripts record and `context history` shows, keep Before
    // and After in one measure: the run's, anchored on the provider's figure (what the strategies
    // sized against; tokens.providerTokensAfter gives the same). Our counts are named as such.
    const providerTokensAfter = run.providerTokens(counted);
    const refusal = growthRefusal({
      tokensBefore: run.tokensBefore,
      tokensAfter: providerTokensAfter,
      countedBefore: this.tokens.total(run.input.messages),
      countedWorking: sumAll(run.view.tokens),
      countedAfter: counted,
      budget: run.budget,
      cut,
      draft,
      summaryTokens: summary === null ? 0 : run.providerTokens(this.tokens.count(messages[cut?.preservedIndices.length ?? 0] as T)),
      compactedTokens: cut === null ? 0 : run.providerTokens(sumOf(run.view.tokens, cut.compactedIndices)),
      by: selectedBy ?? run.modifiedBy ?? "core",
    });
    if (refusal !== null) {
      // A compaction never makes the context bigger (refuse-growth.ts); the warnings this
      // assembly added describe a result that is not returned.
      run.warnings.length = warned;
      return this.#untouched(run, "noop", refusal, null);
    }
    if (counted > run.budget && run.suffixOnly && run.shrink !== null) {
      run.warnings.push(
        `[core] The compacted context is ${counted} tokens, over the budget of ${run.budget}: the host records only a summary and the unchanged messages it keeps, so it must shrink them when it sends the request (shrinkToBudget, the result's \`shrunk\`), to ${cut?.keptTokens ?? run.shrink.tokens} tokens kept.`,
      );
    } else if (counted > run.budget) {
      run.warnings.push(`[core] The compacted context is ${counted} tokens, still over the budget of ${run.budget} tokens.`);
    }
    const firstKept = cut ? run.messages[cut.firstKeptIndex] : undefined;
    const event = createCompactionEvent({
      summary: summary ?? "",
      messagesCompacted: cut ? cut.compactedIndices.length : 0,
      tokensBeforeCompaction: run.tokensBefore,
      tokensAfterCompaction: providerTokensAfter,
      trigger: run.trigger,
      layer: cut?.layer ?? run.layer ?? null,
      customInstruction: run.focus ?? null,
      boundaryMessageId: firstKept === undefined ? null : (run.factsOf(firstKept).id ?? null),
      strategy: selectedBy ?? run.modifiedBy ?? "core",
      warnings: run.warnings,
      calibration: recordedCalibration(run.calibration),
    });
    const result: CompactionResult<T> = {
      status: "compacted",
      messages,
      summary,
      cut: run.cut,
      event,
      tokensBefore: run.tokensBefore,
      tokensAfter: providerTokensAfter,
      countedTokensBefore: this.tokens.total(run.input.messages),
      countedTokensAfter: counted,
      warnings: run.warnings,
      shrunk: shrunkMessages,
      reason: null,
      error: null,
    };
    try {
      await this.hooks.afterCompact.promise(result, viewFor(run, "core"));
    } catch (error) {
      run.warnings.push(
        `[${run.running}] afterCompact failed: ${describeError(error)}. The compaction itself is complete.`,
      );
    }
    return result;
  }

  #stopped(run: RunState<T>): CompactionError | null {
    if (run.cancelled) {
      return new CompactionError(ErrorCodes.CANCELLED, `Cancelled by plugin '${run.cancelled.plugin}': ${run.cancelled.reason}`, {
        plugin: run.cancelled.plugin,
      });
    }
    if (run.signal?.aborted) return new CompactionError(ErrorCodes.CANCELLED, "Cancelled: the AbortSignal was aborted.");
    return null;
  }

  #untouched(
    run: RunState<T>,
    status: "noop" | "cancelled" | "failed",
    reason: string,
    error: CompactionError | null,
  ): CompactionResult<T> {
    const tokens = run.tokensBefore;
    const counted = this.tokens.total(run.input.messages);
    return {
      status,
      messages: run.input.messages,
      summary: null,
      cut: null,
      event: null,
      tokensBefore: tokens,
      tokensAfter: tokens,
      countedTokensBefore: counted,
      countedTokensAfter: counted,
      warnings: run.warnings,
      shrunk: [],
      reason,
      error,
    };
  }
}

/** A registered tap, as tapable hands it to a `register` interceptor. */
type RegisteredTap = { name: string; type: "sync" | "async" | "promise"; fn: Function };

/** Each run's views, one per plugin, so a plugin sees the same view in every tap of one run. */
const VIEWS = new WeakMap<RunState<any>, Map<string, CompactionRun<any>>>();
/** The run behind each view, for the compactor only (a plugin cannot get from its view to another's). */
const RUNS = new WeakMap<CompactionRun<any>, RunState<any>>();

function viewFor<T>(run: RunState<T>, plugin: string): CompactionRun<T> {
  let views = VIEWS.get(run);
  if (views === undefined) VIEWS.set(run, (views = new Map()));
  let view = views.get(plugin) as CompactionRun<T> | undefined;
  if (view === undefined) {
    view = new CompactionRun(run, plugin);
    views.set(plugin, view);
    RUNS.set(view, run);
  }
  return view;
}

/**
 * Wraps every tap of `hook` so it receives the run as its own plugin's view (its warnings,
 * cancellation and changes carry its name), and so the run knows which plugin, in which hook, to
 * blame for an error.
 */
function bindPluginView<TapT extends RegisteredTap>(tap: TapT, hook: string): TapT {
  const fn = tap.fn as (...args: unknown[]) => unknown;
  const name = tap.name;
  return {
    ...tap,
    fn: (...args: unknown[]) =>
      fn(
        ...args.map((arg) => {
          const run = arg instanceof CompactionRun ? RUNS.get(arg) : undefined;
          if (run === undefined) return arg;
          run.running = name;
          run.runningHook = hook;
          return viewFor(run, name);
        }),
      ),
  };
}

/** Wraps each `selectCut` tap so the core records which plugin returned the cut. */
function recordCutChooser<TapT extends RegisteredTap>(tap: TapT): TapT {
  return mapTapResult(tap, (value, args) => {
    if (value !== undefined && value !== null) {
      const run = args.find((arg): arg is CompactionRun<unknown> => arg instanceof CompactionRun);
      const state = run === undefined ? undefined : RUNS.get(run);
      if (state !== undefined) state.cutChosenBy ??= tap.name;
    }
    return value;
  });
}

/** Wraps each `summarize` tap so a malformed draft is blamed on the plugin that returned it. */
function checkDraftReturned<TapT extends RegisteredTap>(tap: TapT): TapT {
  return mapTapResult(tap, (value) => {
    if (value !== undefined) assertDraft(value, tap.name);
    return value;
  });
}

/** A tap whose result passes through `map` (with the tap's arguments), whatever the tap's type. */
function mapTapResult<TapT extends RegisteredTap>(tap: TapT, map: (value: unknown, args: readonly unknown[]) => unknown): TapT {
  const fn = tap.fn as (...args: unknown[]) => unknown;
  let wrapped: (...args: unknown[]) => unknown;
  if (tap.type === "promise") wrapped = (...args) => (fn(...args) as Promise<unknown>).then((value) => map(value, args));
  else if (tap.type === "sync") wrapped = (...args) => map(fn(...args), args);
  else {
    wrapped = (...args) => {
      const callback = args.at(-1) as (error: unknown, value?: unknown) => void;
      const inputs = args.slice(0, -1);
      return fn(...inputs, (error: unknown, value?: unknown) => {
        if (error) return callback(error);
        try {
          callback(null, map(value, inputs));
        } catch (invalid) {
          callback(invalid);
        }
      });
    };
  }
  return { ...tap, fn: wrapped };
}

const DRAFT_KINDS: ReadonlySet<unknown> = new Set(["summary", "note", "none"]);

function assertDraft(value: unknown, plugin: string): asserts value is SummaryDraft {
  const draft = value as Partial<SummaryDraft> | null;
  if (typeof draft !== "object" || draft === null || typeof draft.text !== "string" || !DRAFT_KINDS.has(draft.kind)) {
    const found =
      typeof draft !== "object" || draft === null
        ? describeValue(draft)
        : `{ text: ${describeValue(draft.text)}, kind: ${describeValue(draft.kind)} }`;
    throw new CompactionError(
      ErrorCodes.PLUGIN_FAILED,
      `Plugin '${plugin}' returned ${found} from summarize; expected a draft { text: string, kind: "summary" | "note" | "none" }.`,
      { plugin, hook: "summarize", hint: "Return { ...draft, text } to change the text, or undefined to pass the draft on unchanged." },
    );
  }
}

/** The noop reason when no plugin selected a cut, with what the plugins said about it. */
function noCutReason<T>(run: RunState<T>): string {
  const why = run.noCutReasons;
  return why.length === 0 ? "No plugin selected a cut." : `No plugin selected a cut (${why.join("; ")}).`;
}

/**
 * With `suffixOnly`, the host records the messages a cut keeps as they are in its history, by
 * their index in the input: a working set replaced in `beforeCompact` must keep the input's
 * length and leave every kept message as it was. The error to fail with, or null.
 */
function keptMessagesChanged<T>(run: RunState<T>): CompactionError | null {
  const cut = run.cut;
  const input = run.input.messages;
  const working = run.messages;
  if (!run.suffixOnly || cut === null || working === input) return null;
  let what: string;
  if (working.length !== input.length) {
    what = `changed the number of messages from ${input.length} to ${working.length}, so the cut's indices no longer point into the host's messages`;
  } else {
    let changed = 0;
    for (let i = cut.firstKeptIndex; i < working.length; i++) if (working[i] !== input[i]) changed += 1;
    if (changed === 0) return null;
    what = `changed ${changed} of the ${working.length - cut.firstKeptIndex} messages the cut keeps`;
  }
  const plugin = run.modifiedBy ?? "core";
  return new CompactionError(
    ErrorCodes.CUT_REFUSED,
    `Plugin '${plugin}' ${what} (in beforeCompact), but the host records a compaction only as a summary followed by an unchanged suffix of its messages (suffixOnly); nothing was changed.`,
    {
      plugin,
      hint: "With run.suffixOnly, change only messages before the cut; make in-place changes (such as pruning tool outputs) to what the host sends instead, in a shapeRequest tap (see \"Changing what is sent\" in docs/writing-plugins.md).",
    },
  );
}

function latestSummary<T>(run: RunState<T>): string | undefined {
  const cut = run.cut;
  if (!cut) return undefined;
  const facts = run.view.facts;
  for (let k = cut.compactedIndices.length - 1; k >= 0; k--) {
    const f = facts[cut.compactedIndices[k] as number];
    if (f?.kind === "summary") return f.text;
  }
  return undefined;
}

function asRunError<T>(error: unknown, run: RunState<T>): CompactionError {
  if (error instanceof CompactionError) return error;
  if (run.signal?.aborted) return new CompactionError(ErrorCodes.CANCELLED, "Cancelled: the AbortSignal was aborted.", { cause: error });
  const plugin = run.running;
  const hook = plugin === "core" ? null : run.runningHook;
  return new CompactionError(ErrorCodes.PLUGIN_FAILED, `Plugin '${plugin}' failed${hook === null ? "" : ` in ${hook}`}: ${describeError(error)}`, {
    plugin,
    ...(hook === null ? {} : { hook }),
    cause: error,
  });
}

/** The sum of `tokens` at `indices`. */
function sumOf(tokens: readonly number[], indices: readonly number[]): number {
  let total = 0;
  for (const i of indices) total += tokens[i] ?? 0;
  return total;
}

function sumAll(tokens: readonly number[]): number {
  let total = 0;
  for (const t of tokens) total += t;
  return total;
}

/** The shrunk copies of the run's shrinking, by index in the working set. */
function shrunkByIndex<T>(run: RunState<T>): Map<number, T> {
  const cut = run.cut;
  const shrink = run.shrink;
  const map = new Map<number, T>();
  if (cut === null || shrink === null) return map;
  // The shrink's messages are the preserved ones, then the kept ones (see fitCutToBudget).
  const indices = [...cut.preservedIndices];
  for (let i = cut.firstKeptIndex; i < run.messages.length; i++) indices.push(i);
  for (const s of shrink.shrunk) map.set(s.index, shrink.messages[indices.indexOf(s.index)] as T);
  return map;
}

/** The run's target: the host's lower one (a compaction prepared ahead of the threshold), never above its own. */
function runTarget(own: number, host: number | undefined): number {
  if (host === undefined) return own;
  if (!Number.isFinite(host) || host < 0) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `compact()'s targetTokens must be a number of tokens of at least 0; found ${String(host)}.`, {
      hint: "Leave targetTokens out to use the compactor's target for the window.",
    });
  }
  return Math.min(own, Math.floor(host));
}
