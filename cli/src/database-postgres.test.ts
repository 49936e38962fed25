/**
 * `--session postgres://…#<id>` and `session list --db postgres://…` on a real Postgres server
 * (`@compaction/store-postgres/testing` starts one on a free local port, on the binaries
 * `node scripts/host-install.mjs postgres` installs; without them the tests skip naming that
 * command, and under CI they fail): the real pi session copied in with `session copy`, then the
 * commands that read, search and compact it, against the same commands on the file.
 */
import { createDatabase, findPostgresBinaries, type PostgresServer, startPostgresServer } from "@compaction/store-postgres/testing";
import { openPostgresStore } from "@compaction/store-postgres";
import { readSession } from "@compaction/transcript";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { isCi } from "../../scripts/host-tests.mjs";
import { createSandbox, REAL_SESSION_ID, type Sandbox } from "./test-support/cli-sandbox.js";

const found = findPostgresBinaries();
const skipReason = "missing" in found ? found.missing : undefined;
if (skipReason !== undefined && isCi()) throw new Error(`CI must run the CLI's Postgres tests, but ${skipReason}`);

describe.skipIf(skipReason !== undefined)(`commands on a session in Postgres${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`, () => {
  let server: PostgresServer;
  let sandbox: Sandbox;
  let database = 0;
  let url = "";

  beforeAll(async () => {
    server = await startPostgresServer();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });
  beforeEach(async () => {
    sandbox = await createSandbox();
    url = await createDatabase(server.url, `cli_${process.pid}_${database++}`);
  });
  afterEach(() => sandbox.remove());

  /** The session's location as the CLI prints it: the connection string without its password. */
  function printed(session: string): string {
    const parsed = new URL(url);
    parsed.password = "";
    return `${parsed.toString()}#${session}`;
  }

  async function copyIn(): Promise<void> {
    const run = await sandbox.runMain(["session", "copy", sandbox.sessionPath, url]);
    expect(run.code, run.stderr).toBe(0);
  }

  it("session copy moves the real session in, every entry with its id and parent; session list shows it, newest first, with the location --session takes", async () => {
    await copyIn();
    const entries = readSession(sandbox.sessionPath).entries;
    const store = await openPostgresStore({ connectionString: url, session: REAL_SESSION_ID });
    expect(await store.entries()).toEqual(entries);
    await store.close();
    const second = await openPostgresStore({ connectionString: url, session: "a-newer-session", create: { cwd: "/work/other" } });
    await second.close();
    const list = await sandbox.runMain(["session", "list", "--db", url, "--json"]);
    expect(list.code, list.stderr).toBe(0);
    const report = JSON.parse(list.stdout) as { database: string; sessions: { id: string; entries: number; cwd: string | null; location: string }[] };
    expect(report.sessions.map((session) => session.id)).toEqual(["a-newer-session", REAL_SESSION_ID]);
    expect(report.sessions[1]).toMatchObject({ entries: entries.length, cwd: readSession(sandbox.sessionPath).header.cwd });
    expect(report.sessions[0]).toMatchObject({ entries: 0, cwd: "/work/other" });
    const text = await sandbox.runMain(["session", "list", "--db", url]);
    expect(text.stdout).toContain("2 sessions in");
    expect(text.stdout).toContain(`--session ${report.sessions[1]?.location}`);
    expect(JSON.stringify(report)).not.toContain(new URL(url).password);
  });

  it("session list on a database without the store's tables says it holds none", async () => {
    const run = await sandbox.runMain(["session", "list", "--db", url]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^No sessions in postgres:\/\//);
  });

  it("context status and history say on the database what they say on the file", async () => {
    await copyIn();
    for (const command of [["context", "status"], ["context", "history"]]) {
      const onFile = await sandbox.runMain([...command, "--session", sandbox.sessionPath, "--json"]);
      const onDb = await sandbox.runMain([...command, "--session", `${url}#${REAL_SESSION_ID}`, "--json"]);
      expect(onDb.code, `${command.join(" ")}: ${onDb.stderr}`).toBe(onFile.code);
      const fileReport = JSON.parse(onFile.stdout) as Record<string, unknown>;
      const dbReport = JSON.parse(onDb.stdout) as Record<string, unknown>;
      // Only the database records a compaction being prepared in the background (none here).
      if (command[1] === "status") {
        expect(dbReport["background"]).toStrictEqual({ recorded: true, preparation: null });
        expect(fileReport["background"]).toStrictEqual({ recorded: false, preparation: null });
      }
      const strip = (report: Record<string, unknown>) =>
        JSON.parse(JSON.stringify(report, (key, value: unknown) => (["path", "session", "snapshot", "generatedAt", "file", "location", "background"].includes(key) ? "<session>" : value))) as unknown;
      expect(strip(dbReport), command.join(" ")).toEqual(strip(fileReport));
    }
  });

  it("context status shows the compaction a worker claimed in Postgres to prepare in the background, and its age", async () => {
    await copyIn();
    const store = await openPostgresStore({ connectionString: url, session: REAL_SESSION_ID });
    try {
      const branch = await store.branch();
      const claimed = await store.preparationClaims.claim({ owner: "pg-worker", baseCompactionId: branch.newestCompactionId, headEntryId: branch.leafId, tokens: 4_321, leaseMs: 60_000 });
      expect(claimed.claimed).toBe(true);
      const text = await sandbox.runMain(["context", "status", "--session", `${url}#${REAL_SESSION_ID}`], { NO_COLOR: "1" });
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(/^Background {7}preparing by pg-worker, started \d+ seconds? ago \(at 4,321 tokens\)$/m);
      const json = await sandbox.runMain(["context", "status", "--session", `${url}#${REAL_SESSION_ID}`, "--json"]);
      expect((JSON.parse(json.stdout) as { background: unknown }).background).toMatchObject({ recorded: true, preparation: { state: "preparing", owner: "pg-worker", tokens: 4_321 } });
    } finally {
      await store.close();
    }
  });

  it("search uses Postgres full-text search, the entries holding the query as typed first", async () => {
    await copyIn();
    const run = await sandbox.runMain(["search", "user-message-selector", "--limit", "20", "--session", `${url}#${REAL_SESSION_ID}`, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { session: { path: string; id: string }; results: { exact: boolean }[] };
    expect(report.session).toEqual({ path: printed(REAL_SESSION_ID), id: REAL_SESSION_ID });
    expect(report.results.length).toBeGreaterThan(0);
    expect(report.results[0]?.exact).toBe(true);
  });

  it("compact --yes writes pi's compaction entry to the database, and the next status reads it", async () => {
    await copyIn();
    const fileBefore = sandbox.bytes();
    const session = `${url}#${REAL_SESSION_ID}`;
    const run = await sandbox.runMain(["compact", "--yes", "--session", session, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(sandbox.bytes().equals(fileBefore)).toBe(true);
    const store = await openPostgresStore({ connectionString: url, session: REAL_SESSION_ID });
    const branch = await store.branch();
    await store.close();
    expect(branch.compactions).toBe(1);
    const status = JSON.parse((await sandbox.runMain(["context", "status", "--session", session, "--json"])).stdout) as { compactions: { count: number } };
    expect(status.compactions.count).toBe(1);
  });
});
