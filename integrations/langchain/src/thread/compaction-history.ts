/**
 * `compactionHistory({ openStore })`: a LangChain v1 agent's threads kept in session stores
 * (`EntryStore`: SQLite, Postgres, a pi file, memory), one per `thread_id`, so any worker can pick
 * a thread up, compactions are recorded in it, and the agent's `memory_search` tool finds what
 * they evicted. Its `middleware` goes to `createAgent({ middleware })`, its `memorySearch` to
 * `tools`; each `invoke` names the thread as LangGraph does: `{ configurable: { thread_id } }`.
 *
 * Per run of the agent on thread T (the middleware's hooks):
 * - `beforeAgent`: opens T's store (`openStore(T)`) and a context manager on it
 *   (`createContextManager({ store, loop })`), appends the run's input messages, and replaces the
 *   agent's messages with the thread's context (the newest compaction's summary, then the messages
 *   after it, as they were written).
 * - `beforeModel`: appends the messages the run added since (AI messages, tool results), then
 *   runs the host loop's check: a compaction at the threshold is written to the store as a
 *   compaction entry and the agent's messages become the new context.
 * - `afterAgent`: appends the final messages, checks again, and closes the store it opened (see
 *   below for a compaction still being prepared then).
 * - `wrapModelCall`: measures the system prompt and tools a call carries, so the next run's
 *   threshold leaves room for them; a message too large for the window on its own is sent shrunk
 *   to head and tail (the manager's request shaping), for that call only.
 * Messages are stored as pi messages with LangChain's own `StoredMessage` alongside
 * (`./pi-messages.ts`), so nothing is lost either way. Nothing is deleted from the store.
 *
 * Background compaction (`background`, default `"auto"`: on with a model summarizer, as in
 * `compactionMiddleware`). The host loop (core's `HostLoop`, run by the manager's `check()` through
 * core's `backgroundCheck`) is the thread's, not the run's: one per thread id, kept across runs
 * (the 256 threads served last), so a compaction prepared past the prepare mark in one run is put
 * in place at the threshold of a later one, followed by everything appended since. A run's store is
 * still closed when the run ends, except while a compaction prepared in it is being written:
 * - **In flight at the run's end**: the store and its manager stay open until the compaction is
 *   ready (or `close()`), and then close. Meanwhile the preparation holds its claim in a shared
 *   database (SQLite, Postgres), so no other worker prepares the same one, and once ready the
 *   thread is checked once more: past the threshold (another worker's messages, which waited for
 *   this claim's holder), it is put in place at once. A run on the thread that starts meanwhile
 *   goes on with the store left open, `openStore` not called.
 * - **Ready, not yet due**: only the loop keeps it (its result, the snapshot's entry ids, the
 *   compaction it starts from), no store. A later run opens the store again, and the loop puts it
 *   in place at the threshold only while its snapshot is still the start of the thread's context by
 *   entry id; a thread compacted by hand, by another worker or branched since makes it stale, and
 *   it is dropped, never applied, and reported (`background` `dropped`, with its cost). Its write
 *   is conditional on the compaction it was planned from, as every compaction in a shared store.
 * Why not keep the store open until the compaction is applied: that is up to the next run, which
 * may come in minutes or never, and a store held for it is a database connection per idle thread;
 * why not close the store under a compaction in flight: its claim would go with it, and another
 * worker could prepare the same summary or wait out `waitMs` for a holder that is no longer there.
 * Neither keeps a request waiting: only one that cannot be sent without a compaction waits (at most
 * `waitMs`), as in every host. A thread forgotten past the 256 takes its prepared compaction with it
 * (reported), as `close()` does.
 */
import { randomUUID } from "node:crypto";
import {
  checkHostOptions,
  CompactionError,
  type Compactor,
  configWarnings,
  createCompactor,
  describeError,
  describeValue,
  type DroppedPreparation,
  ErrorCodes,
  type HostCompactionOptions,
  HostLoop,
  type PiMessage,
  type Preparation,
} from "@compaction/core";
import { type ContextManager, createContextManager, forwardThreadEvents, type ThreadEvent } from "@compaction/context-manager";
import { memorySearchTool, type MemorySearchToolOptions, openStoreRecallIndex, type StoreRecallIndex } from "@compaction/plugin-recall";
import type { EntryStore } from "@compaction/transcript";
import { type BaseMessage, RemoveMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createMiddleware } from "langchain";
import { overheadText } from "../overhead-text.js";
import { fromPiMessages, toPiMessage } from "./pi-messages.js";

const HOST = "@compaction/langchain history";
/** LangGraph's `REMOVE_ALL_MESSAGES`: a RemoveMessage with this id clears the message list. */
const REMOVE_ALL_MESSAGES = "__remove_all__";

/** The middleware's name in the agent graph. */
export const COMPACTION_HISTORY_MIDDLEWARE_NAME = "CompactionHistoryMiddleware";

/** Threads whose host loop (and the compaction it prepared) the history keeps between runs: the ones it served last. */
export const THREADS_REMEMBERED = 256;

export interface CompactionHistoryOptions extends Omit<HostCompactionOptions<BaseMessage, ThreadEvent>, "isPinned" | "compactor"> {
  /**
   * Opens the session store of a thread, by the run's `thread_id`: e.g. `(threadId) =>
   * openSqliteStore({ file: "threads.sqlite", session: threadId, create: {} })`. Called once per
   * run (and per `memory_search` call outside a run); the store is closed when the run ends, or,
   * when a compaction prepared in the background is still being written then, once it is ready (a
   * run that starts before goes on with that store, and does not call it).
   * Without `create`, an unknown thread id fails with the store's COMPACTION_TRANSCRIPT_NOT_FOUND.
   */
  readonly openStore: (threadId: string) => Promise<EntryStore> | EntryStore;
  /**
   * A compactor of pi messages (`createCompactor({ adapter: "pi" })`) instead of one from the
   * config; `cwd`, `configPath`, `preset`, `agent`'s section and `plugins` are then not read.
   * The caller owns it.
   */
  readonly compactor?: Compactor<PiMessage>;
  /** Options of the `memory_search` tool (`name`, `limit`, ...). */
  readonly recall?: MemorySearchToolOptions;
}

/** What `compactionHistory` gives: the middleware, the recall tool, and `close()`. */
export interface CompactionHistory {
  /** For `createAgent({ middleware: [history.middleware] })`. */
  readonly middleware: ReturnType<typeof createMiddleware>;
  /** The `memory_search` tool for `createAgent({ tools })`: searches the run's thread, evicted messages too. */
  readonly memorySearch: ReturnType<typeof tool>;
  /**
   * Drops the compactions prepared in the background that no run put in place (each reported as
   * `dropped`; one being written is cancelled), closes the stores still open (a run that threw, a
   * compaction in flight) and frees the compactor it built.
   */
  close(): Promise<void>;
}

/** One run's thread: its store, its manager and the ids of the agent's messages already in the store. */
interface OpenThread {
  readonly threadId: string;
  readonly store: EntryStore;
  readonly manager: ContextManager<PiMessage>;
  readonly recorded: Set<string>;
  recall: Promise<StoreRecallIndex> | undefined;
}

/** What the history keeps of a thread from run to run (see the module comment). */
interface KeptThread {
  readonly threadId: string;
  /** The thread's host loop, made for `room` (the window less the system prompt and tools); it holds the compaction prepared in the background. */
  loop: HostLoop<PiMessage>;
  room: number;
  /** The store and manager of the run that ended with a compaction in flight, open until it is ready. */
  lingering: OpenThread | undefined;
  /** The close of that store once it was ready, under way. */
  closing: Promise<void> | undefined;
}

/**
 * A LangChain agent's threads in session stores, with compaction recorded in them and
 * `memory_search` over them. See the module comment for what each hook does.
 */
export function compactionHistory(options: CompactionHistoryOptions): CompactionHistory {
  checkOptions(options);
  let compactor: Promise<Compactor<PiMessage>> | undefined;
  let owned: Compactor<PiMessage> | undefined;
  /** Tokens of the system prompt and tool definitions, as the last call carried them. */
  let overhead = 0;
  const open = new Map<string, OpenThread>();
  /** Every thread's loop, the one served last at the end (see `THREADS_REMEMBERED`). */
  const kept = new Map<string, KeptThread>();

  const reportDropped = (cost: DroppedPreparation | null): void => {
    if (cost !== null) options.on?.({ type: "background", background: { type: "dropped", cost } });
  };

  const getCompactor = (): Promise<Compactor<PiMessage>> => {
    compactor ??= (async () => {
      if (options.compactor !== undefined) return options.compactor;
      const built = await createCompactor<PiMessage>({
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        ...(options.configPath === undefined ? {} : { configPath: options.configPath }),
        ...(options.agent === undefined ? {} : { agent: options.agent }),
        ...(options.preset === undefined ? {} : { preset: options.preset }),
        ...(options.trusted === undefined ? {} : { trusted: options.trusted }),
        adapter: "pi",
      });
      owned = built;
      for (const warning of configWarnings(built)) options.on?.({ type: "warning", message: `${warning.message} ${warning.hint}`, code: warning.code });
      for (const plugin of options.plugins ?? []) built.use(plugin);
      return built;
    })();
    return compactor;
  };

  const openStore = async (threadId: string): Promise<EntryStore> => {
    const store = await options.openStore(threadId);
    const methods = ["header", "entries", "branch", "append", "appendCompaction", "version", "close"];
    if (typeof store !== "object" || store === null || !methods.every((name) => typeof (store as unknown as Record<string, unknown>)[name] === "function")) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `${HOST}: openStore("${threadId}") returned ${describeValue(store)}, not a session store (an EntryStore: ${methods.join(", ")}).`, {
        path: "/openStore",
        hint: "Return a store opened for the thread: openSqliteStore({ file, session: threadId, create: {} }) from @compaction/transcript, or openPostgresStore(...) from @compaction/store-postgres.",
      });
    }
    return store;
  };

  /**
   * The loop of `threadId` for a run with `room` tokens for the messages, made on its first run.
   * It is made again when the room changed (the system prompt and tools measured since), unless it
   * holds a compaction prepared in the background: that one is put in place, or dropped, first.
   */
  const loopOf = (threadId: string, engine: Compactor<PiMessage>, room: number, reserve: number): KeptThread => {
    let thread = kept.get(threadId);
    if (thread !== undefined) kept.delete(threadId);
    if (thread === undefined || (thread.room !== room && thread.loop.prepared === null)) {
      const { background, waitMs, cacheTtlMs } = options;
      const loop = new HostLoop<PiMessage>(engine, {
        contextWindow: room,
        // The reply's reserve at most half the room the messages have (a large system prompt must not make every run fail).
        reserveTokens: Math.min(reserve, Math.floor(room / 2)),
        host: HOST,
        ...(background === undefined ? {} : { background }),
        ...(waitMs === undefined ? {} : { waitMs }),
        ...(cacheTtlMs === undefined ? {} : { cacheTtlMs }),
      });
      if (thread === undefined) thread = { threadId, loop, room, lingering: undefined, closing: undefined };
      else Object.assign(thread, { loop, room });
    }
    kept.set(threadId, thread);
    forgetOldest();
    return thread;
  };

  /** Past `THREADS_REMEMBERED`, forgets the threads served longest ago that no run or store holds, with their prepared compactions (reported). */
  const forgetOldest = (): void => {
    for (const [threadId, thread] of kept) {
      if (kept.size <= THREADS_REMEMBERED) return;
      if (open.has(threadId) || thread.lingering !== undefined || thread.closing !== undefined) continue;
      reportDropped(thread.loop.drop(`its thread was forgotten (the history keeps the ${THREADS_REMEMBERED} it served last)`));
      kept.delete(threadId);
    }
  };

  const startThread = async (threadId: string): Promise<OpenThread> => {
    const unfinished = open.get(threadId);
    if (unfinished !== undefined) await endRun(unfinished);
    const engine = await getCompactor();
    const window = options.contextWindow ?? engine.contextWindow;
    if (window === undefined) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `${HOST}: no context window: neither the contextWindow option nor the config's contextWindow is set.`, {
        path: "/contextWindow",
        hint: "Pass compactionHistory({ contextWindow: <the model's window in tokens> }) or set contextWindow in .compactionrc.",
      });
    }
    // What the system prompt and tools take of the window is not the thread's: the manager measures the messages alone.
    const room = Math.max(1, window - overhead);
    // The reply's reserve for the model's window (the reserveTokens option, else the config's, else
    // the window's own from maxOutputTokens): one that does not fit the model's window throws here,
    // naming the option.
    const reserve = engine.reserveFor(window, {
      reserveTokens: options.reserveTokens,
      maxOutputTokens: options.maxOutputTokens,
      source: { name: `the reserveTokens option of ${HOST}`, path: "/reserveTokens" },
    });
    const resumed = await resume(threadId);
    if (resumed !== undefined) return resumed;
    const thread = loopOf(threadId, engine, room, reserve);
    const store = await openStore(threadId);
    try {
      const manager = await createContextManager<PiMessage>({
        store,
        compactor: engine,
        loop: thread.loop,
        ...(options.agent === undefined ? {} : { agent: options.agent }),
      });
      forwardThreadEvents(manager as ContextManager<unknown>, options.on);
      const opened: OpenThread = { threadId, store, manager, recorded: new Set(), recall: undefined };
      open.set(threadId, opened);
      return opened;
    } catch (error) {
      await store.close();
      throw error;
    }
  };

  /**
   * The run's thread on the store the last run left open for the compaction being written (its
   * manager and loop with it), or undefined when that store is closed (waiting for a close under way).
   */
  const resume = async (threadId: string): Promise<OpenThread | undefined> => {
    const state = kept.get(threadId);
    if (state === undefined) return undefined;
    await state.closing;
    const lingering = state.lingering;
    if (lingering === undefined) return undefined;
    state.lingering = undefined;
    kept.delete(threadId);
    kept.set(threadId, state);
    const thread: OpenThread = { threadId, store: lingering.store, manager: lingering.manager, recorded: new Set(), recall: lingering.recall };
    open.set(threadId, thread);
    return thread;
  };

  /** A run's end: its store is closed, or, with a compaction being prepared in it, left open until that is ready (`linger`). */
  const endRun = async (thread: OpenThread): Promise<void> => {
    if (open.get(thread.threadId) === thread) open.delete(thread.threadId);
    const state = kept.get(thread.threadId);
    const preparation = state?.loop.prepared;
    if (state !== undefined && preparation !== null && preparation !== undefined && !preparation.ready) {
      linger(state, thread, preparation);
      return;
    }
    await closeThread(thread);
  };

  /**
   * Keeps `thread`'s store open while `preparation` is written: once it is ready, the thread is
   * checked once more (put in place when past the threshold, dropped when stale), then the store
   * closes, the loop keeping what is left for a later run. A run that takes the store over first
   * (`startThread`) or `close()` ends this.
   */
  const linger = (state: KeptThread, thread: OpenThread, preparation: Preparation<PiMessage>): void => {
    state.lingering = thread;
    void (async () => {
      await preparation.done;
      if (state.lingering !== thread) return;
      try {
        await thread.manager.check();
      } catch (error) {
        options.on?.({ type: "warning", message: `${HOST}: checking thread "${thread.threadId}" once its compaction prepared in the background was ready failed: ${describeError(error)}`, code: codeOf(error) });
      }
      if (state.lingering !== thread) return;
      state.lingering = undefined;
      const closing = closeThread(thread)
        .catch((error: unknown) => options.on?.({ type: "warning", message: `${HOST}: closing the store of thread "${thread.threadId}" failed: ${describeError(error)}`, code: codeOf(error) }))
        .finally(() => {
          if (state.closing === closing) state.closing = undefined;
        });
      state.closing = closing;
    })();
  };

  /** Disposes the manager (which leaves the loop's prepared compaction to the loop) and closes the store. */
  const closeThread = async (thread: OpenThread): Promise<void> => {
    try {
      await thread.manager.dispose();
    } finally {
      await thread.store.close();
    }
  };

  /** The thread's context as the agent's messages, each with an id (recorded, so it is not appended again). */
  const contextOf = (thread: OpenThread): BaseMessage[] => {
    const messages = fromPiMessages(thread.manager.messages, thread.store.location);
    for (const message of messages) {
      // A summary rebuilt from the compaction entry has no id of its own: give it one, so the run knows it.
      if (message.id === undefined) message.id = `compaction-context-${randomUUID()}`;
      thread.recorded.add(message.id);
    }
    return messages;
  };

  /** Appends the agent's messages the store does not hold yet, in order; true when there were any. */
  const record = async (thread: OpenThread, messages: readonly BaseMessage[]): Promise<boolean> => {
    const fresh = messages.filter((message) => message.id === undefined || !thread.recorded.has(message.id));
    if (fresh.length === 0) return false;
    const now = Date.now();
    const converted = fresh.map((message, index) => toPiMessage(message, `the run's new message ${index + 1} (${describeValue(message.id)})`, now));
    await thread.manager.append(converted);
    for (const message of fresh) if (message.id !== undefined) thread.recorded.add(message.id);
    return true;
  };

  const threadIdOf = (configurable: { thread_id?: unknown } | undefined, where: string): string => {
    const threadId = configurable?.thread_id;
    if (typeof threadId !== "string" || threadId === "") {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `${HOST}: ${where} has no thread id: configurable.thread_id is ${threadId === undefined ? "not set" : describeValue(threadId)}.`, {
        hint: 'Name the thread on every call: agent.invoke({ messages }, { configurable: { thread_id: "<the thread id>" } }).',
      });
    }
    return threadId;
  };

  const threadOf = (runtime: unknown, where: string): OpenThread => {
    const threadId = threadIdOf((runtime as { configurable?: { thread_id?: unknown } } | undefined)?.configurable, where);
    const thread = open.get(threadId);
    if (thread === undefined) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `${HOST}: ${where} on thread "${threadId}" found no open thread (its beforeAgent did not run).`, {
        hint: "Pass history.middleware to createAgent({ middleware }) and call the agent through invoke or stream.",
      });
    }
    return thread;
  };

  const replaceState = (thread: OpenThread) => ({ messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...contextOf(thread)] });

  const middleware = createMiddleware({
    name: COMPACTION_HISTORY_MIDDLEWARE_NAME,
    beforeAgent: async (state, runtime) => {
      const threadId = threadIdOf((runtime as { configurable?: { thread_id?: unknown } }).configurable, "the run");
      const thread = await startThread(threadId);
      try {
        // The context as read must be sendable: a corrupt entry fails here, naming it, not mid-run.
        // Its messages are in the store already: an input that repeats them (a checkpointer's state) is not appended twice.
        for (const message of fromPiMessages(thread.manager.messages, thread.store.location)) if (message.id !== undefined) thread.recorded.add(message.id);
        await record(thread, state.messages as BaseMessage[]);
        await thread.manager.beforeRequest();
        return replaceState(thread);
      } catch (error) {
        await endRun(thread);
        throw error;
      }
    },
    beforeModel: async (state, runtime) => {
      const thread = threadOf(runtime, "a model call");
      const compactionsBefore = thread.manager.compactions;
      await record(thread, state.messages as BaseMessage[]);
      await thread.manager.check();
      // Another worker's compaction, or ours: the agent goes on from the thread's context as stored.
      return thread.manager.compactions === compactionsBefore ? undefined : replaceState(thread);
    },
    afterAgent: async (state, runtime) => {
      const thread = threadOf(runtime, "the end of the run");
      try {
        await record(thread, state.messages as BaseMessage[]);
        await thread.manager.afterResponse();
      } finally {
        await endRun(thread);
      }
      return undefined;
    },
    wrapModelCall: async (request, handler) => {
      const engine = await getCompactor();
      overhead = engine.tokens.counter.count(overheadText(request));
      // A message too large for the window on its own goes shrunk to head and tail (the manager's
      // request shaping), for this call only: the agent's state and the store keep it whole.
      const threadId = (request.runtime as { configurable?: { thread_id?: unknown } } | undefined)?.configurable?.thread_id;
      const thread = typeof threadId === "string" ? open.get(threadId) : undefined;
      if (thread !== undefined) {
        const context = thread.manager.messages;
        const shaped = thread.manager.requestMessages();
        if (shaped.length !== context.length || shaped.some((message, index) => message !== context[index])) {
          return handler({ ...request, messages: fromPiMessages(shaped, thread.store.location, new Set(context)) });
        }
      }
      return handler(request);
    },
  });

  // The tool's name, description and parameters (each call searches the run's thread with its own index).
  const definition = memorySearchTool({ search: async () => [], get: async () => undefined }, options.recall ?? {});
  const indexOf = (thread: OpenThread): Promise<StoreRecallIndex> => {
    thread.recall ??= openStoreRecallIndex(thread.store);
    return thread.recall;
  };

  const memorySearch = tool(
    async (input: Record<string, unknown>, config: { configurable?: { thread_id?: unknown } }): Promise<string> => {
      let threadId: string;
      try {
        threadId = threadIdOf(config?.configurable, "memory_search");
      } catch (error) {
        return describeError(error);
      }
      const running = open.get(threadId);
      const store = running?.store ?? (await openStore(threadId));
      try {
        const index = running === undefined ? openStoreRecallIndex(store) : indexOf(running);
        const result = await memorySearchTool({ search: (q, o) => index.then((i) => i.search(q, o)), get: (id, o) => index.then((i) => i.get(id, o)) }, options.recall ?? {}).handle(input);
        // The model reads an error as the tool's answer and can try again with other words.
        return result.text;
      } finally {
        if (running === undefined) await store.close();
      }
    },
    { name: definition.name, description: definition.description, schema: definition.parameters as never },
  );

  return {
    middleware,
    memorySearch: memorySearch as unknown as ReturnType<typeof tool>,
    async close() {
      const preparations: Promise<void>[] = [];
      const lingering: OpenThread[] = [];
      for (const thread of kept.values()) {
        const preparation = thread.loop.prepared;
        if (preparation !== null) preparations.push(preparation.done);
        reportDropped(thread.loop.drop("the history was closed (compactionHistory's close())"));
        if (thread.lingering !== undefined) lingering.push(thread.lingering);
        thread.lingering = undefined;
      }
      // A cancelled compaction ends at once: nothing of it runs once its store is closed.
      await Promise.all(preparations);
      for (const thread of [...open.values()]) await endRun(thread);
      for (const thread of lingering) await closeThread(thread);
      for (const thread of kept.values()) await thread.closing;
      kept.clear();
      owned?.dispose();
    },
  };
}

function codeOf(error: unknown): string | null {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : null;
}

function checkOptions(options: CompactionHistoryOptions): void {
  checkHostOptions(options, { host: HOST, pluginExample: "summarizerOpenAI({ model })" });
  if (typeof options.openStore !== "function") {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `${HOST}: openStore must be a function (threadId) => EntryStore; found ${describeValue(options.openStore)}.`, {
      path: "/openStore",
      hint: 'Pass e.g. openStore: (threadId) => openSqliteStore({ file: "threads.sqlite", session: threadId, create: {} }).',
    });
  }
}
