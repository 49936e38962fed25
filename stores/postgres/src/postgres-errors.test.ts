/**
 * Errors a user can act on, against the real server: a server that is not there, a host that
 * does not resolve, a wrong password, a database or session that does not exist, tables from a
 * newer version, and a connection lost in the middle of an append (terminated by
 * `pg_terminate_backend` while the append's rows are inserted but not committed): nothing of it
 * is left, and the store goes on working.
 */
import { createServer } from "node:net";
import { CompactionError, ErrorCodes, type PiMessage } from "@compaction/core";
import type { NewEntry } from "@compaction/transcript";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore, SCHEMA_VERSION } from "./index.js";
import { freshDatabase, skipReason } from "./test-support/database.js";

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

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
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

  it("names the server and hints at pg_isready when nothing listens there", async () => {
    const port = await closedPort();
    const error = await failure(openPostgresStore({ connectionString: `postgres://someone:secret-pw@127.0.0.1:${port}/app`, session: "s1" }));
    expect(error.code).toBe(ErrorCodes.TRANSCRIPT_LOCKED);
    expect(error.message).toContain(`postgres://127.0.0.1:${port}/app#s1`);
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(error.message).not.toContain("secret-pw");
    expect(error.hint).toMatch(/pg_isready/);
  });

  it("names a host that does not resolve", async () => {
    const error = await failure(openPostgresStore({ connectionString: "postgres://u:p@no-such-host.invalid:5432/app", session: "s1" }));
    expect(error.message).toContain("postgres://no-such-host.invalid:5432/app#s1");
    expect(error.message).toMatch(/ENOTFOUND|EAI_AGAIN/);
  });

  it("says the login was refused for a wrong password, without the password", async () => {
    const wrong = new URL(url);
    wrong.password = "not-the-password";
    const error = await failure(openPostgresStore({ connectionString: wrong.toString(), session: "s1" }));
    expect(error.code).toBe(ErrorCodes.INPUT_INVALID);
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
    expect(error.message).toMatch(/Lost or could not make the connection/);
    expect(error.message).toMatch(/Nothing was half-written/);
    await admin.query("DROP TRIGGER wait_for_test ON lost.entries");
    expect(await store.version()).toBe(version);
    expect(await store.entries()).toEqual(before);
    const after = await store.append([user("after")]);
    expect(after[0]?.parentId).toBe(before[0]?.id);
    expect((await store.entries()).length).toBe(2);
    await store.close();
  });
});
