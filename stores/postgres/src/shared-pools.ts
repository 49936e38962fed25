/**
 * One `pg.Pool` per connection string in a process, shared by every store opened with that
 * string: a service that opens a store per session (thousands of them) keeps a handful of
 * connections, not one or more per session. The pool ends when the last store using it closes.
 */
import pg from "pg";

interface Shared {
  readonly pool: pg.Pool;
  users: number;
}

const pools = new Map<string, Shared>();

/** Connections a shared pool opens at most (pg's default). */
const MAX_CONNECTIONS = 10;

/** The pool for `connectionString`, and the function that gives it back (ending it when no store uses it). */
export function acquirePool(connectionString: string): { readonly pool: pg.Pool; release(): Promise<void> } {
  let shared = pools.get(connectionString);
  if (shared === undefined) {
    const pool = new pg.Pool({ connectionString, max: MAX_CONNECTIONS });
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
