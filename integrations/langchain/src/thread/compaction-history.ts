/**
 * `compactionHistory({ openStore })`: a LangChain v1 agent's threads kept in session stores
 * (`EntryStore`: SQLite, Postgres, a pi file, memory), one per `thread_id`, so any worker can pick
 * a thread up, compactions are recorded in it, and the agent's `memory_search` tool finds what
 * they evicted. Its `middleware` goes to `createAgent({ middleware })`, its `memorySearch` to
 * `tools`; each `invoke` names the thread as LangGraph does: `{ configurable: { thread_id } }`.
 *
 * Per run of the agent on thread T (the middleware's hooks):
 * - `beforeAgent`: opens T's store (`openStore(T)`) and a context manager on it
 *   (`createContextManager({ store })`), appends the run's input messages, and replaces the
 *   agent's messages with the thread's context (the newest compaction's summary, then the messages
 *   after it, as they were written).
 * - `beforeModel`: appends the messages the run added since (AI messages, tool results), then
 *   compacts when the context passed the preset's threshold; a compaction is written to the store
 *   as a compaction entry and the agent's messages become the new context.
 * - `afterAgent`: appends the final messages, compacts when past the threshold, and closes the
 *   store it opened.
 * - `wrapModelCall`: measures the system prompt and tools a call carries, so the next run's
 *   threshold leaves room for them; a message too large for the window on its own is sent shrunk
 *   to head and tail (the manager's request shaping), for that call only.
 * Messages are stored as pi messages with LangChain's own `StoredMessage` alongside
 * (`./pi-messages.ts`), so nothing is lost either way. Nothing is deleted from the store.
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
  ErrorCodes,
  type HostCompactionOptions,
  type PiMessage,
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

export interface CompactionHistoryOptions extends Omit<HostCompactionOptions<BaseMessage, ThreadEvent>, "isPinned" | "compactor" | "background" | "waitMs" | "cacheTtlMs"> {
  /**
   * Opens the session store of a thread, by the run's `thread_id`: e.g. `(threadId) =>
   * openSqliteStore({ file: "threads.sqlite", session: threadId, create: {} })`. Called once per
   * run (and per `memory_search` call outside a run); the store is closed when the run ends.
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
  /** Closes the stores of runs that never ended (a run that threw) and frees the compactor it built. */
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

  const startThread = async (threadId: string): Promise<OpenThread> => {
    await endThread(open.get(threadId));
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
    // naming the option. The manager gets it out of the room the messages have, at most half of
    // it (a large system prompt must not make every run fail).
    const reserve = engine.reserveFor(window, {
      reserveTokens: options.reserveTokens,
      maxOutputTokens: options.maxOutputTokens,
      source: { name: `the reserveTokens option of ${HOST}`, path: "/reserveTokens" },
    });
    const store = await openStore(threadId);
    try {
      const manager = await createContextManager<PiMessage>({
        store,
        compactor: engine,
        contextWindow: room,
        reserveTokens: Math.min(reserve, Math.floor(room / 2)),
        reserveOptionOf: HOST,
        ...(options.agent === undefined ? {} : { agent: options.agent }),
        // The manager is disposed at the end of every run (afterAgent), which would cancel a
        // compaction prepared in the background before its threshold: it compacts at the threshold.
        background: false,
      });
      forwardThreadEvents(manager as ContextManager<unknown>, options.on);
      const thread: OpenThread = { threadId, store, manager, recorded: new Set(), recall: undefined };
      open.set(threadId, thread);
      return thread;
    } catch (error) {
      await store.close();
      throw error;
    }
  };

  const endThread = async (thread: OpenThread | undefined): Promise<void> => {
    if (thread === undefined) return;
    if (open.get(thread.threadId) === thread) open.delete(thread.threadId);
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
        await endThread(thread);
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
        await endThread(thread);
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
      for (const thread of [...open.values()]) await endThread(thread);
      owned?.dispose();
    },
  };
}

function checkOptions(options: CompactionHistoryOptions): void {
  checkHostOptions(options, { host: HOST, pluginExample: "summarizerOpenAI({ model })" });
  if (typeof options.openStore !== "function") {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `${HOST}: openStore must be a function (threadId) => EntryStore; found ${describeValue(options.openStore)}.`, {
      path: "/openStore",
      hint: 'Pass e.g. openStore: (threadId) => openSqliteStore({ file: "threads.sqlite", session: threadId, create: {} }).',
    });
  }
  // Its store is closed at the end of every run, which would cancel a compaction prepared before then.
  const background = (options as { background?: unknown }).background;
  if (background !== undefined && background !== false) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `${HOST}: background compaction is not available here: each run's store is closed when the run ends, which would cancel a compaction prepared before then; found background: ${describeValue(background)}.`, {
      path: "/background",
      hint: "Leave background out (the thread compacts at the threshold), or use compactionMiddleware, whose loops outlive a run.",
    });
  }
}
