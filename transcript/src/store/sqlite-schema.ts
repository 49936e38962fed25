/**
 * The SQLite store's tables. Many sessions share one database file:
 *
 * - `compaction_meta`: `schema_version` (this layout's number; a database written by a newer
 *   layout is refused with both numbers named).
 * - `compaction_sessions`: one row per session: its id, its pi header (JSON), when it was
 *   created, its leaf (the newest entry written, as in a pi file) and `last_seq`, the number of
 *   entries written (the one order, and the version token).
 * - `compaction_entries`: one row per entry: `seq` (the session's one order), `id`, `parent_id`,
 *   `type`, the entry as pi writes it (`body`, JSON), its searchable text, and the facts of the
 *   branch that ends at it (compactions so far, the newest one, the auto-compaction setting),
 *   which follow from its parent's when it is written, so a branch's facts are one row away.
 * - `compaction_entry_search`: FTS5 over `search_text` (external content), written in the same
 *   transaction as the entry.
 * - `compaction_preparation_claims` (version 2): at most one row per session, the claim on the
 *   compaction being prepared in the background (see preparation-claims.ts): its token, owner,
 *   the compaction it starts from, the entry its snapshot ends at and its size, when it was
 *   claimed, when its lease ends and when it was ready (ms since the epoch).
 *
 * A database is brought to this layout when a store opens it: the migrations from its version
 * up run in one `BEGIN IMMEDIATE` transaction with the new version number, so a process that
 * dies midway leaves the database at its old version, whole. Migrations only add tables: no
 * row is rewritten or removed.
 */

/** The layout this code reads and writes. */
export const SQLITE_SCHEMA_VERSION = 2;

/** Version 1: the sessions, their entries and the entries' search index. */
const SESSIONS_SQL = `
CREATE TABLE IF NOT EXISTS compaction_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS compaction_sessions (
  id TEXT PRIMARY KEY,
  header TEXT NOT NULL,
  created TEXT NOT NULL,
  leaf_id TEXT,
  last_seq INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE TABLE IF NOT EXISTS compaction_entries (
  rowid INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES compaction_sessions (id),
  seq INTEGER NOT NULL,
  id TEXT NOT NULL,
  parent_id TEXT,
  type TEXT NOT NULL,
  body TEXT NOT NULL,
  search_text TEXT,
  compactions INTEGER NOT NULL,
  newest_compaction_id TEXT,
  newest_first_kept_id TEXT,
  auto_compact INTEGER,
  UNIQUE (session_id, seq),
  UNIQUE (session_id, id)
) STRICT;
CREATE VIRTUAL TABLE IF NOT EXISTS compaction_entry_search USING fts5 (
  search_text,
  content = 'compaction_entries',
  content_rowid = 'rowid',
  tokenize = 'unicode61 remove_diacritics 2'
);
`;

/** Version 2: the claims on compactions prepared in the background. */
const PREPARATION_CLAIMS_SQL = `
CREATE TABLE IF NOT EXISTS compaction_preparation_claims (
  session_id TEXT PRIMARY KEY REFERENCES compaction_sessions (id),
  token TEXT NOT NULL,
  owner TEXT NOT NULL,
  base_compaction_id TEXT,
  head_entry_id TEXT,
  tokens INTEGER NOT NULL,
  claimed_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  ready_at INTEGER
) STRICT;
`;

/** Each takes the layout from version i (0: a database with none of these tables) to version i + 1. */
export const SQLITE_MIGRATIONS: readonly string[] = [SESSIONS_SQL, PREPARATION_CLAIMS_SQL];
