/**
 * Errors a user can act on, against the real server: a server that is not there (a wrong port, a
 * server stopped under an open store), one that never answers, a host that does not resolve, a
 * wrong password, a database or session that does not exist, tables from a newer version, and a
 * connection lost in the middle of an append (terminated by `pg_terminate_backend` while the
 * append's rows are inserted but not committed): nothing of it is left, and the store goes on
 * working. The server's failures are `COMPACTION_STORE_UNAVAILABLE`, never
 * `COMPACTION_TRANSCRIPT_LOCKED` (another writer holding the session).
 */
import { createServer, type Server, type Socket } from "node:net";
import { CompactionError, ErrorCodes, type PiMessage } from "@compaction/core";
import { freePort } from "@compaction/core/testing";
import type { NewEntry } from "@compaction/transcript";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { openPostgresStore, SCHEMA_VERSION } from "./index.js";
import { DEFAULT_CONNECT_TIMEOUT_SECONDS, connectTimeoutMillis } from "./shared-pools.js";
import { freshDatabase, skipReason } from "./test-support/database.js";
import { startPostgresServer } from "./testing/index.js";

function user(text: string): NewEntry {
  return { type: "message", message: { role: "user", content: text, timestamp: Date.now() } as PiMessage };
}

async function failure(promise: Promise<unknown>): Promise<CompactionError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(CompactionError);
    return error as CompactionError;
  }
  throw new Error("expected a failure");
}

/** A TCP server that takes connections and never says a word (a server hung, or a wrong service). */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe.skipIf(skipReason !== undefined)(`Postgres store errors${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`, () => {
  let url = "";
  let admin: pg.Client;

  beforeAll(async () => {
    url = await freshDatabase("errors");
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin.end();
  });

  it("says the store is unavailable, naming host:port and the session, with pg_isready in the hint, when nothing listens there", async () => {
    const port = await freePort();
    const error = await failure(openPostgresStore({ connectionString: `postgres://someone:secret-pw@127.0.0.1:${port}/app`, session: "s1" }));
    expect(error.code).toBe(ErrorCodes.STORE_UNAVAILABLE);
    expect(error.message).toMatch(new RegExp(`^Could not connect to the Postgres server at 127\\.0\\.0\\.1:${port}, so the store could not open the session`));
    expect(error.message).toContain(`postgres://127.0.0.1:${port}/app#s1`);
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(error.message).not.toContain("secret-pw");
    expect(error.hint).toContain(`pg_isready -h 127.0.0.1 -p ${port}`);
    expect(error.hint).toMatch(/connection string/);
  });

  it("says the store is unavailable when the server is stopped under an open store, and the next open says it too", async () => {
    const own = await startPostgresServer({ settings: { fsync: "off" } });
    const database = await own.createDatabase("stopped");
    const store = await openPostgresStore({ connectionString: database, session: "s-stopped", create: true });
    await store.append([user("written before the stop")]);
    await own.stop();
    const error = await failure(store.append([user("after the stop")]));
    expect(error.code).toBe(ErrorCodes.STORE_UNAVAILABLE);
    expect(error.message).toContain(`127.0.0.1:${own.port}`);
    expect(error.message).toContain(`postgres://127.0.0.1:${own.port}/stopped#s-stopped`);
    expect(error.hint).toMatch(/pg_isready/);
    await store.close();
    const reopen = await failure(openPostgresStore({ connectionString: database, session: "s-stopped" }));
    expect(reopen.code).toBe(ErrorCodes.STORE_UNAVAILABLE);
    expect(reopen.message).toMatch(/^Could not connect to the Postgres server/);
  });

  it("says the server did not answer within connect_timeout when it takes the connection and never speaks", async () => {
    const silent = await silentServer();
    try {
      const error = await failure(openPostgresStore({ connectionString: `postgres://u:p@127.0.0.1:${silent.port}/app?connect_timeout=1`, session: "s1" }));
      expect(error.code).toBe(ErrorCodes.STORE_UNAVAILABLE);
      expect(error.message).toMatch(new RegExp(`The Postgres server at 127\\.0\\.0\\.1:${silent.port} did not answer within the connect timeout`));
      expect(error.hint).toMatch(/connect_timeout/);
    } finally {
      await silent.close();
    }
  });

  it("reads the connect timeout from connect_timeout or PGCONNECT_TIMEOUT, and refuses one that is not a number of seconds", () => {
    expect(connectTimeoutMillis("postgres://h/db?connect_timeout=3")).toBe(3000);
    expect(connectTimeoutMillis("host=h connect_timeout=0 dbname=db")).toBe(0);
    expect(connectTimeoutMillis("postgres://h/db")).toBe(DEFAULT_CONNECT_TIMEOUT_SECONDS * 1000);
    vi.stubEnv("PGCONNECT_TIMEOUT", "2.5");
    try {
      expect(connectTimeoutMillis("postgres://h/db")).toBe(2500);
      expect(connectTimeoutMillis("postgres://h/db?connect_timeout=4")).toBe(4000);
    } finally {
      vi.unstubAllEnvs();
    }
    let thrown: unknown;
    try {
      connectTimeoutMillis("postgres://u:secret@h/db?connect_timeout=soon");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CompactionError);
    expect((thrown as CompactionError).code).toBe(ErrorCodes.INPUT_INVALID);
    expect((thrown as CompactionError).message).toBe('The connect_timeout in the connection string must be a number of seconds (0 waits for ever), but it is "soon".');
  });

  it("names a host that does not resolve", async () => {
    const error = await failure(openPostgresStore({ connectionString: "postgres://u:p@no-such-host.invalid:5432/app", session: "s1" }));
    expect(error.code).toBe(ErrorCodes.STORE_UNAVAILABLE);
    expect(error.message).toContain("postgres://no-such-host.invalid:5432/app#s1");
    expect(error.message).toMatch(/ENOTFOUND|EAI_AGAIN/);
  });

  it("says the login was refused for a wrong password, without the password", async () => {
    const wrong = new URL(url);
    wrong.password = "not-the-password";
    const error = await failure(openPostgresStore({ connectionString: wrong.toString(), session: "s1" }));
    expect(error.code).toBe(ErrorCodes.STORE_UNAVAILABLE);
    expect(error.message).toMatch(/refused the login/);
    expect(error.message).toMatch(/28P01/);
    expect(error.message).not.toContain("not-the-password");
    expect(error.hint).toMatch(/password/);
  });

  it("says a database does not exist", async () => {
    const missing = new URL(url);
    missing.pathname = "/no_such_database";
    const error = await failure(openPostgresStore({ connectionString: missing.toString(), session: "s1" }));
    expect(error.code).toBe(ErrorCodes.TRANSCRIPT_NOT_FOUND);
    expect(error.message).toMatch(/no_such_database.*does not exist/);
  });

  it("says a session does not exist, and creates it only when asked", async () => {
    const error = await failure(openPostgresStore({ connectionString: url, session: "nobody-made-this" }));
    expect(error.code).toBe(ErrorCodes.TRANSCRIPT_NOT_FOUND);
    expect(error.message).toContain('No session "nobody-made-this"');
    expect(error.hint).toMatch(/create: true/);
    const store = await openPostgresStore({ connectionString: url, session: "nobody-made-this", create: true });
    expect((await store.header()).id).toBe("nobody-made-this");
    await store.close();
  });

  it("refuses tables from a newer version, naming both versions, and writes nothing", async () => {
    const store = await openPostgresStore({ connectionString: url, session: "s-newer", create: true, schema: "newer" });
    await store.close();
    await admin.query("UPDATE newer.schema_version SET version = $1", [SCHEMA_VERSION + 1]);
    const error = await failure(openPostgresStore({ connectionString: url, session: "s-newer", schema: "newer" }));
    expect(error.code).toBe(ErrorCodes.TRANSCRIPT_INVALID);
    expect(error.message).toContain(`version ${SCHEMA_VERSION + 1}`);
    expect(error.message).toContain(`(version ${SCHEMA_VERSION})`);
    expect(error.hint).toMatch(/Upgrade/);
    expect((await admin.query("SELECT version FROM newer.schema_version")).rows).toEqual([{ version: SCHEMA_VERSION + 1 }]);
  });

  it("rejects a schema name that is not a plain identifier", async () => {
    const error = await failure(openPostgresStore({ connectionString: url, session: "s", schema: 'x"; DROP TABLE y; --' }));
    expect(error.code).toBe(ErrorCodes.INPUT_INVALID);
  });

  it("leaves nothing of an append whose connection is lost mid-transaction, and goes on working", async () => {
    const store = await openPostgresStore({ connectionString: url, session: "s-lost", create: true, schema: "lost" });
    const before = await store.append([user("before")]);
    const version = await store.version();
    // A trigger makes the append wait, its rows inserted but not committed, on a lock we hold.
    await admin.query(`
      CREATE FUNCTION lost.wait_for_test() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock_shared(4242); RETURN NULL; END $$;
      CREATE TRIGGER wait_for_test AFTER INSERT ON lost.entries FOR EACH STATEMENT EXECUTE FUNCTION lost.wait_for_test();
    `);
    await admin.query("SELECT pg_advisory_lock(4242)");
    const appending = store.append([user("lost one"), user("lost two")]).then(
      () => undefined,
      (error: unknown) => error,
    );
    let pid: number | undefined;
    for (let i = 0; i < 200 && pid === undefined; i++) {
      const rows = (await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND datname = current_database()")).rows;
      pid = rows[0]?.pid;
      if (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(pid).toBeDefined();
    // The rows are there, uncommitted, in the waiting transaction: other sessions do not see them.
    expect((await admin.query("SELECT count(*)::int AS n FROM lost.entries")).rows[0].n).toBe(1);
    await admin.query("SELECT pg_terminate_backend($1)", [pid]);
    await admin.query("SELECT pg_advisory_unlock(4242)");
    const error = (await appending) as CompactionError;
    expect(error).toBeInstanceOf(CompactionError);
    expect(error.code).toBe(ErrorCodes.STORE_UNAVAILABLE);
    expect(error.message).toMatch(/^Lost the connection to the Postgres server at 127\.0\.0\.1:\d+, so the store could not append to the session \(postgres:\/\/127\.0\.0\.1:\d+\/errors_\w+#s-lost\)/);
    expect(error.message).toMatch(/Nothing was half-written/);
    expect(error.hint).toMatch(/the session is as it was/);
    await admin.query("DROP TRIGGER wait_for_test ON lost.entries");
    expect(await store.version()).toBe(version);
    expect(await store.entries()).toEqual(before);
    const after = await store.append([user("after")]);
    expect(after[0]?.parentId).toBe(before[0]?.id);
    expect((await store.entries()).length).toBe(2);
    await store.close();
  });
});
