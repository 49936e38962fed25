/** `createContextManager`: a ContextManager from the config (or a given compactor) and a context. */
import {
  type AdapterName,
  type BackgroundMode,
  CompactionError,
  type Compactor,
  createCompactor,
  describeValue,
  ErrorCodes,
  HostLoop,
  type ResolvedConfig,
} from "@compaction/core";
import { hostname } from "node:os";
import { type ContextStore, MemoryStore } from "./context-store.js";
import { DEFAULT_CLAIM_LEASE_MS, type EntryStore, MAX_CLAIM_LEASE_MS } from "@compaction/transcript";
import { ContextManager } from "./context-manager.js";
import { EntryContextStore } from "./entry-context-store.js";
import { SessionStore } from "./session-store.js";

export interface ContextManagerOptions<T> {
  /** The agent whose section of the config applies (and that plugins are told about). */
  readonly agent?: string;
  /** Where the config search starts. Default `process.cwd()`. */
  readonly cwd?: string;
  /** Load this config file (relative to `cwd`) instead of searching. */
  readonly configPath?: string;
  /** Run this preset instead of the configured one. */
  readonly preset?: string;
  /**
   * Whether the project at `cwd` may run code (see `loadConfig`): `false` loads no code config
   * and no preset or plugin from the project; `compactor.config.warnings` says what was skipped.
   * Default `true`.
   */
  readonly trusted?: boolean;
  /** With `trusted: false`: how the user trusts the project in your host, for the warnings' hint. */
  readonly trustHint?: string;
  /** The model's context window in tokens. Default: the compactor's (the config's `contextWindow`). */
  readonly contextWindow?: number;
  /**
   * Tokens kept free for the model's reply, at most half the window: every request is shaped to
   * the window less it, and the threshold and targets are shares of what it leaves. Default: the
   * config's `reserveTokens`, else the window's own (`maxOutputTokens` where given, at most a
   * quarter of the window, else the smaller of 16,384 and an eighth of the window). A reserve that
   * does not fit the window is an error here, naming the option or the config file's key.
   */
  readonly reserveTokens?: number;
  /** The most tokens the model writes in one reply (the `max_tokens` you send): the default reserve. */
  readonly maxOutputTokens?: number;
  /** Which host's option `reserveTokens` is, for its error (an integration built on the manager). Default `createContextManager`. */
  readonly reserveOptionOf?: string;
  /**
   * The message format, when it is not the config's `adapter`. With `session` it must be `pi`
   * (the default then). For a custom MessageAdapter, build a Compactor and pass `compactor`.
   */
  readonly adapter?: AdapterName;
  /**
   * A pi session file (version 3) that holds the context: messages are read from it by the
   * boundary rule, and appended messages and compactions are written to it.
   */
  readonly session?: string;
  /**
   * A session store that holds the context (`EntryStore` from @compaction/transcript: a pi file
   * through `openPiFileStore`, SQLite through `openSqliteStore`, Postgres through
   * @compaction/store-postgres, `MemoryEntryStore`, or your own). Messages are read from its
   * branch by the boundary rule, and appended messages and compactions are written to it, as
   * with `session`. Many workers may share it: before measuring or compacting, the manager reads
   * the branch again when another writer wrote; a compaction is written only if nobody compacted
   * since it was planned (else it is dropped with a `compaction-superseded` warning), so two
   * workers crossing the threshold together compact once. A store that keeps its sessions in a
   * database (SQLite, Postgres) also claims each compaction prepared in the background there, so
   * one worker prepares it (`worker`, `claimLeaseMs`). The caller keeps ownership:
   * `dispose()` does not close it. Messages are pi messages (adapter `pi`, the default then).
   */
  readonly store?: EntryStore;
  /** The context to start from, when there is no session or store. Default: empty. */
  readonly messages?: readonly T[];
  /**
   * Turns auto-compaction on or off over the config's `autoCompact.enabled`. A session's own
   * setting (`compaction autocompact on|off`) wins over both.
   */
  readonly autoCompact?: boolean;
  /** Auto-compaction stops after this many compactions. Default: the config's `autoCompact.maxAutoCompactions` (none). */
  readonly maxAutoCompactions?: number;
  /**
   * Background compaction (see docs/background-compaction.md): `auto` (the default) prepares
   * compactions in the background, past the prepare mark, unless the summarizer is the extractive
   * one; `true` always; `false` compacts at the threshold and holds appended messages meanwhile.
   */
  readonly background?: BackgroundMode;
  /** The longest a request that cannot be sent waits for the compaction in flight before the no-model summary, in ms. Default 30,000. */
  readonly waitMs?: number;
  /** The provider's prompt-cache lifetime in ms: after a pause past it a context past the prepare mark is compacted. Default 300,000; null: never. */
  readonly cacheTtlMs?: number | null;
  /** How long a compaction is taken to last until one has been timed, in ms: the prepare mark follows from it. Default 30,000. */
  readonly expectedMs?: number;
  /** The clock in ms (default `Date.now`); a replay passes its recording's. */
  readonly now?: () => number;
  /**
   * This worker's name, recorded as the owner of the background compaction it claims in a session
   * store's database (SQLite, Postgres; `compaction context status` shows it). Default
   * `<host name> pid <process id>`.
   */
  readonly worker?: string;
  /**
   * How long a background compaction claimed in a session store's database stays claimed unless
   * renewed, in ms (the manager renews it every third of this while it prepares or holds it): a
   * worker that crashed holding it blocks the session's next preparation for at most this long.
   * Default 60,000.
   */
  readonly claimLeaseMs?: number;
  /**
   * Use this compactor instead of building one from the config (`cwd`, `configPath`, `preset`
   * and `adapter` are then not read). The caller keeps ownership: `dispose()` leaves it alone.
   */
  readonly compactor?: Compactor<T>;
  /**
   * The conversation's host loop, made by the caller (`new HostLoop(compactor, { contextWindow,
   * reserveTokens, background, ... })` from @compaction/core) and kept across managers of the same
   * session, one at a time: a host that opens the session for each request (the LangChain thread
   * entry, once per run) hands each request's manager the same loop, so what the loop learned (the
   * growth rate, the wait after a compaction that freed too little, when the last request went
   * out) and the compaction it prepared in the background outlive the manager. `dispose()` leaves
   * that compaction to the loop; the next manager given the loop puts it in place at the threshold
   * if its snapshot is still the start of the session's context (by entry id), and drops it
   * (reported) if not. The caller drops one no manager will apply (`loop.drop(why)`). Needs
   * `compactor` (the loop's); the loop's window, reserve and background options are used, so
   * `contextWindow`, `reserveTokens`, `maxOutputTokens`, `background`, `waitMs`, `cacheTtlMs`,
   * `expectedMs` and `now` are not given with it.
   */
  readonly loop?: HostLoop<T>;
}

/**
 * A context manager for one conversation: it counts tokens as messages are appended, compacts
 * automatically above the configured threshold, recovers from "request too long" errors, and
 * warns when repeated compactions degrade the context. See `ContextManager`.
 */
export async function createContextManager<T = unknown>(options: ContextManagerOptions<T> = {}): Promise<ContextManager<T>> {
  checkOptions(options);
  const session = options.session;
  const entryStore = options.store;
  const ownsCompactor = options.compactor === undefined;
  const compactor =
    options.compactor ??
    (await createCompactor<T>({
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.agent === undefined ? {} : { agent: options.agent }),
      ...(options.configPath === undefined ? {} : { configPath: options.configPath }),
      ...(options.preset === undefined ? {} : { preset: options.preset }),
      ...(options.trusted === undefined ? {} : { trusted: options.trusted }),
      ...(options.trustHint === undefined ? {} : { trustHint: options.trustHint }),
      ...(options.adapter !== undefined ? { adapter: options.adapter } : session !== undefined || entryStore !== undefined ? { adapter: "pi" as const } : {}),
    }));
  try {
    if (options.adapter !== undefined && compactor.adapter.name !== options.adapter) {
      throw invalid(
        `the adapter option is '${options.adapter}', but the compactor given reads '${compactor.adapter.name}' messages.`,
        "Leave out adapter when passing a compactor, or build the compactor with that adapter.",
      );
    }
    if (session !== undefined && compactor.adapter.name !== "pi") {
      throw invalid(
        `a session file holds pi messages, but the messages would be read as '${compactor.adapter.name}'.`,
        "Leave out adapter (or pass adapter: 'pi') with session; for other formats pass messages instead of session.",
      );
    }
    if (entryStore !== undefined && compactor.adapter.name !== "pi") {
      throw invalid(
        `a session store holds pi messages, but the messages would be read as '${compactor.adapter.name}'.`,
        "Leave out adapter (or pass adapter: 'pi') with store; for other formats pass messages instead of store.",
      );
    }
    const loop = options.loop ?? newLoop(compactor, options);
    const store: ContextStore<T> =
      entryStore !== undefined
        ? await EntryContextStore.open<T>(entryStore)
        : session === undefined
          ? new MemoryStore<T>(options.messages ?? [])
          : SessionStore.open<T>(session);
    const config = compactor.config as Partial<ResolvedConfig> | undefined;
    return new ContextManager<T>({
      compactor,
      ownsCompactor,
      store,
      loop,
      ownsLoop: options.loop === undefined,
      autoCompact: options.autoCompact,
      maxAutoCompactions: options.maxAutoCompactions ?? config?.autoCompact?.maxAutoCompactions,
      agent: options.agent,
      ...(entryStore === undefined ? {} : { claim: { owner: options.worker ?? `${hostname()} pid ${process.pid}`, leaseMs: options.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS } }),
    });
  } catch (error) {
    if (ownsCompactor) compactor.dispose();
    throw error;
  }
}

/** The manager's own loop, for the window (the option, else the config's): the reply's reserve is fixed here, and one that does not fit the window throws now, naming it. */
function newLoop<T>(compactor: Compactor<T>, options: ContextManagerOptions<T>): HostLoop<T> {
  const contextWindow = options.contextWindow ?? compactor.contextWindow;
  if (contextWindow === undefined || !Number.isFinite(contextWindow) || contextWindow <= 0) {
    throw invalid(
      `it needs a positive contextWindow; found ${describeValue(contextWindow)}.`,
      "Pass contextWindow (the model's context window in tokens), or set contextWindow in .compactionrc.",
    );
  }
  return new HostLoop<T>(compactor, {
    contextWindow,
    reserveTokens: options.reserveTokens,
    maxOutputTokens: options.maxOutputTokens,
    host: options.reserveOptionOf ?? "createContextManager",
    ...(options.background === undefined ? {} : { background: options.background }),
    ...(options.waitMs === undefined ? {} : { waitMs: options.waitMs }),
    ...(options.cacheTtlMs === undefined ? {} : { cacheTtlMs: options.cacheTtlMs }),
    ...(options.expectedMs === undefined ? {} : { expectedMs: options.expectedMs }),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
}

/** The options a loop given with `loop` already holds. */
const LOOP_OPTIONS = ["contextWindow", "reserveTokens", "maxOutputTokens", "background", "waitMs", "cacheTtlMs", "expectedMs", "now"] as const;

function checkOptions<T>(options: ContextManagerOptions<T>): void {
  if (typeof options !== "object" || options === null) {
    throw invalid(`expected an options object, found ${describeValue(options)}.`, "Call createContextManager({ contextWindow, session | messages, ... }).");
  }
  const loop = options.loop;
  if (loop !== undefined) {
    // By shape, not instanceof: a host may hold another copy of @compaction/core than this package's.
    const methods = ["next", "prepare", "drop", "request", "due", "settle"];
    if (typeof loop !== "object" || loop === null || !methods.every((name) => typeof (loop as unknown as Record<string, unknown>)[name] === "function")) {
      throw invalid(`loop must be a HostLoop (from @compaction/core); found ${describeValue(loop)}.`, "Pass new HostLoop(compactor, { contextWindow, ... }), or leave loop out for the manager's own.");
    }
    if (options.compactor !== loop.compactor) {
      throw invalid(
        options.compactor === undefined ? "loop was given without compactor; the manager compacts with the loop's compactor." : "loop was made for another compactor than the one given.",
        "Pass the compactor the loop was made with: createContextManager({ compactor, loop, ... }).",
      );
    }
    const given = LOOP_OPTIONS.filter((key) => options[key] !== undefined);
    if (given.length > 0) {
      throw invalid(`${given.join(", ")} ${given.length === 1 ? "was" : "were"} given with loop, which holds ${given.length === 1 ? "it" : "them"} already.`, "Set them when making the loop (new HostLoop(compactor, { ... })), and leave them out here.");
    }
  }
  if (options.session !== undefined && options.messages !== undefined) {
    throw invalid(
      "both session and messages were given; the context comes from one of them.",
      "Pass session to read (and write) a pi session file, or messages to start from messages held in memory.",
    );
  }
  const store = options.store;
  if (store !== undefined) {
    if (options.session !== undefined || options.messages !== undefined) {
      throw invalid(
        `store was given with ${options.session !== undefined ? "session" : "messages"}; the context comes from one of them.`,
        "Pass store to keep the context in a session store, session for a pi session file, or messages to hold it in memory.",
      );
    }
    if (!isEntryStore(store)) {
      throw invalid(
        `store must be a session store (an EntryStore: header, entries, branch, append, appendCompaction, version, close); found ${describeValue(store)}.`,
        "Open one with openPiFileStore(path), openSqliteStore({ file, session }), openPostgresStore(...) or new MemoryEntryStore().",
      );
    }
  }
  if (options.messages !== undefined && !Array.isArray(options.messages)) {
    throw invalid(`messages must be an array; found ${describeValue(options.messages)}.`, "Pass the conversation so far, oldest first.");
  }
  for (const key of ["reserveTokens", "maxOutputTokens"] as const) {
    const value = options[key];
    const minimum = key === "reserveTokens" ? 0 : 1;
    if (value !== undefined && !(typeof value === "number" && Number.isInteger(value) && value >= minimum)) {
      throw invalid(`${key} must be a whole number of at least ${minimum}; found ${describeValue(value)}.`, `Leave ${key} out to use the config's, or the window's own reserve.`);
    }
  }
  if (options.worker !== undefined && (typeof options.worker !== "string" || options.worker.trim() === "")) {
    throw invalid(`worker must be a non-empty string (this worker's name in the claims of a shared session store); found ${describeValue(options.worker)}.`, "Leave worker out for `<host name> pid <process id>`.");
  }
  const lease = options.claimLeaseMs;
  if (lease !== undefined && !(typeof lease === "number" && Number.isInteger(lease) && lease >= 1 && lease <= MAX_CLAIM_LEASE_MS)) {
    throw invalid(`claimLeaseMs must be a whole number of ms from 1 to ${MAX_CLAIM_LEASE_MS}; found ${describeValue(lease)}.`, `Leave claimLeaseMs out for ${DEFAULT_CLAIM_LEASE_MS} ms.`);
  }
  const max = options.maxAutoCompactions;
  if (max !== undefined && !(Number.isInteger(max) && max >= 1)) {
    throw invalid(
      `maxAutoCompactions must be a whole number of at least 1; found ${describeValue(max)}.`,
      "Leave it out for no limit, or pass autoCompact: false to turn auto-compaction off.",
    );
  }
}

function isEntryStore(value: unknown): value is EntryStore {
  if (typeof value !== "object" || value === null) return false;
  const store = value as Record<string, unknown>;
  return ["header", "entries", "branch", "append", "appendCompaction", "version", "close"].every((name) => typeof store[name] === "function");
}

function invalid(problem: string, hint: string): CompactionError {
  return new CompactionError(ErrorCodes.INPUT_INVALID, `createContextManager: ${problem}`, { hint });
}
