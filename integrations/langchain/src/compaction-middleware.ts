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
 *   next `beforeModel` leaves room for them); should the call be over the window (a large system
 *   prompt first seen now, one turn's outputs larger than the window), compacts this call's
 *   messages, for this call only; then sends the call shaped to the budget (the window less the
 *   reply's reserve and the system prompt and tools). A call that cannot be brought within it is
 *   not sent: it throws COMPACTION_CONTEXT_OVERFLOW.
 * Each thread (LangGraph's `thread_id`; one for calls without one) runs on core's `HostLoop`: the
 * reply's reserve fixed for the window, the threshold, the wait after a compaction that left the
 * call over it (a failing summarizer is called at most once per quarter of the window appended,
 * not before every call), and the prefix-stable shaping of what is sent, whose
 * COMPACTION_CONTEXT_TRIMMED (older messages left out of the call) is a `warning` event.
 * The window is the provider's measure (Claude counts about 1.25x o200k), so our counts are
 * compared with it at the calibrated ratio (`tokens.budgetRatio`, learned from the usage figures
 * of the AI messages), or at the newest figure's when that is higher (`callRatio`); a
 * compaction's own budget uses the run's ratio when that is higher.
 */
import { type BaseMessage, RemoveMessage } from "@langchain/core/messages";
import {
  budgetRatioOf,
  cacheBreakpoints,
  CompactionError,
  type CompactionResult,
  type Compactor,
  configWarnings,
  createCompactor,
  describeError,
  ErrorCodes,
  HostLoop,
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

/** Threads whose loop the middleware remembers at once (an agent serves many), the newest used kept. */
const THREADS_REMEMBERED = 256;

interface Fit {
  readonly result: CompactionResult<BaseMessage>;
  readonly messages: readonly BaseMessage[];
  /** The call's size after compacting, in the provider's measure (system prompt and tools included). */
  readonly tokens: number;
  /** The loop's wait when the call stayed over the threshold (`HostLoop.settle`), else null. */
  readonly growth: number | null;
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
  /** Each thread's host loop, by `thread_id` ("" for calls without one). */
  const loops = new Map<string, HostLoop<BaseMessage>>();

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
   * The loop of the thread `runtime` runs on (LangGraph's `configurable.thread_id`), made for the
   * window on its first call: the reply's reserve is fixed there (the option, else the config's,
   * else the window's own), and one that does not fit the window throws, naming the option.
   */
  const loopOf = (engine: Compactor<BaseMessage>, runtime: unknown): HostLoop<BaseMessage> => {
    const threadId = (runtime as { configurable?: { thread_id?: unknown } } | undefined)?.configurable?.thread_id;
    const key = typeof threadId === "string" ? threadId : "";
    let loop = loops.get(key);
    if (loop !== undefined) {
      loops.delete(key);
    } else {
      loop = new HostLoop(engine, { contextWindow: windowOf(engine), reserveTokens: options.reserveTokens, maxOutputTokens: options.maxOutputTokens, host: "@compaction/langchain" });
      if (loops.size >= THREADS_REMEMBERED) loops.delete(loops.keys().next().value as string);
    }
    loops.set(key, loop);
    return loop;
  };

  /** The call with its cache breakpoints marked (`markCache`), or as it is. */
  const marked = <R extends { messages: BaseMessage[] }>(engine: Compactor<BaseMessage>, request: R): R => {
    if (options.markCache !== true) return request;
    const points = cacheBreakpoints(request.messages.map((message) => engine.facts.of(message)));
    return { ...request, messages: [...markCacheBreakpoints(engine.adapter, request.messages, points)] };
  };

  /**
   * Compacts `messages` so that, with `extra` tokens beside them (our count), the call fits the
   * loop's window, and tells the loop the size after (`settle`). The window is the provider's
   * measure, so every figure here is: our counts at the calibrated ratio (`ratioOf`).
   */
  const fit = async (
    engine: Compactor<BaseMessage>,
    loop: HostLoop<BaseMessage>,
    messages: readonly BaseMessage[],
    extra: number,
    scope: "state" | "request",
    signal: AbortSignal | undefined,
  ): Promise<Fit> => {
    const window = loop.contextWindow;
    const ratio = callRatio(engine, messages, extra);
    // The compaction's own budget scales by its run's ratio, which holds the system prompt and tools
    // when a usage figure is among the messages (Before over our count of the messages): they are
    // taken off the window only when it is not. The reply's reserve stays below what they leave,
    // so a large prompt never makes the compaction itself refuse to run.
    const usageHeld = engine.tokens.contextBase(messages).base === "usage";
    const room = usageHeld ? window : Math.max(1, window - Math.ceil(extra * ratio));
    const before = callTokens(engine, messages, extra, ratio);
    emit({ type: "compaction-start", tokens: before, threshold: loop.threshold, contextWindow: window, messages: messages.length, scope });
    const result = await engine.compact({
      messages,
      contextWindow: room,
      reserveTokens: Math.max(0, Math.min(loop.reserveTokens, room - 1)),
      trigger: "auto",
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      ...(signal === undefined ? {} : { signal }),
    });
    const tokens = result.status === "compacted" ? callTokens(engine, result.messages, extra, ratio) : before;
    const growth = loop.settle(tokens, result.messages);
    emit({ type: "compaction-end", result, tokens, scope });
    if (result.status === "failed" || result.status === "cancelled") {
      const wait = growth === null ? "" : ` The next automatic compaction waits until the call has grown by ${growth} tokens (a quarter of the window); until then each call is shaped to the budget.`;
      emit({ type: "warning", message: `Compaction ${result.status}: ${result.reason ?? ""}`.trim() + wait, code: result.error?.code ?? null });
    }
    return { result, messages: result.messages, tokens, growth };
  };

  return createMiddleware({
    name: COMPACTION_MIDDLEWARE_NAME,
    beforeModel: async (state, runtime) => {
      const engine = await getCompactor();
      const loop = loopOf(engine, runtime);
      const messages = state.messages as BaseMessage[];
      const tokens = callTokens(engine, messages, overhead, callRatio(engine, messages, overhead));
      if (!engine.autoCompact.enabled || !loop.due(tokens, messages)) return undefined;
      const signal = (runtime as { signal?: AbortSignal } | undefined)?.signal;
      const done = await fit(engine, loop, messages, overhead, "state", signal);
      if (done.result.status !== "compacted") return undefined;
      const budget = loop.contextWindow - loop.reserveTokens;
      if (done.tokens > budget) {
        emit({
          type: "warning",
          message: `After compacting, the call is still ${done.tokens} tokens, over the budget of ${budget} (window ${loop.contextWindow} minus the reply's reserve); the call itself is shrunk to fit it, and the next automatic compaction waits until the call has grown by ${done.growth ?? 0} tokens (a quarter of the window).`,
          code: null,
        });
      }
      return { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...done.messages] };
    },
    wrapModelCall: async (request, handler) => {
      const engine = await getCompactor();
      const loop = loopOf(engine, request.runtime);
      const window = loop.contextWindow;
      overhead = engine.tokens.counter.count(overheadText(request));
      // The window is the provider's measure: our count at the call's ratio (callRatio) is compared with it.
      const ratio = callRatio(engine, request.messages, overhead);
      const sent = callTokens(engine, request.messages, overhead, ratio);
      let messages: readonly BaseMessage[] = request.messages;
      // Over the window (a large system prompt first seen now, one turn's outputs larger than the
      // window): this call's messages are compacted, for this call only; not while the loop waits
      // after a compaction that could not bring the call under the threshold.
      if (sent > window && loop.due(sent, messages)) {
        try {
          messages = (await fit(engine, loop, messages, overhead, "request", undefined)).messages;
        } catch (error) {
          throw new CompactionError(ErrorCodes.CONTEXT_OVERFLOW, `@compaction/langchain: the model call is ${sent} tokens, over the ${window}-token window, and compacting it failed: ${describeError(error)}`, {
            cause: error,
            hint: "Lower the system prompt or tool definitions, or raise contextWindow.",
          });
        }
      }
      // What is sent is the loop's request: shaped to the window less the reply's reserve and the
      // system prompt and tools (the preset's send-time shaping, e.g. layered's pruning, then the
      // core's shrinking to head and tail, older turns left out only at the end), prefix-stable
      // from call to call; the agent's state keeps every message whole.
      const why = engine.autoCompact.enabled ? undefined : `the call is ${sent} tokens and auto-compaction is off`;
      const { request: shaped, problem } = loop.request(messages, Math.max(1, loop.budget(ratio) - overhead), {}, why);
      for (const warning of shaped.warnings) emit({ type: "warning", message: warning, code: null });
      if (!shaped.fits) {
        throw new CompactionError(
          ErrorCodes.CONTEXT_OVERFLOW,
          `@compaction/langchain: the model call is ${Math.ceil((shaped.tokens + overhead) * ratio)} tokens after compacting and shrinking (system prompt and tools: ${Math.ceil(overhead * ratio)}), over the ${window}-token window less ${loop.reserveTokens} reserved for the reply; it was not sent. ${problem?.message ?? ""}`.trim(),
          { hint: "Shorten the system prompt or tool definitions, pin fewer messages, or use a model with a larger window." },
        );
      }
      if (problem !== null) emit({ type: "warning", message: `${problem.message} ${problem.hint ?? ""}`.trim(), code: problem.code });
      if (shaped.messages === request.messages) return handler(marked(engine, request));
      return handler(marked(engine, { ...request, messages: [...shaped.messages] }));
    },
  });
}
