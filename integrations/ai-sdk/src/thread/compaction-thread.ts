/**
 * `openCompactionThread({ store })`: an AI SDK conversation whose history lives in a session
 * store (`EntryStore`: SQLite, Postgres, a pi file, memory), so any worker can pick a thread up
 * by its id, compactions are recorded in the thread, and the agent can `memory_search` what they
 * evicted.
 *
 * The thread is the context manager (`createContextManager({ store })`) with the AI SDK's
 * messages at its edges: appended `ModelMessage`s are written as pi messages (the original rides
 * along, `./pi-messages.ts`), the manager compacts past the preset's threshold and records the
 * compaction as a compaction entry, and `messages()` reads the context back (the summary, then
 * the messages it kept, as they were appended). Nothing is deleted: the store keeps every message.
 */
import {
  type BackgroundMode,
  checkHostOptions,
  CompactionError,
  type Compactor,
  configWarnings,
  createCompactor,
  describeValue,
  ErrorCodes,
  type HostCompactionOptions,
  type PiAssistantMessage,
  type PiMessage,
  type PiUsage,
} from "@compaction/core";
import { type ContextManager, createContextManager, forwardThreadEvents, type ThreadEvent } from "@compaction/context-manager";
import { memorySearchTool, type MemorySearchToolOptions, openStoreRecallIndex, type StoreRecallIndex } from "@compaction/plugin-recall";
import type { EntryStore } from "@compaction/transcript";
import { jsonSchema, type ModelMessage, tool } from "ai";
import type { AiSdkCompactionEvent } from "../options.js";
import { ModelMessageCompaction } from "../model-message-compaction.js";
import { type PrepareStepInput, type PrepareStepOutput, prepareStepOf } from "../prepare-step.js";
import { fromPiMessages, toPiMessages } from "./pi-messages.js";

const HOST = "@compaction/ai-sdk thread";

export interface CompactionThreadOptions extends Omit<HostCompactionOptions<ModelMessage, ThreadEvent>, "isPinned" | "compactor"> {
  /**
   * The thread's session store, opened for the thread's id: `openSqliteStore({ file, session:
   * threadId, create: {} })` (`@compaction/transcript`), `openPostgresStore(...)`
   * (`@compaction/store-postgres`), `openPiFileStore(path)`, `new MemoryEntryStore()`, or your own
   * `EntryStore`. The caller owns it: `close()` leaves it open.
   */
  readonly store: EntryStore;
  /**
   * A compactor of pi messages (`createCompactor({ adapter: "pi" })`) instead of one from the
   * config; `cwd`, `configPath`, `preset`, `agent`'s section and `plugins` are then not read.
   * The caller owns it.
   */
  readonly compactor?: Compactor<PiMessage>;
  /** Options of the `memory_search` tool (`name`, `limit`, ...). */
  readonly recall?: MemorySearchToolOptions;
  /**
   * Background compaction (docs/background-compaction.md): `true` or `"auto"` for a thread kept
   * open across runs, so that a compaction prepared before the threshold is there when it is
   * reached. Default false: `close()` cancels one in flight, so a thread opened for one request
   * would pay for summaries it never uses.
   */
  readonly background?: BackgroundMode;
}

/** What the agent's `memory_search` tool takes: a query, or an entry id to read in full. */
export interface MemorySearchInput {
  readonly query?: string;
  readonly entryId?: string;
  readonly limit?: number;
}

/**
 * One thread of a conversation kept in a session store. Read the context with `messages()`, send
 * it, then `append()` what came back; `memorySearch` is the recall tool over the whole thread.
 */
export class CompactionThread {
  /** The thread's session store (the caller's). */
  readonly store: EntryStore;
  /**
   * `prepareStep` for a long tool loop inside one request: compacts the step's messages in memory
   * when they pass the threshold (`compactionPrepareStep`), so one request never outgrows the
   * window. The steps reach the store when you `append()` the response's messages.
   */
  readonly prepareStep: <M extends object = ModelMessage>(input: PrepareStepInput<M>) => Promise<PrepareStepOutput<M>>;
  /** The `memory_search` tool in the AI SDK's shape: searches every message of the thread, evicted ones too. */
  readonly memorySearch: ReturnType<typeof tool<MemorySearchInput, string>>;
  readonly #manager: ContextManager<PiMessage>;
  readonly #ownedCompactor: Compactor<PiMessage> | undefined;
  /** `prepareStep`'s in-memory compaction of one request's steps (its compactor is freed on close). */
  readonly #steps: ModelMessageCompaction;
  #recall: Promise<StoreRecallIndex> | undefined;
  #closed = false;

  /** Prefer `openCompactionThread`, which checks the options and builds the manager. */
  constructor(init: {
    readonly store: EntryStore;
    readonly manager: ContextManager<PiMessage>;
    readonly ownedCompactor: Compactor<PiMessage> | undefined;
    readonly options: CompactionThreadOptions;
  }) {
    this.store = init.store;
    this.#manager = init.manager;
    this.#ownedCompactor = init.ownedCompactor;
    const { store: _store, recall: _recall, compactor: _compactor, on, ...stepOptions } = init.options;
    // A step's compaction is in memory only (the store records the manager's), so its end names no entry.
    const stepEvents = (event: AiSdkCompactionEvent): void => {
      if (event.type === "compaction-end") {
        on?.({ type: "compaction-end", status: event.result.status, reason: event.result.reason, entryId: null, tokens: event.tokens, compactions: this.compactions });
      } else if (event.type === "compaction-start") {
        on?.({ type: "compaction-start", tokens: event.tokens, threshold: event.threshold, contextWindow: event.contextWindow, messages: event.messages, ...(event.prepared === undefined ? {} : { prepared: event.prepared }) });
      } else if (event.type === "background") {
        on?.({ type: "background", background: event.background });
      } else {
        on?.({ type: "warning", message: event.message, code: event.code });
      }
    };
    // A step's compaction is prepared in the background as the thread's are (its background option, default off).
    this.#steps = new ModelMessageCompaction({ ...stepOptions, background: init.options.background ?? false, ...(on === undefined ? {} : { on: stepEvents }) });
    this.prepareStep = prepareStepOf<ModelMessage>(this.#steps) as unknown as CompactionThread["prepareStep"];
    const search = memorySearchTool({ search: (query, options) => this.#index().then((index) => index.search(query, options)), get: (id, options) => this.#index().then((index) => index.get(id, options)) }, init.options.recall ?? {});
    this.memorySearch = tool<MemorySearchInput, string>({
      description: search.description,
      inputSchema: jsonSchema<MemorySearchInput>(search.parameters as Parameters<typeof jsonSchema>[0]),
      execute: async (input) => {
        const result = await search.handle(input);
        // The model reads an error as the tool's answer and can try again with other words.
        return result.text;
      },
    });
  }

  /** The thread's location in its store (`sqlite:<file>#<id>`, ...). */
  get location(): string {
    return this.store.location;
  }

  /** Compactions recorded on the thread's branch (by any worker). */
  get compactions(): number {
    return this.#manager.compactions;
  }

  /**
   * The messages to send: the thread's context (the newest compaction's summary, then the
   * messages after it as they were appended), shaped to the window when one turn outgrew it.
   * Reads what other workers wrote first, and compacts when the context is past the threshold.
   */
  async messages(): Promise<ModelMessage[]> {
    this.#assertOpen("messages");
    await this.#manager.beforeRequest();
    return fromPiMessages(this.#manager.requestMessages(), this.location, new Set(this.#manager.messages));
  }

  /**
   * Appends messages to the thread (the user's new message, then the response's messages:
   * `result.response.messages` in ai 6, `result.responseMessages` in ai 7), all or none, after
   * what any worker wrote; then compacts when the context passed the threshold, writing the
   * compaction as a compaction entry. Pass the request's `usage` (`result.usage`: the last step's
   * tokens) with its messages: it is the provider's count of the whole context, system prompt and
   * tools included, which the thread then measures from (as pi records usage on its assistant
   * messages), so it compacts before a request outgrows the window. Throws
   * COMPACTION_INPUT_INVALID for a system message or a value that is not a ModelMessage (nothing is
   * written then).
   */
  async append(messages: ModelMessage | readonly ModelMessage[], options: AppendOptions = {}): Promise<void> {
    this.#assertOpen("append");
    const list: readonly ModelMessage[] = Array.isArray(messages) ? messages : [messages as ModelMessage];
    const now = Date.now();
    const converted = list.flatMap((message, index) => toPiMessages(message, `append: message ${index + 1}`, now));
    if (converted.length === 0) return;
    const usage = piUsage(options.usage);
    if (usage !== undefined) {
      const last = converted.findLastIndex((message) => message.role === "assistant");
      if (last < 0) {
        throw new CompactionError(ErrorCodes.INPUT_INVALID, `${HOST}: append was given usage but no assistant message to record it on.`, {
          path: "/usage",
          hint: "Pass usage with the response's messages (result.response.messages, result.usage), not with the user's message.",
        });
      }
      converted[last] = { ...(converted[last] as PiAssistantMessage), usage };
    }
    await this.#manager.append(converted);
    await this.#manager.afterResponse();
  }

  /** Frees the compactors the thread built; the store stays open (it is the caller's). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#manager.dispose();
    this.#ownedCompactor?.dispose();
    await this.#steps.dispose();
  }

  #index(): Promise<StoreRecallIndex> {
    this.#recall ??= openStoreRecallIndex(this.store);
    return this.#recall;
  }

  #assertOpen(what: string): void {
    if (this.#closed) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `${HOST}: ${what}() was called after close() on ${this.location}.`, {
        hint: "Open the thread again with openCompactionThread({ store }).",
      });
    }
  }
}

/** What `append` takes besides the messages. */
export interface AppendOptions {
  /**
   * The provider's token usage of the request that produced these messages: `result.usage` (the
   * last step's), `{ inputTokens, outputTokens }`.
   */
  readonly usage?: { readonly inputTokens?: number | undefined; readonly outputTokens?: number | undefined };
}

/** pi's usage record for the AI SDK's, or undefined when it says nothing usable. */
function piUsage(usage: AppendOptions["usage"]): PiUsage | undefined {
  if (usage === undefined) return undefined;
  const input = usage.inputTokens;
  const output = usage.outputTokens ?? 0;
  if (typeof input !== "number" || !Number.isFinite(input) || input <= 0 || typeof output !== "number" || !Number.isFinite(output) || output < 0) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `${HOST}: append's usage must hold a positive inputTokens and an outputTokens of at least 0; found ${describeValue(usage)}.`, {
      path: "/usage",
      hint: "Pass the result's usage as the AI SDK gives it (result.usage), or leave usage out.",
    });
  }
  return { input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output };
}

/**
 * Opens a thread kept in `options.store` and reads its context. Compaction follows the agent's
 * preset from `.compactionrc` (or `preset`, `plugins`, `contextWindow`), as `compactionPrepareStep`
 * does. Throws COMPACTION_INPUT_INVALID for bad options, and the store's own error for a session
 * it cannot read (COMPACTION_TRANSCRIPT_NOT_FOUND for an unknown id is the store's, at open).
 */
export async function openCompactionThread(options: CompactionThreadOptions): Promise<CompactionThread> {
  checkThreadOptions(options);
  const owned =
    options.compactor === undefined
      ? await createCompactor<PiMessage>({
          ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
          ...(options.configPath === undefined ? {} : { configPath: options.configPath }),
          ...(options.agent === undefined ? {} : { agent: options.agent }),
          ...(options.preset === undefined ? {} : { preset: options.preset }),
          ...(options.trusted === undefined ? {} : { trusted: options.trusted }),
          adapter: "pi",
        })
      : undefined;
  try {
    if (owned !== undefined) {
      for (const warning of configWarnings(owned)) options.on?.({ type: "warning", message: `${warning.message} ${warning.hint}`, code: warning.code });
      for (const plugin of options.plugins ?? []) owned.use(plugin);
    }
    const compactor = options.compactor ?? owned!;
    const manager = await createContextManager<PiMessage>({
      store: options.store,
      compactor,
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      ...(options.contextWindow === undefined ? {} : { contextWindow: options.contextWindow }),
      // The reply's reserve, as compactionPrepareStep takes it: the option, else the config's, else the window's own.
      ...(options.reserveTokens === undefined ? {} : { reserveTokens: options.reserveTokens }),
      ...(options.maxOutputTokens === undefined ? {} : { maxOutputTokens: options.maxOutputTokens }),
      reserveOptionOf: HOST,
      background: options.background ?? false,
    });
    forwardThreadEvents(manager as ContextManager<unknown>, options.on);
    // The context as read must be sendable: a corrupt entry fails here, naming it, not mid-request.
    fromPiMessages(manager.messages, options.store.location);
    return new CompactionThread({ store: options.store, manager, ownedCompactor: owned, options });
  } catch (error) {
    owned?.dispose();
    throw error;
  }
}

function checkThreadOptions(options: CompactionThreadOptions): void {
  if (typeof options !== "object" || options === null) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `${HOST}: expected an options object, found ${describeValue(options)}.`, {
      hint: "Call openCompactionThread({ store: await openSqliteStore({ file, session: threadId, create: {} }) }).",
    });
  }
  checkHostOptions(options, { host: HOST, pluginExample: "summarizerAiSdk({ model })" });
  const store = options.store as unknown;
  const methods = ["header", "entries", "branch", "append", "appendCompaction", "version", "close"];
  if (typeof store !== "object" || store === null || !methods.every((name) => typeof (store as Record<string, unknown>)[name] === "function")) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `${HOST}: store must be a session store (an EntryStore: ${methods.join(", ")}); found ${describeValue(store)}.`, {
      path: "/store",
      hint: "Open one for the thread's id: openSqliteStore({ file, session: threadId, create: {} }) from @compaction/transcript, or openPostgresStore(...) from @compaction/store-postgres.",
    });
  }
}
