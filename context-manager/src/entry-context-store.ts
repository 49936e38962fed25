/**
 * A context kept in any session store (`EntryStore` from @compaction/transcript: a pi session
 * file, SQLite, Postgres, memory, your own): messages are appended as `message` entries, a
 * compaction as pi's `compaction` entry, and the context is what `buildContext` builds from the
 * branch's boundary read, as for a pi session file.
 *
 * Many workers may share the session. The store's `version()` changes on any write: before the
 * manager measures or compacts it calls `sync()`, which reads the branch again when the version
 * moved since this store last read or wrote it. An append that lands after another worker's
 * (its first entry's parent is not our leaf) reloads the branch too. A compaction is committed
 * with `appendCompaction(..., { newestCompactionId })` naming the compaction the context was
 * built from; when another worker compacted first nothing is written, `commit` throws
 * `CompactionSupersededError`, and the manager drops its result and goes on from the reloaded
 * branch, so two workers that cross the threshold together compact once. Where the session store
 * keeps its claims in a database (`preparationClaims`: SQLite, Postgres), the manager claims a
 * compaction before preparing it in the background, so only one worker prepares it.
 */
import { type CompactInput, CompactionError, type CompactionResult, type Compactor, type ContextAnchor, ErrorCodes, type PiMessage } from "@compaction/core";
import {
  buildContext,
  compactionAnchor,
  compactPiBranch,
  CURRENT_SESSION_VERSION,
  type EntryStore,
  type NewEntry,
  type PiCompaction,
  type PiCompactionPlan,
  type PreparationClaims,
  withAppended,
} from "@compaction/transcript";
import type { AppendedSince, ContextStore } from "./context-store.js";

/** Thrown by `EntryContextStore.commit` when another writer compacted the session first: nothing was written. */
export class CompactionSupersededError extends CompactionError {
  /** The session's newest compaction now (the other writer's). */
  readonly newestCompactionId: string | null;

  constructor(location: string, newestCompactionId: string | null) {
    super(
      ErrorCodes.CUT_REFUSED,
      `Another writer compacted ${location} first (its compaction entry ${newestCompactionId === null ? "is gone" : `"${newestCompactionId}"`}); this compaction was dropped and nothing was written.`,
      { hint: "Nothing to do: the context now starts from the other writer's compaction." },
    );
    this.name = "CompactionSupersededError";
    this.newestCompactionId = newestCompactionId;
  }
}

/** True for the error `commit` throws when another writer compacted first. */
export function isCompactionSuperseded(error: unknown): error is CompactionSupersededError {
  return error instanceof CompactionSupersededError;
}

/** pi's entry for a result `compact` returned: the session it was planned on and the newest compaction it was planned from, for `commit`. */
interface PlannedCompaction {
  readonly result: CompactionResult<unknown>;
  readonly plan: PiCompactionPlan;
  readonly location: string;
  readonly newestCompactionId: string | null;
}

/**
 * The plan of each result an `EntryContextStore.compact` returned, keyed by the result (one object
 * per compaction), not by the store that planned it: a compaction prepared in the background may
 * outlive the manager and the store it was planned with (its host loop handed to the next manager
 * on the session, `ContextManagerOptions.loop`), and is committed by the next one's store, on the
 * same session only (`location`). Its write stays conditional on the newest compaction it was
 * planned from, so one planned before another writer's compaction is never written.
 */
const plans = new WeakMap<CompactionResult<unknown>, PlannedCompaction>();

interface BranchState<T> {
  readonly messages: T[];
  readonly entryIds: string[];
  readonly leafId: string | null;
  readonly newestCompactionId: string | null;
  readonly compactions: number;
  readonly autoCompact: boolean | undefined;
  readonly anchor: ContextAnchor | undefined;
}

export class EntryContextStore<T> implements ContextStore<T> {
  /** The store's location (`sqlite:<file>#<id>`, a file path, ...). */
  readonly path: string;
  readonly synchronous = false;
  /** The session store underneath. */
  readonly store: EntryStore;
  #state: BranchState<T>;
  /** The store's version when this store last read or wrote the branch. */
  #knownVersion: string;

  private constructor(store: EntryStore, state: BranchState<T>, version: string) {
    this.store = store;
    this.path = store.location;
    this.#state = state;
    this.#knownVersion = version;
  }

  /** Reads the session's branch (from its boundary) and its version. */
  static async open<T>(store: EntryStore): Promise<EntryContextStore<T>> {
    const header = await store.header();
    const version = typeof header.version === "number" ? header.version : 1;
    if (version < CURRENT_SESSION_VERSION) {
      throw new CompactionError(
        ErrorCodes.TRANSCRIPT_INVALID,
        `Cannot manage the context of ${store.location}: its session is version ${version}, and messages and compactions can be appended only to version ${CURRENT_SESSION_VERSION} sessions.`,
        { hint: "Upgrade it first (upgradeSession for a pi file), or open it once in pi, which migrates it." },
      );
    }
    const before = await store.version();
    const state = await readState<T>(store);
    return new EntryContextStore<T>(store, state, before);
  }

  get messages(): readonly T[] {
    return this.#state.messages;
  }

  get compactions(): number {
    return this.#state.compactions;
  }

  get anchor(): ContextAnchor | undefined {
    return this.#state.anchor;
  }

  /** Id of the entry each message came from (the compaction's id for its summary). */
  get entryIds(): readonly string[] {
    return this.#state.entryIds;
  }

  get keys(): readonly string[] {
    return this.#state.entryIds;
  }

  /** The id of the branch's newest compaction as this store last read it. */
  get newestCompactionId(): string | null {
    return this.#state.newestCompactionId;
  }

  /** The session store's claims on background compactions, where it has them (SQLite, Postgres). */
  get preparationClaims(): PreparationClaims | undefined {
    return this.store.preparationClaims;
  }

  autoCompactSetting(): boolean | undefined {
    return this.#state.autoCompact;
  }

  /**
   * Reads the branch again when another writer wrote since this store last read or wrote it.
   * Returns true when it did (the messages, facts and anchor may all have changed).
   */
  async sync(): Promise<boolean> {
    const version = await this.store.version();
    if (version === this.#knownVersion) return false;
    await this.#reload(version);
    return true;
  }

  /** Appends `messages` as entries; true when the branch was read again because another writer wrote first. */
  async append(messages: readonly T[]): Promise<boolean> {
    if (messages.length === 0) return false;
    const entries = messages.map((message): NewEntry => ({ type: "message", message: message as PiMessage }));
    const before = await this.store.version();
    const written = await this.store.append(entries);
    const after = await this.store.version();
    // Our entries went after our leaf only when nobody wrote since we last read: else read it all again.
    if (before !== this.#knownVersion || written[0]?.parentId !== this.#state.leafId) {
      await this.#reload(after);
      return true;
    }
    const state = this.#state;
    for (let i = 0; i < messages.length; i++) {
      state.messages.push(messages[i] as T);
      state.entryIds.push(written[i]!.id);
    }
    this.#state = { ...state, leafId: written[written.length - 1]!.id };
    this.#knownVersion = after;
    return false;
  }

  /** Compacts as a pi branch (summary + unchanged suffix), planning the entry `commit` writes. */
  async compact(compactor: Compactor<T>, input: CompactInput<T>): Promise<CompactionResult<T>> {
    const newestCompactionId = this.#state.newestCompactionId;
    const branch = { messages: input.messages, entryIds: this.#state.entryIds.slice(0, input.messages.length) };
    const planned = await compactPiBranch(compactor, branch, input);
    plans.set(planned.result, { ...planned, location: this.path, newestCompactionId });
    return planned.result;
  }

  /**
   * Writes the planned compaction when the session's newest compaction is still the one it was
   * planned from, then reads the branch again. Throws `CompactionSupersededError` (after
   * reloading) when another writer compacted first.
   */
  async commit(result: CompactionResult<T>, since?: AppendedSince<T>): Promise<string> {
    const found = plans.get(result);
    const planned = found?.location === this.path ? found : undefined;
    if (planned !== undefined) plans.delete(result);
    const compaction = withAppended(plannedCompaction(this.path, planned, result), since);
    const write = await this.store.appendCompaction(compaction, { newestCompactionId: planned!.newestCompactionId });
    await this.#reload(await this.store.version());
    if (!write.written) throw new CompactionSupersededError(this.path, write.newestCompactionId);
    return write.entry.id;
  }

  async #reload(version: string): Promise<void> {
    this.#state = await readState<T>(this.store);
    this.#knownVersion = version;
  }
}

async function readState<T>(store: EntryStore): Promise<BranchState<T>> {
  const read = await store.branch({ fromBoundary: true });
  const context = buildContext(read.entries, { file: store.location });
  return {
    messages: context.messages as T[],
    entryIds: context.entryIds,
    leafId: read.leafId,
    newestCompactionId: read.newestCompactionId,
    compactions: read.compactions,
    autoCompact: read.autoCompact,
    anchor: compactionAnchor(context),
  };
}

function plannedCompaction<T>(location: string, planned: PlannedCompaction | undefined, result: CompactionResult<T>): PiCompaction {
  const plan = planned?.result === result ? planned.plan : undefined;
  if (plan?.ok) return plan.compaction;
  throw new CompactionError(
    ErrorCodes.CUT_REFUSED,
    `The compaction cannot be written to ${location}: ${plan?.reason ?? "the result was not compacted by compact() of a store on this session."} Nothing was written.`,
    { hint: plan?.hint ?? "Commit the result compact() returned, on the session it was compacted on." },
  );
}
