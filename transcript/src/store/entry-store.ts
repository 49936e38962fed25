/**
 * The session store contract: where a session's entries live (a pi session file, a SQLite
 * database, a Postgres database, your own). One model for all of them, pi's session entries:
 *
 * - **Append-only.** A session is a header and a tree of entries (`id`, `parentId`), written in
 *   one order. A compaction is an entry (pi's `compaction`: a summary and the first entry kept);
 *   the context is built from the branch by pi's boundary rule (`buildContext`): the newest
 *   compaction's summary, then the branch from its first kept entry to the leaf. Nothing is ever
 *   deleted or rewritten, so history, export and recall see everything.
 * - **What a compaction records** (the anchor and calibration: `CompactionEvent`, in the entry's
 *   `details`) and **the session's own settings** (`custom` entries such as auto-compaction
 *   on/off, `sessionAutoCompact`) are entries too.
 * - **Many writers.** A store may be shared by processes on many machines. `append` writes after
 *   the branch's leaf as the store sees it when it writes (not as the caller last read it), all of
 *   its entries or none, in one order with every other writer. `appendCompaction` is conditional:
 *   it writes only when the branch's newest compaction is still the one the compaction was planned
 *   from, so two workers that both saw the threshold crossed compact once, not twice.
 * - **One preparation per session.** A store that keeps its sessions in a database (SQLite,
 *   Postgres) has `preparationClaims`: a worker claims the compaction it is about to prepare in
 *   the background, so the others do not prepare the same one (see preparation-claims.ts).
 *
 * The context manager, recall and the CLI use a session only through this contract.
 */
import type { PiCompaction } from "../pi-compaction-plan.js";
import type { NewEntry } from "../new-entries.js";
import type { CompactionEntry, SessionEntry, SessionHeader } from "../types.js";
import type { PreparationClaims } from "./preparation-claims.js";

/** What `EntryStore.branch` returns: the current branch, and the facts a host needs from all of it. */
export interface BranchRead {
  /**
   * The branch's entries, root-most first: the whole branch, or with `fromBoundary` at least
   * from the newest compaction's first kept entry (or the compaction itself) to the leaf, which
   * is all `buildContext` needs to build the context.
   */
  readonly entries: readonly SessionEntry[];
  /** The leaf the branch ends at, or null for an empty session. */
  readonly leafId: string | null;
  /** The id of the branch's newest compaction entry, or null. */
  readonly newestCompactionId: string | null;
  /** Compaction entries on the whole branch (not only in `entries`). */
  readonly compactions: number;
  /** The session's auto-compaction setting on the branch (`sessionAutoCompact`), or undefined. */
  readonly autoCompact: boolean | undefined;
}

/** The outcome of a conditional `appendCompaction`. */
export type CompactionWrite =
  | { readonly written: true; readonly entry: CompactionEntry }
  /** Another writer compacted first: nothing was written; the branch's newest compaction now. */
  | { readonly written: false; readonly newestCompactionId: string | null };

/** One hit of `EntryStore.search`: an entry and its score (higher is better). */
export interface EntryHit {
  readonly entry: SessionEntry;
  readonly score: number;
}

export interface EntrySearchOptions {
  /** Hits to return at most. */
  readonly limit: number;
}

export interface EntryStore {
  /** The kind of store: "pi-file", "sqlite", "postgres", or your own. */
  readonly kind: string;
  /**
   * Where the session is, for messages and for `--session`: a file path, `sqlite:<file>#<id>`,
   * `postgres://host:port/db#<id>` (never a password).
   */
  readonly location: string;
  /** The session's header (id, cwd, version, timestamp). */
  header(): Promise<SessionHeader>;
  /** Every entry of the session, all branches, in the order written. */
  entries(): Promise<SessionEntry[]>;
  /** The current branch (see `BranchRead`). */
  branch(options?: { readonly fromBoundary?: boolean }): Promise<BranchRead>;
  /**
   * Appends `entries` after the branch's leaf as it is when they are written, each one's parent
   * the one before it; all or none, in one order with other writers. Missing ids, parents and
   * timestamps are assigned (`NewEntry`). Returns the entries as written.
   */
  append(entries: readonly NewEntry[]): Promise<SessionEntry[]>;
  /**
   * Appends pi's compaction entry after the leaf, only when the branch's newest compaction is
   * still `expected.newestCompactionId` (null: the branch had none) and its first kept entry is
   * on the branch; otherwise writes nothing and says what the newest compaction is now.
   */
  appendCompaction(compaction: PiCompaction, expected: { readonly newestCompactionId: string | null }): Promise<CompactionWrite>;
  /**
   * A token that changes whenever any writer writes to the session (a file's size, a sequence
   * number): a host that holds the context compares it to know when to read the branch again.
   */
  version(): Promise<string>;
  /**
   * Entries matching `query` by the store's own full-text search (SQLite FTS5, Postgres
   * tsvector), best first; stores without one leave it out and recall builds its own index.
   */
  search?(query: string, options: EntrySearchOptions): Promise<EntryHit[]>;
  /**
   * The session's claim on the one compaction prepared in the background (see
   * preparation-claims.ts): stores whose sessions many workers share in a database have it
   * (SQLite, Postgres); the context manager uses it on its own when background compaction is on.
   */
  readonly preparationClaims?: PreparationClaims;
  /** Releases connections and handles. Further calls fail. */
  close(): Promise<void>;
}
