/**
 * The Postgres row of bench/session-stores.bench.ts: a real server started for the run (the
 * binaries `node scripts/host-install.mjs postgres` installs; stopped when the run ends), one
 * database per measure (the benchmark's `dir`), sessions opened with one connection string per
 * database, so a process shares one pool among its sessions, as a service would.
 */
import { basename } from "node:path";
import type { EntryStore } from "@compaction/transcript";
import { openPostgresStore, type PostgresStore } from "@compaction/store-postgres";
import { findPostgresBinaries, type PostgresServer, startPostgresServer } from "@compaction/store-postgres/testing";
import pg from "pg";

/** What bench/session-stores.bench.ts needs of a store (its `BenchStore`). */
export interface PostgresBenchStore {
  readonly name: string;
  create(dir: string, key: string): Promise<EntryStore>;
  reopen(store: EntryStore): Promise<EntryStore>;
  opener(store: EntryStore): { readonly module: string; readonly export: string; readonly args: readonly unknown[] };
  size(dir: string, stores: readonly EntryStore[]): Promise<number>;
  /** Stops the server. */
  stop(): Promise<void>;
}

/** The Postgres bench store, or why there is none (the binaries are not installed). */
export async function postgresBenchStore(): Promise<PostgresBenchStore | { readonly missing: string }> {
  const found = findPostgresBinaries();
  if ("missing" in found) return found;
  const server: PostgresServer = await startPostgresServer({ settings: { max_connections: "300", shared_buffers: "256MB" } });
  const databases = new Map<string, Promise<string>>();
  const urls = new WeakMap<EntryStore, string>();
  const database = (dir: string): Promise<string> => {
    let url = databases.get(dir);
    if (url === undefined) {
      url = server.createDatabase(`bench_${basename(dir).replace(/[^A-Za-z0-9]/g, "_").toLowerCase()}`);
      databases.set(dir, url);
    }
    return url;
  };
  const remember = (store: PostgresStore, url: string): PostgresStore => {
    urls.set(store, url);
    return store;
  };
  return {
    name: `Postgres ${found.version.split(".")[0]}`,
    async create(dir, key) {
      const url = await database(dir);
      return remember(await openPostgresStore({ connectionString: url, session: key, create: { cwd: "/bench" } }), url);
    },
    async reopen(store) {
      const url = urls.get(store) as string;
      return remember(await openPostgresStore({ connectionString: url, session: (store as PostgresStore).sessionId }), url);
    },
    opener(store) {
      return { module: "@compaction/store-postgres", export: "openPostgresStore", args: [{ connectionString: urls.get(store), session: (store as PostgresStore).sessionId }] };
    },
    async size(dir) {
      const client = new pg.Client({ connectionString: await database(dir) });
      await client.connect();
      try {
        return Number((await client.query<{ size: string }>("SELECT pg_database_size(current_database()) AS size")).rows[0]?.size ?? 0);
      } finally {
        await client.end();
      }
    },
    stop: () => server.stop(),
  };
}
