/**
 * The store's tables, in one Postgres schema (default `compaction`):
 *
 * - `schema_version (version)`: one row, the version of these tables.
 * - `sessions (id, header, leaf_id, last_seq, created_at)`: one row per session; `header` is pi's
 *   session header as JSON; `leaf_id` the entry written last; `last_seq` the last entry's `seq`.
 *   Writers lock this row (`SELECT ... FOR UPDATE`), which puts every session's writes in one order.
 * - `entries (session_id, seq, id, parent_id, type, body, search_text, search_words)`: one row per
 *   entry; `seq` numbers a session's entries in the order written (1, 2, ...); `body` is the
 *   whole entry as JSON (`json`, not `jsonb`: key order and text stay as written, so a session
 *   moved out of the database is the same file it was); `search_text` and `search_words` (a
 *   `tsvector`, 'simple' configuration: no stemming, identifiers stay whole) are written in the
 *   same transaction as the entry, for `search`; and the facts of the branch that ends at the
 *   entry (`compactions` on it, its newest compaction's id and first kept entry, its newest
 *   auto-compaction setting), each computed from the parent's when the entry is written, so a
 *   branch's facts are one row's, however long the session.
 * - `preparation_claims (session_id, token, owner, base_compaction_id, head_entry_id, tokens,
 *   claimed_at, expires_at, ready_at)` (version 2): at most one row per session, the claim on
 *   the compaction being prepared in the background (preparation-claims.ts), its times the
 *   server's clock.
 *
 * Migrations run when a store opens, in one transaction under a transaction-level advisory lock,
 * so many processes opening the same database at once create the tables once, and one that dies
 * midway leaves the tables as they were. They only add tables: no row is rewritten or removed. A
 * database whose tables are newer than this package is refused (it would be written wrongly).
 */
import { CompactionError, ErrorCodes } from "@compaction/core";
import type pg from "pg";

/** The version of the tables this package reads and writes. */
export const SCHEMA_VERSION = 2;

/** The advisory lock key migrations hold (an arbitrary constant: "compaction" in ASCII, cut to 63 bits). */
const MIGRATION_LOCK = "6548372719434862190";

/** Each migration takes the tables from version i to version i + 1. */
const MIGRATIONS: readonly ((schema: string) => string)[] = [
  (schema) => `
    CREATE TABLE ${schema}.sessions (
      id text PRIMARY KEY,
      header json NOT NULL,
      leaf_id text,
      last_seq bigint NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE ${schema}.entries (
      session_id text NOT NULL REFERENCES ${schema}.sessions (id),
      seq bigint NOT NULL,
      id text NOT NULL,
      parent_id text,
      type text NOT NULL,
      body json NOT NULL,
      search_text text,
      search_words tsvector,
      compactions integer NOT NULL,
      newest_compaction_id text,
      newest_first_kept text,
      auto_compact boolean,
      PRIMARY KEY (session_id, seq),
      UNIQUE (session_id, id)
    );
    CREATE INDEX entries_search_words ON ${schema}.entries USING gin (search_words);
  `,
  (schema) => `
    CREATE TABLE ${schema}.preparation_claims (
      session_id text PRIMARY KEY REFERENCES ${schema}.sessions (id),
      token text NOT NULL,
      owner text NOT NULL,
      base_compaction_id text,
      head_entry_id text,
      tokens bigint NOT NULL,
      claimed_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      ready_at timestamptz
    );
  `,
];

/** The schema name quoted for SQL, after checking it is a plain identifier. */
export function quoteSchema(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `The Postgres schema name "${name}" is not a plain lower-case identifier.`, {
      hint: "Use letters, digits and underscores, starting with a letter, e.g. `compaction`.",
    });
  }
  return `"${name}"`;
}

/**
 * Creates or upgrades the tables in `schema` to SCHEMA_VERSION; refuses tables from a newer
 * version. Safe to run from many processes at once.
 */
export async function migrate(client: pg.ClientBase, schema: string, location: string): Promise<void> {
  const quoted = quoteSchema(schema);
  const found = await currentVersion(client, quoted);
  if (found === SCHEMA_VERSION) return;
  if (found !== undefined && found > SCHEMA_VERSION) throw newerSchemaError(found, location);
  await client.query("BEGIN");
  try {
    await client.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoted}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${quoted}.schema_version (version integer NOT NULL)`);
    const rows = (await client.query<{ version: number }>(`SELECT version FROM ${quoted}.schema_version`)).rows;
    let version = rows[0]?.version ?? 0;
    if (version > SCHEMA_VERSION) throw newerSchemaError(version, location);
    if (rows.length === 0) await client.query(`INSERT INTO ${quoted}.schema_version (version) VALUES (0)`);
    for (; version < SCHEMA_VERSION; version++) await client.query((MIGRATIONS[version] as (schema: string) => string)(quoted));
    await client.query(`UPDATE ${quoted}.schema_version SET version = $1`, [SCHEMA_VERSION]);
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

async function currentVersion(client: pg.ClientBase, quoted: string): Promise<number | undefined> {
  const table = await client.query<{ exists: string | null }>("SELECT to_regclass($1) AS exists", [`${quoted}.schema_version`]);
  if (table.rows[0]?.exists === null) return undefined;
  const rows = (await client.query<{ version: number }>(`SELECT version FROM ${quoted}.schema_version`)).rows;
  return rows[0]?.version;
}

function newerSchemaError(found: number, location: string): CompactionError {
  return new CompactionError(
    ErrorCodes.TRANSCRIPT_INVALID,
    `The session tables at ${location} are version ${found}, newer than this @compaction/store-postgres reads (version ${SCHEMA_VERSION}); nothing was read or written.`,
    { file: location, hint: "Upgrade @compaction/store-postgres (and the CLI) to the version that wrote them." },
  );
}
