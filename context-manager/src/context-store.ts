/**
 * Where a context manager keeps its messages: in memory, in a pi session file (see
 * `SessionStore`), or in any session store (`EntryContextStore` over an `EntryStore`). The
 * manager serialises every call; a store never sees two at once.
 */
import type { CompactInput, CompactionResult, Compactor, ContextAnchor } from "@compaction/core";
import type { PreparationClaims } from "@compaction/transcript";

/**
 * What was appended after the snapshot a compaction was made from (a compaction prepared in the
 * background), put in place after its result: the messages, and their size as the provider counts it.
 */
export interface AppendedSince<T> {
  readonly messages: readonly T[];
  readonly tokens: number;
}

export interface ContextStore<T> {
  /** The current context, oldest first. */
  readonly messages: readonly T[];
  /** Compactions so far: on the session's branch, or committed to this store. */
  readonly compactions: number;
  /** The session file (or a session store's location), or null for an in-memory store. */
  readonly path: string | null;
  /** True when `append` completes before it returns (no I/O), so callers may skip awaiting it. */
  readonly synchronous: boolean;
  /**
   * The After the newest compaction recorded (its event's `tokensAfterCompaction`, the provider's
   * measure) and the index of the last message it covers (the summary and the kept messages), or
   * undefined: the context's size starts from it until a newer usage figure (see `ContextAnchor`).
   */
  readonly anchor: ContextAnchor | undefined;
  /**
   * Runs one compaction of `input.messages` (a snapshot of `messages`) the way this store can
   * record it: a pi session file records only a summary followed by an unchanged suffix, so its
   * store compacts with `suffixOnly` and plans pi's entry for `commit`.
   */
  compact(compactor: Compactor<T>, input: CompactInput<T>): Promise<CompactionResult<T>>;
  /**
   * Adds messages at the end, in order. A store other writers share resolves to true when it read
   * the context again because another writer wrote first (`messages` then holds their messages
   * too, before these), so the caller measures it afresh.
   */
  append(messages: readonly T[]): Promise<void | boolean> | void;
  /**
   * Puts a compacted context in place (and, for a session, records it in the file), followed by
   * `since`: the messages appended after the snapshot it was made from, which are already the end
   * of `messages`. Returns the id of the entry written, or null. Throws a CompactionError when the
   * result cannot be recorded.
   */
  commit(result: CompactionResult<T>, since?: AppendedSince<T>): Promise<string | null> | string | null;
  /**
   * The store's key of each message of `messages` (a session's entry ids), by which a compaction
   * prepared in the background tells whether its snapshot is still the start of the context; a
   * store without them is compared by message.
   */
  readonly keys?: readonly unknown[];
  /** The session's own auto-compaction setting (`compaction autocompact on|off`), or undefined. */
  autoCompactSetting(): boolean | undefined;
  /**
   * For a store other writers share: reads the context again when one of them wrote since this
   * store last read or wrote it, and returns true when it did. The manager calls it before it
   * measures or compacts.
   */
  sync?(): Promise<boolean>;
  /**
   * For a store other workers share in a database (SQLite, Postgres): the claims on the one
   * compaction prepared in the background per session, which the manager takes before it
   * prepares one (see preparation-claim.ts).
   */
  readonly preparationClaims?: PreparationClaims;
  /** The newest compaction the context was built from (null: none), what a preparation claimed starts from. */
  readonly newestCompactionId?: string | null;
}

/** A context held in memory only. */
export class MemoryStore<T> implements ContextStore<T> {
  readonly path = null;
  readonly synchronous = true;
  #messages: T[];
  #compactions = 0;
  #anchor: ContextAnchor | undefined;

  constructor(messages: readonly T[]) {
    this.#messages = [...messages];
  }

  get messages(): readonly T[] {
    return this.#messages;
  }

  get compactions(): number {
    return this.#compactions;
  }

  get anchor(): ContextAnchor | undefined {
    return this.#anchor;
  }

  append(messages: readonly T[]): void {
    for (const message of messages) this.#messages.push(message);
  }

  compact(compactor: Compactor<T>, input: CompactInput<T>): Promise<CompactionResult<T>> {
    return compactor.compact(input);
  }

  commit(result: CompactionResult<T>, since?: AppendedSince<T>): null {
    this.#messages = [...result.messages, ...(since?.messages ?? [])];
    this.#compactions += 1;
    const event = result.event;
    // The anchor covers the compacted context only: what came after it is counted as appended.
    this.#anchor =
      event === null
        ? undefined
        : { tokens: event.tokensAfterCompaction, lastIndex: result.messages.length - 1, ...(event.calibration === undefined ? {} : { calibration: event.calibration }) };
    return null;
  }

  autoCompactSetting(): undefined {
    return undefined;
  }
}
