/** The sessions of a Postgres database, newest first: what `compaction session list --db postgres://…` shows. */
import { CompactionError, ErrorCodes } from "@compaction/core";
import type pg from "pg";
import { postgresError } from "./postgres-errors.js";
import { postgresLocation } from "./postgres-store.js";
import { quoteSchema } from "./schema.js";
import { acquirePool } from "./shared-pools.js";

/** One session of a database. */
export interface PostgresSessionInfo {
  readonly id: string;
  /** Entries appended so far. */
  readonly entries: number;
  /** When the session was created (a copied session keeps its header's time), ISO 8601. */
  readonly createdAt: string;
  /** The header's working directory, or null. */
  readonly cwd: string | null;
  /** `postgres://host:port/database#id`: what `--session` and `openPostgresStore` take (no password). */
  readonly location: string;
}

export interface ListPostgresSessionsOptions {
  /** `postgres://user:password@host:port/database` (a `#session` is ignored); or `pool`. */
  readonly connectionString?: string;
  readonly pool?: pg.Pool;
  /** The schema the store's tables are in. Default `compaction`, as `openPostgresStore`'s. */
  readonly schema?: string;
}

/**
 * The sessions the store's tables hold in this database, newest first (then by id). A database
 * without the tables holds none: an empty list. Reads only. An unreachable server is
 * COMPACTION_STORE_UNAVAILABLE, a database that does not exist COMPACTION_TRANSCRIPT_NOT_FOUND.
 */
export async function listPostgresSessions(options: ListPostgresSessionsOptions): Promise<PostgresSessionInfo[]> {
  if ((options.connectionString === undefined) === (options.pool === undefined)) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, "listPostgresSessions needs exactly one of `connectionString` and `pool`.", {
      hint: 'Pass { connectionString: "postgres://user:password@host:5432/db" }.',
    });
  }
  const schema = options.schema ?? "compaction";
  const quoted = quoteSchema(schema);
  const hash = options.connectionString?.indexOf("#") ?? -1;
  const shared = options.pool === undefined ? acquirePool(hash >= 0 ? (options.connectionString as string).slice(0, hash) : (options.connectionString as string)) : undefined;
  const pool = options.pool ?? (shared as { pool: pg.Pool }).pool;
  const database = postgresLocation(pool, "").slice(0, -1);
  const doing = "list the sessions";
  try {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw postgresError(error, database, doing, "connect");
    }
    try {
      const table = (await client.query<{ found: string | null }>("SELECT to_regclass($1)::text AS found", [`${quoted}.sessions`])).rows[0]?.found ?? null;
      if (table === null) return [];
      const rows = (
        await client.query<{ id: string; header: string; last_seq: string; created_at: Date }>(
          `SELECT id, header::text AS header, last_seq, created_at FROM ${quoted}.sessions ORDER BY created_at DESC, id`,
        )
      ).rows;
      return rows.map((row) => ({
        id: row.id,
        entries: Number(row.last_seq),
        createdAt: row.created_at.toISOString(),
        cwd: cwdOf(row.header),
        location: postgresLocation(pool, row.id),
      }));
    } catch (error) {
      throw postgresError(error, database, doing);
    } finally {
      client.release();
    }
  } finally {
    await shared?.release();
  }
}

function cwdOf(header: string): string | null {
  try {
    const cwd = (JSON.parse(header) as { cwd?: unknown }).cwd;
    return typeof cwd === "string" ? cwd : null;
  } catch {
    return null;
  }
}
