/**
 * `compactionMiddleware(options)`: a LangChain.js v1 agent middleware (`createAgent({ middleware })`)
 * that compacts the agent's history before each model call, by the preset and agent section of
 * `.compactionrc`.
 *
 * - `beforeModel`: when the call would carry more than the preset's auto-compaction share of the
 *   window (messages plus system prompt and tool definitions), the compactor runs on
 *   `state.messages` and the state is replaced by its result (a summary message and the kept
 *   messages). The next call starts from that, so each compaction extends the last one instead of
 *   summarising the whole history again, and the same history gives the same messages.
 * - `wrapModelCall`: measures the system prompt and tool definitions the call carries (so the
 *   next `beforeModel` leaves room for them) and, should the call still be over the window (a
 *   large system prompt first seen now, one turn's outputs larger than the window), compacts this
 *   call's messages and shapes what is still too large (`compactor.shapeRequest`: the preset's
 *   send-time shaping, then the core's shrinking to head and tail), for this call only. A call that cannot be brought under the window is not
 *   sent: it throws COMPACTION_CONTEXT_OVERFLOW.
 * The window is the provider's measure (Claude counts about 1.25x o200k), so our counts are
 * compared with it at the calibrated ratio (`tokens.budgetRatio`, learned from the usage figures
 * of the AI messages), or at the newest figure's when that is higher (`callRatio`); a
 * compaction's own budget uses the run's ratio when that is higher.
 */
import { type BaseMessage, RemoveMessage } from "@langchain/core/messages";
import {
  hostReserveTokens,
  autoCompactTokens,
  budgetRatioOf,
  cacheBreakpoints,
  CompactionError,
  type CompactionResult,
  type Compactor,
  configWarnings,
  countedBudget,
  createCompactor,
  describeError,
  ErrorCodes,
  markCacheBreakpoints,
} from "@compaction/core";
import { createMiddleware } from "langchain";
import { createLangChainAdapter } from "./langchain-adapter.js";
import { checkOptions, type LangChainCompactionEvent, type LangChainCompactionOptions } from "./options.js";
import { overheadText } from "./overhead-text.js";

/** LangGraph's `REMOVE_ALL_MESSAGES`: a RemoveMessage with this id clears the message list. */
const REMOVE_ALL_MESSAGES = "__remove_all__";

/** The middleware's name in the agent graph. */
export const COMPACTION_MIDDLEWARE_NAME = "CompactionMiddleware";

interface Fit {
  readonly result: CompactionResult<BaseMessage> | null;
  readonly messages: readonly BaseMessage[];
  /** The call's size after compacting, in the provider's measure (system prompt and tools included). */
  readonly tokens: number;
  /** The reply's reserve the compaction kept free. */
  readonly reserve: number;
}

/**
 * The compacting middleware for `createAgent({ middleware: [compactionMiddleware({ ... })] })`.
 * The compactor is built from the config on the first model call (errors in the config surface
 * there, with their COMPACTION_CONFIG_* code).
 */
export function compactionMiddleware(options: LangChainCompactionOptions = {}) {
  checkOptions(options);
  let compactor: Promise<Compactor<BaseMessage>> | undefined;
  /** Tokens of the system prompt and tool definitions, as the last call carried them. */
  let overhead = 0;
  /**
   * The provider's tokens per counted token, as last learned from the AI messages' usage figures:
   * a history just compacted holds too few of them to learn from until a few more calls.
   */
  let learnedRatio: number | undefined;

  const emit = (event: LangChainCompactionEvent) => options.on?.(event);

  const getCompactor = (): Promise<Compactor<BaseMessage>> => {
    compactor ??= (async () => {
      const built =
        options.compactor ??
        (await createCompactor<BaseMessage>({
          cwd: options.cwd,
          configPath: options.configPath,
          agent: options.agent,
          preset: options.preset,
          ...(options.trusted === undefined ? {} : { trusted: options.trusted }),
          adapter: createLangChainAdapter(options.isPinned === undefined ? {} : { isPinned: options.isPinned }),
        }));
      if (options.compactor === undefined) {
        for (const warning of configWarnings(built)) emit({ type: "warning", message: `${warning.message} ${warning.hint}`, code: warning.code });
      }
      for (const plugin of options.plugins ?? []) if (options.compactor === undefined) built.use(plugin);
      return built;
    })();
    return compactor;
  };

  const windowOf = (engine: Compactor<BaseMessage>): number => {
    const window = options.contextWindow ?? engine.contextWindow;
    if (window === undefined) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, "@compaction/langchain: no context window: neither the contextWindow option nor the config's contextWindow is set.", {
        path: "/contextWindow",
        hint: "Pass compactionMiddleware({ contextWindow: <the model's window in tokens> }) or set contextWindow in .compactionrc.",
      });
    }
    return window;
  };

  /** The calibrated ratio of `messages` (`tokens.budgetRatio`), or the one last learned when they hold none. */
  const ratioOf = (engine: Compactor<BaseMessage>, messages: readonly BaseMessage[]): number => {
    const calibration = engine.tokens.calibration(messages);
    if (calibration.source === "none") return learnedRatio ?? 1;
    learnedRatio = budgetRatioOf(calibration);
    return learnedRatio;
  };

  /**
   * Provider tokens per counted token of a call of `messages` and `extra` (system prompt, tools):
   * the calibrated ratio (`ratioOf`), or, when higher, the newest usage figure over our count of
   * what it covers (the messages up to it, and the system prompt and tools, taken to be `extra`
   * then too). The figure is the provider's own count: it holds when too few pairs of figures teach
   * a ratio, as in a short history or one just compacted.
   */
  const callRatio = (engine: Compactor<BaseMessage>, messages: readonly BaseMessage[], extra: number): number => {
    const ratio = ratioOf(engine, messages);
    const base = engine.tokens.contextBase(messages);
    if (base.base !== "usage" || base.lastUsageIndex === null) return ratio;
    const covered = engine.tokens.total(messages.slice(0, base.lastUsageIndex + 1)) + extra;
    return Math.max(ratio, base.usageTokens / Math.max(1, covered));
  };

  /** A call's size in the provider's measure: its messages and `extra` (system prompt, tools), our count at `ratio` (`callRatio`). */
  const callTokens = (engine: Compactor<BaseMessage>, messages: readonly BaseMessage[], extra: number, ratio: number): number =>
    Math.ceil((engine.tokens.total(messages) + extra) * ratio);

  /**
   * The reply's reserve for `window` (core's `hostReserveTokens`: the option, else the config's,
   * else the window's own), kept below `room` (the window less the system prompt and tools), so a
   * large prompt never makes the compaction itself refuse to run.
   */
  const reserveFor = (engine: Compactor<BaseMessage>, window: number, room = window): number =>
    Math.max(0, Math.min(hostReserveTokens(engine, window, options, "@compaction/langchain"), room - 1));
  /**
   * Where the state is compacted: the threshold's share of the usable window (core's
   * `autoCompactTokens`: the window, or less when the reply's reserve takes over a tenth of it), so
   * the messages are compacted before they outgrow what a call can hold, and between compactions
   * each call only grows at its end (the provider's prompt cache holds).
   */
  const thresholdOf = (engine: Compactor<BaseMessage>, window: number): number =>
    autoCompactTokens(window, reserveFor(engine, window), engine.autoCompact.threshold);
  /** The call with its cache breakpoints marked (`markCache`), or as it is. */
  const marked = <R extends { messages: BaseMessage[] }>(engine: Compactor<BaseMessage>, request: R): R => {
    if (options.markCache !== true) return request;
    const points = cacheBreakpoints(request.messages.map((message) => engine.facts.of(message)));
    return { ...request, messages: [...markCacheBreakpoints(engine.adapter, request.messages, points)] };
  };

  /**
   * Compacts `messages` so that, with `extra` tokens beside them (our count), the call fits
   * `window`. The window is the provider's measure, so every figure here is: our counts at the
   * calibrated ratio (`ratioOf`).
   */
  const fit = async (
    engine: Compactor<BaseMessage>,
    messages: readonly BaseMessage[],
    window: number,
    extra: number,
    scope: "state" | "request",
    signal: AbortSignal | undefined,
  ): Promise<Fit> => {
    const ratio = callRatio(engine, messages, extra);
    // The compaction's own budget scales by its run's ratio, which holds the system prompt and tools
    // when a usage figure is among the messages (Before over our count of the messages): they are
    // taken off the window only when it is not.
    const usageHeld = engine.tokens.contextBase(messages).base === "usage";
    const room = usageHeld ? window : Math.max(1, window - Math.ceil(extra * ratio));
    const reserve = reserveFor(engine, window, room);
    const before = callTokens(engine, messages, extra, ratio);
    emit({
      type: "compaction-start",
      tokens: before,
      threshold: thresholdOf(engine, window),
      contextWindow: window,
      messages: messages.length,
      scope,
    });
    const result = await engine.compact({
      messages,
      contextWindow: room,
      reserveTokens: reserve,
      trigger: "auto",
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      ...(signal === undefined ? {} : { signal }),
    });
    const tokens = result.status === "compacted" ? callTokens(engine, result.messages, extra, ratio) : before;
    emit({ type: "compaction-end", result, tokens, scope });
    if (result.status === "failed" || result.status === "cancelled") {
      emit({ type: "warning", message: `Compaction ${result.status}: ${result.reason ?? ""}`.trim(), code: result.error?.code ?? null });
    }
    return { result, messages: result.messages, tokens, reserve };
  };

  return createMiddleware({
    name: COMPACTION_MIDDLEWARE_NAME,
    beforeModel: async (state, runtime) => {
      const engine = await getCompactor();
      const window = windowOf(engine);
      const messages = state.messages as BaseMessage[];
      const tokens = callTokens(engine, messages, overhead, callRatio(engine, messages, overhead));
      if (!engine.autoCompact.enabled || tokens <= thresholdOf(engine, window)) return undefined;
      const signal = (runtime as { signal?: AbortSignal } | undefined)?.signal;
      const done = await fit(engine, messages, window, overhead, "state", signal);
      if (done.result?.status !== "compacted") return undefined;
      const budget = window - done.reserve;
      if (done.tokens > budget) {
        emit({
          type: "warning",
          message: `After compacting, the call is still ${done.tokens} tokens, over the budget of ${budget} (window ${window} minus the reply's reserve); the call itself is shrunk to fit the window.`,
          code: null,
        });
      }
      return { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...done.messages] };
    },
    wrapModelCall: async (request, handler) => {
      const engine = await getCompactor();
      const window = windowOf(engine);
      overhead = engine.tokens.counter.count(overheadText(request));
      // The window is the provider's measure: our count at the call's ratio (callRatio) is compared with it.
      const ratio = callRatio(engine, request.messages, overhead);
      const sent = callTokens(engine, request.messages, overhead, ratio);
      if (sent <= window) return handler(marked(engine, request));
      let done: Fit;
      try {
        done = await fit(engine, request.messages, window, overhead, "request", undefined);
      } catch (error) {
        throw new CompactionError(ErrorCodes.CONTEXT_OVERFLOW, `@compaction/langchain: the model call is ${sent} tokens, over the ${window}-token window, and compacting it failed: ${describeError(error)}`, {
          cause: error,
          hint: "Lower the system prompt or tool definitions, or raise contextWindow.",
        });
      }
      // What compacting could not bring under the window is shaped to fit, for this call only
      // (compactor.shapeRequest: the preset's send-time shaping, then the core's shrinking to head
      // and tail, largest tool outputs first, the request last, older turns left out only at the end).
      const shaped = engine.shapeRequest(done.messages, { contextWindow: window, reserveTokens: done.reserve, budget: Math.max(1, countedBudget(window, ratio) - overhead) });
      for (const warning of shaped.warnings) emit({ type: "warning", message: warning, code: null });
      if (!shaped.fits) {
        throw new CompactionError(
          ErrorCodes.CONTEXT_OVERFLOW,
          `@compaction/langchain: the model call is ${Math.ceil((shaped.tokens + overhead) * ratio)} tokens after compacting and shrinking (system prompt and tools: ${Math.ceil(overhead * ratio)}), over the ${window}-token window; it was not sent.`,
          { hint: "Shorten the system prompt or tool definitions, pin fewer messages, or use a model with a larger window." },
        );
      }
      if (shaped.shrunk.length > 0 || shaped.dropped.length > 0) {
        const left = shaped.dropped.length === 0 ? "" : ` and left ${shaped.dropped.length} older message(s) out`;
        emit({ type: "warning", message: `Shrunk ${shaped.shrunk.length} message(s) to head and tail${left} for this call to fit the ${window}-token window.`, code: null });
      }
      return handler(marked(engine, { ...request, messages: [...shaped.messages] }));
    },
  });
}
