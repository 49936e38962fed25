/**
 * Sessions in a database as `--session` targets: `sqlite:<file>#<session id>` (the SQLite store
 * in @compaction/transcript) and `postgres://user@host:port/db#<session id>` (the Postgres store,
 * @compaction/store-postgres, loaded only when a location names Postgres, with a clear error when
 * it is not installed).
 *
 * The commands that read a session (status, inspect, history, export, compare, compact's plan)
 * read a snapshot of its header and entries written as a pi session file under the cache
 * directory (`$XDG_CACHE_HOME/compaction/stores/<hash of the database>/<session id>.jsonl`),
 * rewritten from the database on every run, so they work on it exactly as on a file. What is
 * written goes to the database itself, never to the snapshot: `compact` appends its compaction
 * with the store's conditional `appendCompaction` (naming the compaction the plan was made from,
 * so a compaction another worker wrote meanwhile is not doubled), `autocompact on|off` appends its
 * setting entry. `search` uses the store's own full-text search (see `openStoreRecallIndex`).
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { type CompactionEntry, type EntryStore, isDatabaseLocation, type NewEntry, openEntryStore, parseStoreLocation, redactLocation, type StoreLocation } from "@compaction/transcript";
import { cacheDir, writeCacheFile } from "./cache-dir.js";
import { CliError } from "./errors.js";
import { ExitCode } from "./exit-codes.js";
import type { CliIo } from "./io.js";

/** The package of the Postgres store. */
export const POSTGRES_STORE_PACKAGE = "@compaction/store-postgres";

/** A database location with a session: where the snapshot came from. */
export interface DatabaseSession {
  /** The location as given (`sqlite:<file>#<id>`, `postgres://...#<id>`). */
  readonly location: string;
  /** The location without a password, for messages and reports. */
  readonly shown: string;
  readonly parsed: Exclude<StoreLocation, { kind: "pi-file" }>;
  /** The newest compaction on the branch when the snapshot was taken (what a compaction is planned from). */
  readonly newestCompactionId: string | null;
}

/** Snapshots written in this process: snapshot path -> the database session it copies. */
const snapshots = new Map<string, DatabaseSession>();

/** True when `--session` names a database session or database. */
export function isDatabaseTarget(session: string | undefined): session is string {
  return session !== undefined && isDatabaseLocation(session);
}

/** The database session a snapshot copies, or undefined for any other file. */
export function databaseOfSnapshot(path: string): DatabaseSession | undefined {
  return snapshots.get(path);
}

/**
 * Opens the store of a database location (with `requireSession`, one naming a session). Postgres
 * comes from @compaction/store-postgres, imported only now.
 */
export async function openDatabaseStore(location: string): Promise<EntryStore> {
  const parsed = parseStoreLocation(location);
  if (parsed.kind === "pi-file") return openEntryStore(location);
  if (parsed.session === undefined) {
    throw new CliError(
      ExitCode.USAGE,
      `${redactLocation(location)} names a database, not a session in it.`,
      `Add '#<session id>' to name a session; 'compaction session list --db ${redactLocation(location)}' lists them.`,
    );
  }
  if (parsed.kind === "sqlite") return openEntryStore(location);
  const postgres = await loadPostgresStore();
  return postgres.openPostgresStore({ connectionString: parsed.connectionString, session: parsed.session });
}

/** The subset of @compaction/store-postgres the CLI uses. */
export interface PostgresStoreModule {
  openPostgresStore(options: { readonly connectionString: string; readonly session: string; readonly create?: unknown }): Promise<EntryStore>;
  listPostgresSessions?(options: { readonly connectionString: string }): Promise<readonly { readonly id: string; readonly entries: number; readonly createdAt: string; readonly cwd: string | null }[]>;
}

/** One session of a database, as `session list` shows it. */
export interface DatabaseSessionInfo {
  readonly id: string;
  /** Entries written. */
  readonly entries?: number;
  /** When the session was created (SQLite) or last written (when the store knows). */
  readonly updatedAt?: string | null;
  /** The project the session belongs to (its header's `cwd`). */
  readonly cwd?: string | null;
}

/** Imports @compaction/store-postgres, or says how to install it. */
export async function loadPostgresStore(): Promise<PostgresStoreModule> {
  const name = POSTGRES_STORE_PACKAGE;
  try {
    return (await import(name)) as PostgresStoreModule;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") {
      throw new CliError(
        ExitCode.SESSION,
        `Sessions in Postgres need the package ${POSTGRES_STORE_PACKAGE}, which is not installed beside @compaction/cli.`,
        `Install it where the CLI is installed: npm install ${POSTGRES_STORE_PACKAGE} (or npm install -g ${POSTGRES_STORE_PACKAGE} for a global CLI).`,
      );
    }
    throw error;
  }
}

/**
 * Reads the database session `location` names and writes its snapshot (see the file's note);
 * the snapshot's path. The store is closed again before this returns.
 */
export async function databaseSnapshot(location: string, io: CliIo): Promise<string> {
  const parsed = parseStoreLocation(location);
  if (parsed.kind === "pi-file") throw new Error(`databaseSnapshot: ${location} is not a database location`);
  const store = await openDatabaseStore(location);
  try {
    const header = await store.header();
    const entries = await store.entries();
    const branch = await store.branch({ fromBoundary: true });
    const database = parsed.kind === "sqlite" ? parsed.file : parsed.connectionString;
    const dir = join(cacheDir(io), "stores", createHash("sha256").update(`${parsed.kind}:${redactLocation(database)}`).digest("hex").slice(0, 16));
    const path = join(dir, `${safeName(header.id)}.jsonl`);
    writeCacheFile(path, [header, ...entries].map((line) => JSON.stringify(line)).join("\n") + "\n");
    const shown = redactLocation(location);
    snapshots.set(path, { location, shown, parsed, newestCompactionId: branch.newestCompactionId });
    io.stderr.write(`compaction: reading ${shown} (${entries.length} entries; snapshot ${path})\n`);
    return path;
  } finally {
    await store.close();
  }
}

/**
 * Writes pi's compaction entry to the database session (not the snapshot), only when the
 * session's newest compaction is still the one the snapshot held. Another writer that compacted
 * since: nothing is written, and the error says so.
 */
export async function writeDatabaseCompaction(session: DatabaseSession, compaction: Parameters<EntryStore["appendCompaction"]>[0]): Promise<CompactionEntry> {
  const store = await openDatabaseStore(session.location);
  try {
    const write = await store.appendCompaction(compaction, { newestCompactionId: session.newestCompactionId });
    if (write.written) return write.entry;
    throw new CliError(
      ExitCode.FAILED,
      `Nothing was written to ${session.shown}: another writer changed its branch since it was read (its newest compaction is now ${write.newestCompactionId === null ? "none" : `"${write.newestCompactionId}"`}, the plan was made from ${session.newestCompactionId === null ? "none" : `"${session.newestCompactionId}"`}).`,
      "Run the command again: it reads the session afresh.",
    );
  } finally {
    await store.close();
  }
}

/** Appends entries (a setting) to the database session (not the snapshot). */
export async function appendToDatabase(session: DatabaseSession, entries: readonly NewEntry[]): Promise<void> {
  const store = await openDatabaseStore(session.location);
  try {
    await store.append(entries);
  } finally {
    await store.close();
  }
}

/** Throws for a snapshot of a database session: `what` would only change a copy. */
export function refuseDatabaseSnapshot(path: string, what: string): void {
  const session = snapshots.get(path);
  if (session === undefined) return;
  throw new CliError(
    ExitCode.SESSION,
    `Cannot ${what}: ${session.shown} is a session in a database, and this command works on session files only.`,
    `Copy it to a file first (compaction session copy '${session.shown}' <file.jsonl>), then run the command on the file.`,
  );
}

function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, "_");
}

/**
 * The sessions of the database `location` names (`sqlite:<file>`, `postgres://...`; a `#<id>`
 * is ignored), newest first. SQLite: read from the SQLite store's `compaction_sessions` table
 * (read-only); Postgres: @compaction/store-postgres's `listPostgresSessions`.
 */
export async function listDatabaseSessions(location: string): Promise<DatabaseSessionInfo[]> {
  const parsed = parseStoreLocation(location);
  if (parsed.kind === "pi-file") {
    throw new CliError(ExitCode.USAGE, `--db takes a database, not a file: ${location}.`, "Pass --db sqlite:<file> or --db postgres://user@host/db.");
  }
  if (parsed.kind === "postgres") {
    const postgres = await loadPostgresStore();
    if (postgres.listPostgresSessions === undefined) {
      throw new CliError(ExitCode.FAILED, `The installed ${POSTGRES_STORE_PACKAGE} cannot list sessions (it has no listPostgresSessions).`, `Update ${POSTGRES_STORE_PACKAGE}.`);
    }
    const sessions = await postgres.listPostgresSessions({ connectionString: parsed.connectionString });
    return sessions.map(({ id, entries, createdAt, cwd }) => ({ id, entries, updatedAt: createdAt, cwd }));
  }
  return listSqliteSessions(parsed.file);
}

interface SqliteRow {
  readonly [column: string]: unknown;
}

function listSqliteSessions(file: string): DatabaseSessionInfo[] {
  const path = resolve(file);
  if (!existsSync(path)) throw new CliError(ExitCode.SESSION, `No SQLite database at ${path}.`, "Check the path after sqlite:.");
  const { DatabaseSync } = createRequire(import.meta.url)("node:sqlite") as typeof import("node:sqlite");
  let db: import("node:sqlite").DatabaseSync;
  try {
    db = new DatabaseSync(path, { readOnly: true });
  } catch (error) {
    throw new CliError(ExitCode.SESSION, `Cannot open ${path} as a SQLite database: ${(error as Error).message}.`, "Check that the file is a SQLite database written by the session store.");
  }
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'compaction_sessions'").all();
    if (tables.length === 0) {
      throw new CliError(ExitCode.SESSION, `${path} holds no sessions of this tool (it has no compaction_sessions table).`, "Copy a session into it first: compaction session copy <file.jsonl> sqlite:" + file);
    }
    const rows = db.prepare("SELECT id, header, created, last_seq FROM compaction_sessions ORDER BY created DESC, id").all() as SqliteRow[];
    return rows.map((row) => {
      let cwd: string | null = null;
      try {
        const header = JSON.parse(String(row["header"])) as { cwd?: unknown };
        cwd = typeof header.cwd === "string" ? header.cwd : null;
      } catch {
        cwd = null;
      }
      return { id: String(row["id"]), entries: Number(row["last_seq"]), updatedAt: typeof row["created"] === "string" ? row["created"] : null, cwd };
    });
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(ExitCode.SESSION, `Cannot list the sessions in ${path}: ${(error as Error).message}.`, "Check that the file is a SQLite database written by the session store.");
  } finally {
    db.close();
  }
}
