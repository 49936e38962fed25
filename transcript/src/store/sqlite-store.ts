/**
 * `EntryStore` in a SQLite database through Node's built-in `node:sqlite` (no native build): the
 * embedded store for a service on one machine. Many sessions live in one database file (see
 * `sqlite-schema.ts`), and many processes may open it at once:
 *
 * - **WAL** journal, so readers never wait for the writer, and `synchronous = FULL`: in WAL mode
 *   `NORMAL` may lose the last commits on a power cut; `FULL` syncs every commit, so an append
 *   that returned survives a crash of the process or the machine.
 * - **One order.** Every write is one `BEGIN IMMEDIATE` transaction (the database's write lock
 *   taken before anything is read): the leaf and `last_seq` are read, the entries and their
 *   search text inserted, the session's leaf moved, then commit. Waiting writers retry for
 *   `busyTimeoutMs`. A writer that dies before its commit leaves nothing (SQLite rolls back).
 * - **Conditional compaction** reads the leaf's newest compaction and writes in that same
 *   transaction, so two workers that both saw the threshold crossed compact once.
 * - **Search** is FTS5 with BM25; entries that contain the query as typed come first (recall's rule).
 * - **One background compaction per session** is claimed in the database (`preparationClaims`,
 *   sqlite-preparation-claims.ts), in a write transaction like an append's.
 * - **Schema versions** (sqlite-schema.ts): opening a database brings it to this code's layout in
 *   one transaction; one written by a newer layout is refused, unchanged.
 *
 * `node:sqlite` is loaded on the first open, not when this module is imported; Node 22 and 24
 * print its one-time "SQLite is an experimental feature" warning then. There is no way for a
 * library to silence only that warning without hiding other warnings of the host process, so
 * it is left as it is.
 *
 * Calls are synchronous underneath (node:sqlite's `DatabaseSync`): a write waiting for another
 * process's transaction blocks this thread for up to `busyTimeoutMs`.
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { CompactionError, describeError, ErrorCodes } from "@compaction/core";
import { assignEntryFields, type NewEntry } from "../new-entries.js";
import type { PiCompaction } from "../pi-compaction-plan.js";
import { createSessionId } from "../session-file.js";
import { AUTO_COMPACT_CUSTOM_TYPE } from "../session-settings.js";
import { similarIds } from "../transcript-error.js";
import { CURRENT_SESSION_VERSION, type CompactionEntry, type SessionEntry, type SessionHeader } from "../types.js";
import type { BranchRead, CompactionWrite, EntryHit, EntrySearchOptions, EntryStore } from "./entry-store.js";
import { entrySearchText, literalQuery, queryWords } from "./entry-search-text.js";
import type { PreparationClaims } from "./preparation-claims.js";
import { SQLITE_MIGRATIONS, SQLITE_SCHEMA_VERSION } from "./sqlite-schema.js";
import { SqlitePreparationClaims } from "./sqlite-preparation-claims.js";
import { closedStoreError, compactionEntry, type NewSessionFields, newSessionHeader } from "./store-checks.js";
import { storeFailpoints } from "./store-failpoints.js";

/** The prefix of a SQLite session's location: `sqlite:<file>#<session id>`. */
export const SQLITE_LOCATION_PREFIX = "sqlite:";

export interface SqliteStoreOptions {
  /** The database file (created with `create`; many sessions share one). */
  readonly file: string;
  /** The session id. May be left out with `create`: a new id (UUID v7, as pi makes them) is used. */
  readonly session?: string;
  /**
   * Create the session when it does not exist (and the database file and its folder when they
   * do not), with these header fields: `cwd` (default the process's), `parentSession`,
   * `timestamp` (ISO 8601; default now: a session copied in keeps its creation time) and any
   * other field a pi header carries; the version is always the current one, as the entries are
   * written in it. Without it, a missing session is an error.
   */
  readonly create?: NewSessionFields;
  /** How long a write waits for another process's write transaction, in ms. Default 10 000. */
  readonly busyTimeoutMs?: number;
}

/** `sqlite:<absolute file>#<session id>`. */
export function sqliteLocation(file: string, session: string): string {
  return `${SQLITE_LOCATION_PREFIX}${resolve(file)}#${session}`;
}

/** Reads `sqlite:<file>#<session id>` back into its parts, or undefined when `location` is not one. */
export function parseSqliteLocation(location: string): { readonly file: string; readonly session: string } | undefined {
  if (!location.startsWith(SQLITE_LOCATION_PREFIX)) return undefined;
  const rest = location.slice(SQLITE_LOCATION_PREFIX.length);
  const hash = rest.lastIndexOf("#");
  if (hash <= 0 || hash === rest.length - 1) return undefined;
  return { file: rest.slice(0, hash), session: rest.slice(hash + 1) };
}

type SqliteModule = typeof import("node:sqlite");
type Row = Record<string, unknown>;

interface LeafFacts {
  readonly compactions: number;
  readonly newestCompactionId: string | null;
  readonly newestFirstKeptId: string | null;
  readonly autoCompact: boolean | undefined;
}

const NO_FACTS: LeafFacts = { compactions: 0, newestCompactionId: null, newestFirstKeptId: null, autoCompact: undefined };

/** Opens (or with `create`, creates) a session in a SQLite database file as an `EntryStore`. */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<SqliteStore> {
  return SqliteStore.open(options);
}

/** The `EntryStore` of one session in a SQLite database; open it with `openSqliteStore`. */
export class SqliteStore implements EntryStore {
  readonly kind = "sqlite";
  readonly location: string;
  /** The database file's absolute path. */
  readonly file: string;
  /** The session's id. */
  readonly sessionId: string;
  /** The session's claim on the compaction prepared in the background (see preparation-claims.ts). */
  readonly preparationClaims: PreparationClaims;
  readonly #db: DatabaseSync;
  readonly #statements = new Map<string, StatementSync>();
  #closed = false;

  private constructor(db: DatabaseSync, file: string, sessionId: string) {
    this.#db = db;
    this.file = file;
    this.sessionId = sessionId;
    this.location = sqliteLocation(file, sessionId);
    this.preparationClaims = new SqlitePreparationClaims({
      sessionId,
      location: this.location,
      assertOpen: (call) => this.#open(call),
      sql: (sql, call) => this.#sql(sql, call),
      read: (task) => this.#read(task),
      write: (call, task) => this.#write(call, task),
      newestCompactionId: () => {
        const leafId = this.#leafId();
        return leafId === null ? null : this.#factsOf(leafId).newestCompactionId;
      },
    });
  }

  /** See `openSqliteStore`. */
  static async open(options: SqliteStoreOptions): Promise<SqliteStore> {
    const file = resolve(options.file);
    const sessionId = options.session ?? (options.create === undefined ? undefined : createSessionId());
    if (sessionId === undefined || sessionId === "") {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `Cannot open a session in ${file}: no session id was given.`, {
        file,
        hint: "Pass `session` (the id), or `create` to start a new session with a fresh id.",
      });
    }
    // Checked before anything is made: a wrong header field creates no file and no session.
    const header = options.create === undefined ? undefined : newSessionHeader(sessionId, options.create, file);
    if (!existsSync(file)) {
      if (options.create === undefined) {
        throw new CompactionError(ErrorCodes.TRANSCRIPT_NOT_FOUND, `No SQLite database at ${file} (looking for session ${sessionId}).`, {
          file,
          hint: "Check the path, or pass `create` to make the database and the session.",
        });
      }
      mkdirSync(dirname(file), { recursive: true });
    } else if (statSync(file).isDirectory()) {
      throw new CompactionError(ErrorCodes.TRANSCRIPT_INVALID, `Cannot open ${file} as a SQLite database: it is a directory.`, {
        file,
        hint: "Name the database file, e.g. sessions.sqlite inside that folder.",
      });
    }
    const db = openDatabase(file, options.busyTimeoutMs ?? 10_000);
    try {
      const store = new SqliteStore(db, file, sessionId);
      store.#prepareSchema();
      store.#openSession(header);
      return store;
    } catch (error) {
      db.close();
      throw error;
    }
  }

  async header(): Promise<SessionHeader> {
    const row = this.#sql("SELECT header FROM compaction_sessions WHERE id = ?", "read the header").get(this.sessionId) as Row | undefined;
    if (row === undefined) throw this.#missingSession();
    return JSON.parse(row["header"] as string) as SessionHeader;
  }

  async entries(): Promise<SessionEntry[]> {
    const rows = this.#sql("SELECT body FROM compaction_entries WHERE session_id = ? ORDER BY seq", "read the entries").all(this.sessionId) as Row[];
    return rows.map((row) => JSON.parse(row["body"] as string) as SessionEntry);
  }

  async branch(options: { readonly fromBoundary?: boolean } = {}): Promise<BranchRead> {
    this.#open("read the branch");
    return this.#read(() => {
      const leafId = this.#leafId();
      if (leafId === null) return { entries: [], leafId: null, newestCompactionId: null, compactions: 0, autoCompact: undefined };
      const facts = this.#factsOf(leafId);
      const boundary = options.fromBoundary === true && facts.newestCompactionId !== null;
      const rows = this.#sql(WALK_SQL, "read the branch").all({
        session: this.sessionId,
        leaf: leafId,
        compaction: boundary ? facts.newestCompactionId : null,
        kept: boundary ? facts.newestFirstKeptId : null,
      }) as Row[];
      let entries = rows.map((row) => JSON.parse(row["body"] as string) as SessionEntry);
      // pi's rule: when the first kept entry is not on the branch before the compaction, the context starts at the compaction.
      if (boundary && entries[0]?.id !== facts.newestFirstKeptId) {
        entries = entries.slice(entries.findIndex((entry) => entry.id === facts.newestCompactionId));
      }
      return { entries, leafId, newestCompactionId: facts.newestCompactionId, compactions: facts.compactions, autoCompact: facts.autoCompact };
    });
  }

  async append(entries: readonly NewEntry[]): Promise<SessionEntry[]> {
    this.#open("append");
    if (entries.length === 0) return [];
    return this.#write("append", () => this.#insert(entries, this.#leafId()));
  }

  async appendCompaction(compaction: PiCompaction, expected: { readonly newestCompactionId: string | null }): Promise<CompactionWrite> {
    this.#open("append a compaction");
    const entry = compactionEntry(compaction, this.location);
    return this.#write("append a compaction", (): CompactionWrite => {
      const leafId = this.#leafId();
      const facts = leafId === null ? NO_FACTS : this.#factsOf(leafId);
      if (facts.newestCompactionId !== expected.newestCompactionId || !this.#onBranch(compaction.firstKeptEntryId, leafId)) {
        return { written: false, newestCompactionId: facts.newestCompactionId };
      }
      const [written] = this.#insert([entry], leafId);
      return { written: true, entry: written as CompactionEntry };
    });
  }

  async version(): Promise<string> {
    const row = this.#sql("SELECT last_seq FROM compaction_sessions WHERE id = ?", "read the version").get(this.sessionId) as Row | undefined;
    if (row === undefined) throw this.#missingSession();
    return String(row["last_seq"]);
  }

  /**
   * Entries of the session (all branches) matching `query` by FTS5 (BM25 over the entries'
   * text: messages, tool calls and results, summaries), best first; entries that contain the
   * query as typed (ignoring case: a path, a function name, an error code) come before the
   * rest, each group by its BM25 score, as recall ranks them. `score` is the BM25 score
   * (higher is better).
   */
  async search(query: string, options: EntrySearchOptions): Promise<EntryHit[]> {
    this.#open("search");
    const limit = options.limit;
    if (!Number.isInteger(limit) || limit < 1) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `search() limit must be a whole number of at least 1, but it is ${String(limit)}.`, {
        hint: "Pass { limit: 5 } or another positive whole number.",
      });
    }
    const words = queryWords(query);
    if (words.length === 0) return [];
    const quoted = words.map((word) => `"${word}"`);
    return this.#read(() => {
      const exact = this.#sql(EXACT_SEARCH_SQL, "search").all({
        session: this.sessionId,
        phrase: quoted.join(" "),
        literal: literalQuery(query).toLowerCase(),
        limit,
      }) as Row[];
      const seen = new Set(exact.map((row) => row["rowid"] as number));
      const rest =
        exact.length >= limit
          ? []
          : (this.#sql(ANY_WORD_SEARCH_SQL, "search").all({ session: this.sessionId, words: quoted.join(" OR "), limit: limit + exact.length }) as Row[]);
      return [...exact, ...rest.filter((row) => !seen.has(row["rowid"] as number))]
        .slice(0, limit)
        .map((row) => ({ entry: JSON.parse(row["body"] as string) as SessionEntry, score: -(row["rank"] as number) }));
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#statements.clear();
    this.#db.close();
  }

  /**
   * Brings the database to this code's layout (sqlite-schema.ts): the migrations from its version
   * up, and the new version number, in one transaction (a process that dies midway leaves the old
   * layout, whole); refuses a layout newer than this code's.
   */
  #prepareSchema(): void {
    const found = this.#schemaVersion();
    if (found === SQLITE_SCHEMA_VERSION) return;
    this.#write("prepare the database", () => {
      // Another process may have migrated it while this one waited for the write lock.
      const version = this.#schemaVersion() ?? 0;
      if (version === SQLITE_SCHEMA_VERSION) return;
      for (let next = version; next < SQLITE_SCHEMA_VERSION; next++) this.#db.exec(SQLITE_MIGRATIONS[next] as string);
      this.#db.prepare("INSERT OR REPLACE INTO compaction_meta (key, value) VALUES ('schema_version', ?)").run(String(SQLITE_SCHEMA_VERSION));
    });
  }

  #schemaVersion(): number | undefined {
    let row: Row | undefined;
    try {
      const table = this.#db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'compaction_meta'").get();
      if (table === undefined) return undefined;
      row = this.#db.prepare("SELECT value FROM compaction_meta WHERE key = 'schema_version'").get() as Row | undefined;
    } catch (error) {
      throw databaseError(this.file, "read", error);
    }
    if (row === undefined) return undefined;
    const version = Number(row["value"]);
    if (!Number.isInteger(version) || version < 0) {
      throw new CompactionError(ErrorCodes.TRANSCRIPT_CORRUPT, `Cannot open ${this.file}: its compaction_meta table gives schema_version ${JSON.stringify(row["value"])}, which is not a version number.`, {
        file: this.file,
        hint: "The table was changed by something other than this store; restore the database from a backup. It was not changed.",
      });
    }
    if (version > SQLITE_SCHEMA_VERSION) {
      throw new CompactionError(
        ErrorCodes.TRANSCRIPT_INVALID,
        `Cannot open ${this.file}: its sessions are in schema version ${version}, written by a newer @compaction/transcript; this one reads schema version ${SQLITE_SCHEMA_VERSION}.`,
        { file: this.file, hint: "Upgrade @compaction/transcript (and the CLI) to the version that wrote the database; the database was not changed." },
      );
    }
    return version;
  }

  /** Checks the session exists, or creates it with `header` (the `create` option made whole). */
  #openSession(header: SessionHeader | undefined): void {
    const exists = this.#db.prepare("SELECT 1 FROM compaction_sessions WHERE id = ?").get(this.sessionId) !== undefined;
    if (exists) return;
    if (header === undefined) throw this.#missingSession();
    this.#write("create the session", () => {
      if (this.#db.prepare("SELECT 1 FROM compaction_sessions WHERE id = ?").get(this.sessionId) !== undefined) return;
      this.#db.prepare("INSERT INTO compaction_sessions (id, header, created) VALUES (?, ?, ?)").run(this.sessionId, JSON.stringify(header), header.timestamp);
    });
  }

  /** Inserts `entries` after `leafId` (inside a write transaction) and moves the leaf; returns them as written. */
  #insert(entries: readonly NewEntry[], leafId: string | null): SessionEntry[] {
    const exists = this.#sql("SELECT 1 FROM compaction_entries WHERE session_id = ? AND id = ?", "append");
    const taken = new SessionIds((id) => exists.get(this.sessionId, id) !== undefined);
    const written = assignEntryFields(entries, leafId, taken);
    const facts = new Map<string, LeafFacts>();
    const factsOf = (id: string | null): LeafFacts | undefined => (id === null ? NO_FACTS : (facts.get(id) ?? this.#factsOrUndefined(id)));
    const session = this.#db.prepare("SELECT last_seq FROM compaction_sessions WHERE id = ?").get(this.sessionId) as Row | undefined;
    if (session === undefined) throw this.#missingSession();
    let seq = session["last_seq"] as number;
    const insert = this.#sql(INSERT_ENTRY_SQL, "append");
    const index = this.#sql("INSERT INTO compaction_entry_search (rowid, search_text) VALUES (?, ?)", "append");
    for (const [position, entry] of written.entries()) {
      const parent = factsOf(entry.parentId);
      if (parent === undefined) {
        throw new CompactionError(
          ErrorCodes.INPUT_INVALID,
          `New entry ${position} names parent "${entry.parentId}", which is not an entry of session ${this.sessionId}${similarHint(entry.parentId as string, [...facts.keys()])}.`,
          { hint: "Leave `parentId` out to append after the leaf, or pass the id of an entry of this session; nothing was written." },
        );
      }
      const own = entryFacts(entry, parent);
      facts.set(entry.id, own);
      const text = entrySearchText(entry) ?? null;
      seq += 1;
      const result = insert.run({
        session: this.sessionId,
        seq,
        id: entry.id,
        parent: entry.parentId,
        type: entry.type,
        body: JSON.stringify(entry),
        text,
        compactions: own.compactions,
        newest: own.newestCompactionId,
        kept: own.newestFirstKeptId,
        auto: own.autoCompact === undefined ? null : own.autoCompact ? 1 : 0,
      });
      if (text !== null) index.run(result.lastInsertRowid, text);
    }
    const last = written[written.length - 1] as SessionEntry;
    this.#sql("UPDATE compaction_sessions SET leaf_id = ?, last_seq = ? WHERE id = ?", "append").run(last.id, seq, this.sessionId);
    return written;
  }

  #leafId(): string | null {
    const row = this.#sql("SELECT leaf_id FROM compaction_sessions WHERE id = ?", "read the leaf").get(this.sessionId) as Row | undefined;
    if (row === undefined) throw this.#missingSession();
    return (row["leaf_id"] as string | null) ?? null;
  }

  #factsOrUndefined(id: string): LeafFacts | undefined {
    const row = this.#sql(
      "SELECT compactions, newest_compaction_id, newest_first_kept_id, auto_compact FROM compaction_entries WHERE session_id = ? AND id = ?",
      "read the branch",
    ).get(this.sessionId, id) as Row | undefined;
    if (row === undefined) return undefined;
    const auto = row["auto_compact"];
    return {
      compactions: row["compactions"] as number,
      newestCompactionId: (row["newest_compaction_id"] as string | null) ?? null,
      newestFirstKeptId: (row["newest_first_kept_id"] as string | null) ?? null,
      autoCompact: auto === null || auto === undefined ? undefined : auto === 1,
    };
  }

  #factsOf(id: string): LeafFacts {
    const facts = this.#factsOrUndefined(id);
    if (facts === undefined) {
      throw new CompactionError(ErrorCodes.TRANSCRIPT_INVALID, `Session ${this.location} names leaf "${id}", which is not one of its entries.`, {
        hint: "The database was changed by something other than this store; export the session to see its entries.",
      });
    }
    return facts;
  }

  #onBranch(id: string, leafId: string | null): boolean {
    if (leafId === null) return false;
    const row = this.#sql(ON_BRANCH_SQL, "read the branch").get({ session: this.sessionId, leaf: leafId, wanted: id });
    return row !== undefined;
  }

  /** Runs `task` in a read transaction (one snapshot for its several queries). */
  #read<R>(task: () => R): R {
    try {
      this.#db.exec("BEGIN");
    } catch (error) {
      throw databaseError(this.file, "read", error);
    }
    try {
      return task();
    } catch (error) {
      throw error instanceof CompactionError ? error : databaseError(this.file, "read", error);
    } finally {
      this.#db.exec("COMMIT");
    }
  }

  /** Runs `task` in a `BEGIN IMMEDIATE` transaction; commits what it did, or rolls all of it back when it throws. */
  #write<R>(call: string, task: () => R): R {
    try {
      this.#db.exec("BEGIN IMMEDIATE");
    } catch (error) {
      throw databaseError(this.file, call, error);
    }
    let result: R;
    try {
      result = task();
      storeFailpoints.beforeCommit?.(this.location, call);
    } catch (error) {
      this.#db.exec("ROLLBACK");
      throw error instanceof CompactionError ? error : databaseError(this.file, call, error);
    }
    try {
      this.#db.exec("COMMIT");
    } catch (error) {
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
      throw databaseError(this.file, call, error);
    }
    return result;
  }

  #sql(sql: string, call: string): StatementSync {
    this.#open(call);
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      try {
        statement = this.#db.prepare(sql);
      } catch (error) {
        throw databaseError(this.file, call, error);
      }
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  #open(call: string): void {
    if (this.#closed) throw closedStoreError(this.kind, this.location, call);
  }

  #missingSession(): CompactionError {
    const ids = (this.#db.prepare("SELECT id FROM compaction_sessions ORDER BY created DESC LIMIT 1000").all() as Row[]).map((row) => row["id"] as string);
    return new CompactionError(ErrorCodes.TRANSCRIPT_NOT_FOUND, `No session "${this.sessionId}" in ${this.file}${similarHint(this.sessionId, ids)}.`, {
      file: this.file,
      hint: ids.length === 0 ? "The database holds no sessions yet; pass `create` to start one." : "Check the session id (it holds " + `${ids.length}${ids.length === 1000 ? "+" : ""} sessions), or pass \`create\` to start a new one.`,
    });
  }
}

/** The ids a session already uses: the batch's own, and the database's (asked one at a time, never loaded whole). */
class SessionIds extends Set<string> {
  readonly #inDatabase: (id: string) => boolean;

  constructor(inDatabase: (id: string) => boolean) {
    super();
    this.#inDatabase = inDatabase;
  }

  override has(id: string): boolean {
    return super.has(id) || this.#inDatabase(id);
  }
}

function entryFacts(entry: SessionEntry, parent: LeafFacts): LeafFacts {
  if (entry.type === "compaction") {
    return { ...parent, compactions: parent.compactions + 1, newestCompactionId: entry.id, newestFirstKeptId: entry.firstKeptEntryId };
  }
  if (entry.type === "custom" && entry["customType"] === AUTO_COMPACT_CUSTOM_TYPE) {
    const data = entry["data"] as Record<string, unknown> | null | undefined;
    if (typeof data === "object" && data !== null && typeof data["enabled"] === "boolean") return { ...parent, autoCompact: data["enabled"] };
  }
  return parent;
}

function similarHint(id: string, known: readonly string[]): string {
  const similar = similarIds(id, known);
  return similar.length === 0 ? "" : ` (did you mean ${similar.map((s) => `"${s}"`).join(", ")}?)`;
}

function openDatabase(file: string, busyTimeoutMs: number): DatabaseSync {
  let sqlite: SqliteModule;
  try {
    sqlite = createRequire(import.meta.url)("node:sqlite") as SqliteModule;
  } catch (error) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `Cannot open ${file}: the SQLite store needs node:sqlite (Node 22.13 or later; this is Node ${process.versions.node}).`, {
      file,
      hint: "Run on Node 22.19 or later.",
      cause: error,
    });
  }
  let db: DatabaseSync;
  try {
    db = new sqlite.DatabaseSync(file, { timeout: busyTimeoutMs });
  } catch (error) {
    throw databaseError(file, "open", error);
  }
  try {
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = FULL");
    db.exec("PRAGMA foreign_keys = ON");
  } catch (error) {
    db.close();
    throw databaseError(file, "open", error);
  }
  return db;
}

/** An error of the database itself, as an error a user can act on. */
export function databaseError(file: string, call: string, error: unknown): CompactionError {
  const message = describeError(error);
  const code = (error as { errcode?: unknown }).errcode;
  // SQLITE_BUSY (5), SQLITE_LOCKED (6): another connection held the write lock for the whole timeout.
  if (code === 5 || code === 6 || /database is locked|SQLITE_BUSY/i.test(message)) {
    return new CompactionError(ErrorCodes.TRANSCRIPT_LOCKED, `Could not ${call} in ${file}: another process held the database's write lock for the whole wait (${message}).`, {
      file,
      hint: "Retry; if it keeps happening, raise busyTimeoutMs or look for a process that keeps a transaction open. Nothing was written.",
      cause: error,
    });
  }
  // SQLITE_CORRUPT (11), SQLITE_NOTADB (26).
  if (code === 11 || code === 26 || /not a database|malformed/i.test(message)) {
    return new CompactionError(ErrorCodes.TRANSCRIPT_CORRUPT, `Cannot ${call} in ${file}: it is not a SQLite database, or it is damaged (${message}).`, {
      file,
      hint: "Check that the path names the sessions database; restore it from a backup if it was damaged (sqlite3's .recover can save what is left).",
      cause: error,
    });
  }
  // SQLITE_CANTOPEN (14), SQLITE_PERM (3), SQLITE_READONLY (8), SQLITE_IOERR (10), SQLITE_FULL (13).
  return new CompactionError(ErrorCodes.TRANSCRIPT_INVALID, `Could not ${call} in ${file}: ${message}.`, {
    file,
    hint:
      code === 14 || code === 3 || code === 8
        ? "Check that the file and its folder exist and are readable and writable (SQLite also writes <file>-wal and <file>-shm beside it)."
        : "Check the disk (space, permissions) and retry; a write that failed left nothing behind.",
    cause: error,
  });
}

/**
 * The branch from `leaf` to the root, root-most first; with `compaction` and `kept`, it stops at
 * the compaction's first kept entry (met after the compaction on the way up) or the root.
 */
const WALK_SQL = `
WITH RECURSIVE walk (id, parent_id, depth, past) AS (
  SELECT id, parent_id, 0, coalesce(id = :compaction, 0) FROM compaction_entries WHERE session_id = :session AND id = :leaf
  UNION ALL
  SELECT e.id, e.parent_id, w.depth + 1, w.past OR coalesce(e.id = :compaction, 0)
  FROM walk w JOIN compaction_entries e ON e.session_id = :session AND e.id = w.parent_id
  WHERE NOT (w.past AND w.id IS :kept)
)
SELECT e.body FROM walk w JOIN compaction_entries e ON e.session_id = :session AND e.id = w.id ORDER BY w.depth DESC`;

const ON_BRANCH_SQL = `
WITH RECURSIVE walk (id, parent_id) AS (
  SELECT id, parent_id FROM compaction_entries WHERE session_id = :session AND id = :leaf
  UNION ALL
  SELECT e.id, e.parent_id FROM walk w JOIN compaction_entries e ON e.session_id = :session AND e.id = w.parent_id WHERE w.id IS NOT :wanted
)
SELECT 1 FROM walk WHERE id = :wanted`;

const INSERT_ENTRY_SQL = `
INSERT INTO compaction_entries (session_id, seq, id, parent_id, type, body, search_text, compactions, newest_compaction_id, newest_first_kept_id, auto_compact)
VALUES (:session, :seq, :id, :parent, :type, :body, :text, :compactions, :newest, :kept, :auto)`;

/** Entries holding every word of the query in order (an FTS5 phrase) whose text contains the query as typed. */
const EXACT_SEARCH_SQL = `
SELECT e.rowid AS rowid, e.body AS body, bm25(compaction_entry_search) AS rank
FROM compaction_entry_search CROSS JOIN compaction_entries e ON e.rowid = compaction_entry_search.rowid
WHERE compaction_entry_search MATCH :phrase AND e.session_id = :session AND instr(lower(e.search_text), :literal) > 0
ORDER BY rank LIMIT :limit`;

/** Entries holding any word of the query, by BM25. */
const ANY_WORD_SEARCH_SQL = `
SELECT e.rowid AS rowid, e.body AS body, bm25(compaction_entry_search) AS rank
FROM compaction_entry_search CROSS JOIN compaction_entries e ON e.rowid = compaction_entry_search.rowid
WHERE compaction_entry_search MATCH :words AND e.session_id = :session
ORDER BY rank LIMIT :limit`;
