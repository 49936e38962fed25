/**
 * OpenClaw's sessions (OpenClaw 2026.5.28 and later): one SQLite database per agent,
 * `<state dir>/agents/<agentId>/agent/openclaw-agent.sqlite` (state dir `$OPENCLAW_STATE_DIR`,
 * else `~/.openclaw`). `session_nodes` maps a session key (`agent:<id>:<rest>`) to its current
 * session id; `transcript_events` holds each session's entries in order (`seq`), one pi session
 * entry per row (a `session` header, then `message`, `compaction`, ... entries with ids and
 * parents), as JSON text in `event_json` or, since agent schema 23, zstd-compressed in
 * `event_zstd`. Read-only: the database is opened with `readOnly`, and nothing here writes it.
 * Needs `node:sqlite` (Node 22+).
 */
import { existsSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";
import * as zlib from "node:zlib";
import { CompactionError, ErrorCodes } from "@compaction/core";
import { type ParsedSession, parseSession, type ParseSessionOptions } from "./parse.js";

export const OPENCLAW_STATE_DIR_ENV = "OPENCLAW_STATE_DIR";
export const OPENCLAW_DATABASE_NAME = "openclaw-agent.sqlite";

/** The first bytes of every SQLite database file. */
const SQLITE_MAGIC = "SQLite format 3\u0000";

export interface OpenClawLocation {
  /** OpenClaw's state directory. Default `$OPENCLAW_STATE_DIR`, else `~/.openclaw`. */
  readonly stateDir?: string;
  readonly env?: NodeJS.ProcessEnv;
}

export function openClawStateDir(location: OpenClawLocation = {}): string {
  return location.stateDir ?? (location.env ?? process.env)[OPENCLAW_STATE_DIR_ENV] ?? join(homedir(), ".openclaw");
}

/** The database of OpenClaw agent `agentId`. */
export function openClawAgentDatabase(agentId: string, location: OpenClawLocation = {}): string {
  return join(openClawStateDir(location), "agents", agentId, "agent", OPENCLAW_DATABASE_NAME);
}

/** The agent ids that have a database under the state directory. */
export function listOpenClawAgents(location: OpenClawLocation = {}): string[] {
  const agents = join(openClawStateDir(location), "agents");
  if (!existsSync(agents)) return [];
  return readdirSync(agents).filter((id) => existsSync(join(agents, id, "agent", OPENCLAW_DATABASE_NAME))).sort();
}

/** The agent id in a session key (`agent:<id>:<rest>`), or undefined when it is not one. */
export function agentIdOfSessionKey(key: string): string | undefined {
  return /^agent:([^:]+):./.exec(key)?.[1];
}

/** True when a file's first bytes are SQLite's ("SQLite format 3\0"). */
export function isSqliteFile(head: Buffer): boolean {
  return head.length >= 16 && head.subarray(0, 16).toString("latin1") === SQLITE_MAGIC;
}

export interface OpenClawSessionInfo {
  readonly sessionKey: string;
  readonly sessionId: string;
  /** Milliseconds since the epoch. */
  readonly updatedAt: number;
  /** Transcript rows of the session. */
  readonly events: number;
}

/** Which session of a database: by key, by id, or (neither) the most recently updated one. */
export interface OpenClawSessionSelector {
  readonly sessionKey?: string;
  readonly sessionId?: string;
}

export interface OpenClawSession {
  readonly database: string;
  readonly sessionKey: string | null;
  readonly sessionId: string;
  /** The session's entries, one JSON text per transcript row, in `seq` order (the header first). */
  readonly lines: readonly string[];
}

// node:sqlite is required on first use, not imported: a process that never reads OpenClaw's
// sessions neither loads it nor sees its experimental-feature warning.
type SqliteModule = typeof import("node:sqlite");
type Database = import("node:sqlite").DatabaseSync;
type SqlValue = import("node:sqlite").SQLInputValue;

function openDatabase(path: string): Database {
  if (!existsSync(path)) {
    throw new CompactionError(ErrorCodes.TRANSCRIPT_NOT_FOUND, `No OpenClaw database at ${path}.`, {
      hint: `OpenClaw keeps each agent's sessions in <state dir>/agents/<agentId>/agent/${OPENCLAW_DATABASE_NAME}; set ${OPENCLAW_STATE_DIR_ENV} when OpenClaw's state is elsewhere.`,
    });
  }
  let sqlite: SqliteModule;
  try {
    sqlite = createRequire(import.meta.url)("node:sqlite") as SqliteModule;
  } catch {
    throw new CompactionError(ErrorCodes.TRANSCRIPT_INVALID, `Cannot read ${path}: OpenClaw's sessions are SQLite and node:sqlite needs Node 22 or later (this is Node ${process.versions.node}).`, {
      hint: "Run compaction with Node 22 or 24.",
    });
  }
  try {
    return new sqlite.DatabaseSync(path, { readOnly: true });
  } catch (error) {
    throw new CompactionError(ErrorCodes.TRANSCRIPT_INVALID, `Cannot open ${path} as a SQLite database: ${error instanceof Error ? error.message : String(error)}.`);
  }
}

function query<T>(db: Database, path: string, sql: string, ...params: SqlValue[]): T[] {
  try {
    return db.prepare(sql).all(...params) as T[];
  } catch (error) {
    throw new CompactionError(
      ErrorCodes.TRANSCRIPT_INVALID,
      `${path} is not an OpenClaw agent database this version reads (${error instanceof Error ? error.message : String(error)}).`,
      { hint: "It needs OpenClaw's session_nodes and transcript_events tables (OpenClaw 2026.5.28 or later); run `openclaw doctor --fix` to bring an older store up to date." },
    );
  }
}

/** The database's sessions, most recently updated first. */
export function listOpenClawSessions(database: string): OpenClawSessionInfo[] {
  const db = openDatabase(database);
  try {
    const rows = query<{ session_key: string; session_id: string; updated_at: number; events: number }>(
      db,
      database,
      `SELECT n.session_key AS session_key, n.current_session_id AS session_id, n.updated_at AS updated_at,
              (SELECT count(*) FROM transcript_events e WHERE e.session_id = n.current_session_id) AS events
         FROM session_nodes n ORDER BY n.updated_at DESC, n.session_key`,
    );
    return rows.map((row) => ({ sessionKey: row.session_key, sessionId: row.session_id, updatedAt: Number(row.updated_at), events: Number(row.events) }));
  } finally {
    db.close();
  }
}

/** One session's transcript rows. Throws COMPACTION_TRANSCRIPT_NOT_FOUND for an unknown key or id, naming those there are. */
export function readOpenClawSession(database: string, selector: OpenClawSessionSelector = {}): OpenClawSession {
  const db = openDatabase(database);
  try {
    const sessions = query<{ session_key: string; session_id: string }>(
      db,
      database,
      "SELECT session_key, current_session_id AS session_id FROM session_nodes ORDER BY updated_at DESC, session_key",
    );
    let sessionKey: string | null;
    let sessionId: string;
    if (selector.sessionId !== undefined) {
      sessionId = selector.sessionId;
      sessionKey = sessions.find((row) => row.session_id === sessionId)?.session_key ?? null;
      const known = query<{ n: number }>(db, database, "SELECT count(*) AS n FROM transcript_events WHERE session_id = ?", sessionId)[0];
      if (sessionKey === null && Number(known?.n ?? 0) === 0) throw unknownSession(database, `session id ${sessionId}`, sessions);
    } else {
      const found = selector.sessionKey === undefined ? sessions[0] : sessions.find((row) => row.session_key === selector.sessionKey);
      if (found === undefined) throw unknownSession(database, selector.sessionKey === undefined ? "any session" : `session key ${selector.sessionKey}`, sessions);
      sessionKey = found.session_key;
      sessionId = found.session_id;
    }
    const rows = query<{ seq: number; event_json: string | null; event_zstd: Uint8Array | null }>(
      db,
      database,
      `SELECT seq, event_json, ${hasColumn(db, database, "transcript_events", "event_zstd") ? "event_zstd" : "NULL AS event_zstd"} FROM transcript_events WHERE session_id = ? ORDER BY seq`,
      sessionId,
    );
    const lines = rows.map((row) => eventText(row, database, sessionId));
    return { database, sessionKey, sessionId, lines };
  } finally {
    db.close();
  }
}

/** The session's rows parsed as a pi session (OpenClaw's entries are pi session entries). */
export function parseOpenClawSession(session: OpenClawSession, options: Omit<ParseSessionOptions, "file"> = {}): ParsedSession {
  const where = `${session.database} (session ${session.sessionKey ?? session.sessionId})`;
  if (session.lines.length === 0) {
    throw new CompactionError(ErrorCodes.TRANSCRIPT_INVALID, `${where} has no transcript rows.`);
  }
  return parseSession(`${session.lines.join("\n")}\n`, { ...options, file: where });
}

function hasColumn(db: Database, path: string, table: string, column: string): boolean {
  return query<{ name: string }>(db, path, `SELECT name FROM pragma_table_info('${table}')`).some((row) => row.name === column);
}

function eventText(row: { seq: number; event_json: string | null; event_zstd: Uint8Array | null }, database: string, sessionId: string): string {
  if (typeof row.event_json === "string") return row.event_json.replace(/\n/g, " ");
  if (row.event_zstd !== null && row.event_zstd !== undefined) {
    const decompress = (zlib as unknown as { zstdDecompressSync?: (data: Uint8Array) => Buffer }).zstdDecompressSync;
    if (typeof decompress !== "function") {
      throw new CompactionError(ErrorCodes.TRANSCRIPT_INVALID, `Row ${row.seq} of session ${sessionId} in ${database} is zstd-compressed, and this Node (${process.versions.node}) has no zstd.`, {
        hint: "Run compaction with Node 22.15+ or 24.",
      });
    }
    return decompress(row.event_zstd).toString("utf8").replace(/\n/g, " ");
  }
  throw new CompactionError(ErrorCodes.TRANSCRIPT_CORRUPT, `Row ${row.seq} of session ${sessionId} in ${database} has neither event_json nor event_zstd.`);
}

function unknownSession(database: string, what: string, sessions: readonly { session_key: string }[]): CompactionError {
  const known = sessions.slice(0, 10).map((row) => row.session_key);
  return new CompactionError(ErrorCodes.TRANSCRIPT_NOT_FOUND, `No ${what} in ${database}.`, {
    hint: known.length === 0 ? "The database holds no sessions yet." : `Sessions there: ${known.join(", ")}${sessions.length > known.length ? ", ..." : ""}.`,
  });
}
