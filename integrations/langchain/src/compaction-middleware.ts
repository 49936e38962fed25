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
 * With background compaction (`background`, on by default with a model summarizer) the loop's
 * preparation goes with the thread too (core's `backgroundCheck`): past the prepare mark a
 * `beforeModel` starts the compaction of the agent's messages and the call goes on with all of them;
 * the one at the threshold replaces the state with the prepared result followed by every message
 * appended since, without waiting for a summary; a call waits only when it could not be made
 * otherwise. The middleware outlives a run, so a compaction prepared in one run of a thread is put
 * in place in a later one, while its messages (by id) still start the thread's.
 * The window is the provider's measure (Claude counts about 1.25x o200k), so our counts are
 * compared with it at the calibrated ratio (`tokens.budgetRatio`, learned from the usage figures
 * of the AI messages), or at the newest figure's when that is higher (`callRatio`); a
 * compaction's own budget uses the run's ratio when that is higher.
 */
import { type BaseMessage, RemoveMessage } from "@langchain/core/messages";
import {
  backgroundCheck,
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
  type Preparation,
  type PrepareInput,
  type Summarizer,
} from "@compaction/core";
import { createMiddleware } from "langchain";
import { createLangChainAdapter } from "./langchain-adapter.js";
import { checkOptions, type LangChainCompactionEvent, type LangChainCompactionOptions } from "./options.js";
import { overheadText } from "./overhead-text.js";

/** LangGraph's `REMOVE_ALL_MESSAGES`: a RemoveMessage with this id clears the message list. */
const REMOVE_ALL_MESSAGES = "__remove_all__";

/** The middleware's name in the agent graph. */
export const COMPACTION_MIDDLEWARE_NAME = "CompactionMiddleware";

/**
 * A message's key for the loop: its id (LangGraph gives every message of the state one, and keeps
 * it in its checkpoints, where the objects are new at each run), else what it says.
 */
function keyOf(engine: Compactor<BaseMessage>, message: BaseMessage): string {
  if (typeof message.id === "string" && message.id !== "") return `id:${message.id}`;
  const facts = engine.facts.of(message);
  return `${facts.kind}\u0000${facts.text}\u0000${facts.toolCalls.map((call) => call.id).join(",")}\u0000${facts.toolResultIds.join(",")}`;
}

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
      const { background, waitMs, cacheTtlMs } = options;
      loop = new HostLoop(engine, {
        contextWindow: windowOf(engine),
        reserveTokens: options.reserveTokens,
        maxOutputTokens: options.maxOutputTokens,
        host: "@compaction/langchain",
        ...(background === undefined ? {} : { background }),
        ...(waitMs === undefined ? {} : { waitMs }),
        ...(cacheTtlMs === undefined ? {} : { cacheTtlMs }),
      });
      if (loops.size >= THREADS_REMEMBERED) {
        // A thread forgotten takes its preparation with it: nothing could put it in place any more.
        const oldest = loops.keys().next().value as string;
        const cost = loops.get(oldest)?.drop("its thread was forgotten (the middleware keeps the 256 it served last)") ?? null;
        if (cost !== null) emit({ type: "background", background: { type: "dropped", cost } });
        loops.delete(oldest);
      }
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
   * The compactor's run over `messages`, so that, with `extra` tokens beside them (our count), the
   * call fits the loop's window (`input`: the loop's target and signal, for one prepared in the
   * background; `summarizer`: the no-model one, past the wait's deadline). The compaction's own
   * budget scales by its run's ratio, which holds the system prompt and tools when a usage figure
   * is among the messages (Before over our count of the messages): they are taken off the window
   * only when it is not. The reply's reserve stays below what they leave, so a large prompt never
   * makes the compaction itself refuse to run.
   */
  const run = (
    engine: Compactor<BaseMessage>,
    loop: HostLoop<BaseMessage>,
    messages: readonly BaseMessage[],
    extra: number,
    input: Partial<PrepareInput>,
    summarizer?: Summarizer,
  ): Promise<CompactionResult<BaseMessage>> => {
    const window = loop.contextWindow;
    const ratio = callRatio(engine, messages, extra);
    const usageHeld = engine.tokens.contextBase(messages).base === "usage";
    const room = usageHeld ? window : Math.max(1, window - Math.ceil(extra * ratio));
    return engine.compact({
      messages,
      contextWindow: room,
      reserveTokens: Math.max(0, Math.min(loop.reserveTokens, room - 1)),
      trigger: "auto",
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      ...(input.signal === undefined ? {} : { signal: input.signal }),
      ...(input.targetTokens === undefined ? {} : { targetTokens: input.targetTokens }),
      ...(summarizer === undefined ? {} : { summarizer }),
    });
  };

  /**
   * After an automatic compaction of `messages` that left `output`: the loop is told the size
   * after (`settle`), `compaction-end`, and a warning when it failed. The window is the provider's
   * measure, so every figure here is: our counts at the calibrated ratio (`callRatio`).
   */
  const settled = (
    engine: Compactor<BaseMessage>,
    loop: HostLoop<BaseMessage>,
    result: CompactionResult<BaseMessage>,
    messages: readonly BaseMessage[],
    output: readonly BaseMessage[],
    extra: number,
    scope: "state" | "request",
  ): Fit => {
    const ratio = callRatio(engine, messages, extra);
    const tokens = result.status === "compacted" ? callTokens(engine, output, extra, ratio) : callTokens(engine, messages, extra, ratio);
    const growth = loop.settle(tokens, output);
    emit({ type: "compaction-end", result, tokens, scope });
    if (result.status === "failed" || result.status === "cancelled") {
      const wait = growth === null ? "" : ` The next automatic compaction waits until the call has grown by ${growth} tokens (a quarter of the window); until then each call is shaped to the budget.`;
      emit({ type: "warning", message: `Compaction ${result.status}: ${result.reason ?? ""}`.trim() + wait, code: result.error?.code ?? null });
    }
    return { result, messages: output, tokens, growth };
  };

  /** Compacts `messages` now, the call waiting (see `run` and `settled`). */
  const fit = async (
    engine: Compactor<BaseMessage>,
    loop: HostLoop<BaseMessage>,
    messages: readonly BaseMessage[],
    extra: number,
    scope: "state" | "request",
    signal: AbortSignal | undefined,
    summarizer?: Summarizer,
  ): Promise<Fit> => {
    const before = callTokens(engine, messages, extra, callRatio(engine, messages, extra));
    emit({ type: "compaction-start", tokens: before, threshold: loop.threshold, contextWindow: loop.contextWindow, messages: messages.length, scope });
    const result = await run(engine, loop, messages, extra, { signal }, summarizer);
    return settled(engine, loop, result, messages, result.status === "compacted" ? result.messages : messages, extra, scope);
  };

  /** Puts a compaction prepared in the background in place: its messages, then `appended` (every message since its snapshot). */
  const putPrepared = (engine: Compactor<BaseMessage>, loop: HostLoop<BaseMessage>, preparation: Preparation<BaseMessage>, appended: readonly BaseMessage[], tokens: number): Fit => {
    loop.applied(preparation);
    const result = preparation.result as CompactionResult<BaseMessage>;
    const messages = [...preparation.snapshot, ...appended];
    const prepared = { startedAt: preparation.startedAt, tokens: preparation.tokens, appended: appended.length };
    emit({ type: "compaction-start", tokens, threshold: loop.threshold, contextWindow: loop.contextWindow, messages: messages.length, scope: "state", prepared });
    return settled(engine, loop, result, messages, result.status === "compacted" ? [...result.messages, ...appended] : messages, overhead, "state");
  };

  /**
   * `beforeModel`'s compaction of the state: with background preparation, core's `backgroundCheck`
   * (start one past the prepare mark, put a prepared one in place at the threshold, wait only when
   * the call could not be made otherwise); without, one compaction at the threshold. Null: none.
   */
  const compactState = async (engine: Compactor<BaseMessage>, loop: HostLoop<BaseMessage>, messages: readonly BaseMessage[], tokens: number, signal: AbortSignal | undefined): Promise<Fit | null> => {
    if (!loop.background) return loop.due(tokens, messages) ? fit(engine, loop, messages, overhead, "state", signal) : null;
    const keys = messages.map((message) => keyOf(engine, message));
    return backgroundCheck<BaseMessage, Fit>(loop, {
      context: () => ({ tokens, messages, keys }),
      run: (snapshot, input) => run(engine, loop, snapshot, overhead, input),
      apply: async (preparation, appended) => putPrepared(engine, loop, preparation, appended, tokens),
      compactNow: (summarizer) => fit(engine, loop, messages, overhead, "state", signal, summarizer),
      report: (background) => emit({ type: "background", background }),
    });
  };

  return createMiddleware({
    name: COMPACTION_MIDDLEWARE_NAME,
    beforeModel: async (state, runtime) => {
      const engine = await getCompactor();
      const loop = loopOf(engine, runtime);
      const messages = state.messages as BaseMessage[];
      const tokens = callTokens(engine, messages, overhead, callRatio(engine, messages, overhead));
      if (!engine.autoCompact.enabled) return undefined;
      const signal = (runtime as { signal?: AbortSignal } | undefined)?.signal;
      const done = await compactState(engine, loop, messages, tokens, signal);
      if (done === null || done.result.status !== "compacted") return undefined;
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
      // The call goes out now: the provider's prompt cache is warm from here.
      loop.sent();
      if (shaped.messages === request.messages) return handler(marked(engine, request));
      return handler(marked(engine, { ...request, messages: [...shaped.messages] }));
    },
  });
}
