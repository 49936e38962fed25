/**
 * One `pg.Pool` per connection string in a process, shared by every store opened with that
 * string: a service that opens a store per session (thousands of them) keeps a handful of
 * connections, not one or more per session. The pool ends when the last store using it closes.
 */
import { CompactionError, ErrorCodes } from "@compaction/core";
import pg from "pg";

interface Shared {
  readonly pool: pg.Pool;
  users: number;
}

const pools = new Map<string, Shared>();

/** Connections a shared pool opens at most (pg's default). */
const MAX_CONNECTIONS = 10;

/**
 * Seconds a connection attempt may take before it fails as a timeout, when the connection string
 * sets no `connect_timeout`. pg's own default is to wait for ever: a server behind a firewall
 * that drops packets would hang the caller instead of failing with an error it can act on.
 */
export const DEFAULT_CONNECT_TIMEOUT_SECONDS = 10;

/**
 * The connect timeout in milliseconds: libpq's `connect_timeout` parameter of the connection
 * string (seconds; 0 waits for ever), else `PGCONNECT_TIMEOUT`, else the default above.
 */
export function connectTimeoutMillis(connectionString: string): number {
  let given: string | null | undefined;
  try {
    given = new URL(connectionString).searchParams.get("connect_timeout");
  } catch {
    given = /(?:^|\s)connect_timeout\s*=\s*(\S+)/.exec(connectionString)?.[1]; // a key=value string
  }
  const from = given === undefined || given === null ? "PGCONNECT_TIMEOUT" : "connect_timeout in the connection string";
  given ??= process.env["PGCONNECT_TIMEOUT"];
  if (given === undefined || given === null || given.trim() === "") return DEFAULT_CONNECT_TIMEOUT_SECONDS * 1000;
  const seconds = Number(given);
  if (!Number.isFinite(seconds) || seconds < 0) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `The ${from} must be a number of seconds (0 waits for ever), but it is "${given}".`, {
      hint: `Write e.g. connect_timeout=10, or leave it out for ${DEFAULT_CONNECT_TIMEOUT_SECONDS} seconds.`,
    });
  }
  return Math.round(seconds * 1000);
}

/** The pool for `connectionString`, and the function that gives it back (ending it when no store uses it). */
export function acquirePool(connectionString: string): { readonly pool: pg.Pool; release(): Promise<void> } {
  let shared = pools.get(connectionString);
  if (shared === undefined) {
    const pool = new pg.Pool({ connectionString, max: MAX_CONNECTIONS, connectionTimeoutMillis: connectTimeoutMillis(connectionString) });
    pool.on("error", () => undefined); // an idle connection dropped (server restart): the next query reconnects
    shared = { pool, users: 0 };
    pools.set(connectionString, shared);
  }
  shared.users++;
  const held = shared;
  let released = false;
  return {
    pool: held.pool,
    async release() {
      if (released) return;
      released = true;
      held.users--;
      if (held.users > 0) return;
      if (pools.get(connectionString) === held) pools.delete(connectionString);
      await held.pool.end();
    },
  };
}
