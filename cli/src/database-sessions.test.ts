/**
 * `--session sqlite:<file>#<id>`: every command that reads or writes a session, on the real pi
 * session copied into a SQLite database with `session copy`, against the same commands on the
 * file; `session copy` both ways and `session list`.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createCompactionEvent } from "@compaction/core";
import { freePort } from "@compaction/core/testing";
import { type CompactionEntry, openSqliteStore, readSession, sqliteLocation } from "@compaction/transcript";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { databaseSnapshot, databaseOfSnapshot, writeDatabaseCompaction } from "./database-target.js";
import type { CliIo } from "./io.js";
import { createSandbox, REAL_SESSION_ID, type Sandbox } from "./test-support/cli-sandbox.js";

let sandbox: Sandbox;
let db: string;
let location: string;
beforeEach(async () => {
  sandbox = await createSandbox();
  db = join(sandbox.root, "sessions.sqlite");
  location = `sqlite:${db}#${REAL_SESSION_ID}`;
});
afterEach(() => sandbox.remove());

async function copyIn(): Promise<void> {
  const run = await sandbox.runMain(["session", "copy", sandbox.sessionPath, `sqlite:${db}`]);
  expect(run.code, run.stderr).toBe(0);
}

/** The command's text with the session's place written as <session>, for comparing a file's run with a database's. */
function neutral(text: string, ...places: string[]): string {
  let out = text;
  for (const place of places) out = out.split(place).join("<session>");
  return out.replace(/\(\s*<session>\s*\)/g, "(<session>)");
}

describe("compaction session copy and session list", () => {
  it("copies a session file into a SQLite database, every entry with its id and parent, and lists it", async () => {
    const run = await sandbox.runMain(["session", "copy", sandbox.sessionPath, `sqlite:${db}`, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { to: string; entries: number; sessionId: string };
    const parsed = readSession(sandbox.sessionPath);
    expect(report).toMatchObject({ sessionId: REAL_SESSION_ID, entries: parsed.entries.length, to: sqliteLocation(db, REAL_SESSION_ID) });
    const store = await openSqliteStore({ file: db, session: REAL_SESSION_ID });
    expect(await store.entries()).toEqual(parsed.entries);
    expect((await store.header()).cwd).toBe(parsed.header.cwd);
    await store.close();
    const list = await sandbox.runMain(["session", "list", "--db", `sqlite:${db}`]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`1 session in sqlite:${db}`);
    expect(list.stdout).toContain(`--session sqlite:${db}#${REAL_SESSION_ID}`);
    expect(list.stdout).toContain(`${parsed.entries.length} entries`);
  });

  it("copies it back out to a file that reads as the original", async () => {
    await copyIn();
    const out = join(sandbox.root, "back.jsonl");
    const run = await sandbox.runMain(["session", "copy", location, out]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Copied: session d703a1a9-1b7b-4fb1-b512-c9738b1fe617, 1,018 entries \(0 compactions\), ids and parents kept\n/);
    const original = readSession(sandbox.sessionPath);
    const copy = readSession(out);
    expect(copy.entries).toEqual(original.entries);
    expect(copy.header).toMatchObject({ id: REAL_SESSION_ID, version: 3, cwd: original.header.cwd });
  });

  it("keeps the header through pi file -> SQLite -> pi file: id, timestamp, cwd and parent session, in pi's key order", async () => {
    const [headerLine, ...rest] = readFileSync(sandbox.sessionPath, "utf8").split("\n");
    const header = { ...(JSON.parse(headerLine as string) as Record<string, unknown>), parentSession: "/home/u/.pi/agent/sessions/--work--/parent.jsonl" };
    const source = join(sandbox.root, "with-parent.jsonl");
    writeFileSync(source, [JSON.stringify(header), ...rest].join("\n"));
    const into = await sandbox.runMain(["session", "copy", source, `sqlite:${db}`, "--json"]);
    expect(into.code, into.stderr).toBe(0);
    expect((JSON.parse(into.stdout) as { headerChanges: string[] }).headerChanges).toStrictEqual([]);
    const store = await openSqliteStore({ file: db, session: REAL_SESSION_ID });
    expect(await store.header()).toStrictEqual(header);
    await store.close();
    const out = join(sandbox.root, "round-trip.jsonl");
    const back = await sandbox.runMain(["session", "copy", location, out, "--json"]);
    expect(back.code, back.stderr).toBe(0);
    expect((JSON.parse(back.stdout) as { headerChanges: string[] }).headerChanges).toStrictEqual([]);
    expect(header).toMatchObject({ id: REAL_SESSION_ID, version: 3, timestamp: "2025-11-20T23:33:50.805Z" });
    const copied = JSON.parse(readFileSync(out, "utf8").split("\n")[0] as string) as Record<string, unknown>;
    expect(copied).toStrictEqual(header);
    expect(Object.keys(copied).slice(0, 5)).toStrictEqual(["type", "version", "id", "timestamp", "cwd"]);
    expect(readSession(out).entries).toEqual(readSession(source).entries);
  });

  it("refuses to overwrite: a database session with entries, or a file that is not empty; nothing is written", async () => {
    await copyIn();
    const again = await sandbox.runMain(["session", "copy", sandbox.sessionPath, `sqlite:${db}`]);
    expect(again.code).toBe(3);
    expect(again.stderr).toContain("already holds a session with 1018 entries; nothing was written");
    const before = sandbox.bytes();
    const onto = await sandbox.runMain(["session", "copy", location, sandbox.sessionPath]);
    expect(onto.code).toBe(3);
    expect(onto.stderr).toContain("exists and is not empty; nothing was written");
    expect(sandbox.bytes().equals(before)).toBe(true);
  });

  it("names what is missing: a session id the database lacks, a database without #<id>, --db for session list", async () => {
    await copyIn();
    const missing = await sandbox.runMain(["context", "status", "--session", `sqlite:${db}#no-such-session`]);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('No session "no-such-session"');
    const noId = await sandbox.runMain(["context", "status", "--session", `sqlite:${db}`]);
    expect(noId.code).toBe(2);
    expect(noId.stderr).toContain("names a database, not a session in it");
    expect(noId.stderr).toContain("compaction session list --db");
    const noDb = await sandbox.runMain(["session", "list"]);
    expect(noDb.code).toBe(2);
    expect(noDb.stderr).toContain("session list needs --db");
    const noFile = await sandbox.runMain(["context", "status", "--session", `sqlite:${join(sandbox.root, "absent.sqlite")}#x`]);
    expect(noFile.code).toBe(3);
    expect(noFile.stderr).toContain("No SQLite database at");
  });

  it("exits 5 with COMPACTION_STORE_UNAVAILABLE, the server's host and port and a pg_isready hint, when no Postgres server listens there", async () => {
    const port = await freePort();
    const text = await sandbox.runMain(["context", "status", "--session", `postgres://me:secret-pw@127.0.0.1:${port}/db#abc`, "--no-color"]);
    expect(text.code, text.stderr).toBe(5);
    const [message, hint, ...rest] = text.stderr.trimEnd().split("\n");
    expect(message).toMatch(new RegExp(`^compaction: Could not connect to the Postgres server at 127\\.0\\.0\\.1:${port}, .*postgres://127\\.0\\.0\\.1:${port}/db#abc`));
    expect(hint).toContain(`hint: Check that the server is running and listens at 127.0.0.1:${port} (\`pg_isready -h 127.0.0.1 -p ${port}\`)`);
    expect(rest).toEqual([]);
    expect(text.stderr).not.toContain("secret-pw");
    const json = await sandbox.runMain(["context", "status", "--session", `postgres://me:secret-pw@127.0.0.1:${port}/db#abc`, "--json"]);
    expect(json.code).toBe(5);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: "COMPACTION_STORE_UNAVAILABLE", exitCode: 5 } });
  });

  it("says which package a Postgres session needs when it is not installed", async () => {
    const run = await sandbox.runMain(["context", "status", "--session", "postgres://me@127.0.0.1:1/db#abc"]);
    if (existsSync(join(sandbox.root, "..", "node_modules", "@compaction", "store-postgres"))) return;
    expect(run.stderr).toMatch(/@compaction\/store-postgres|connect/);
  });
});

describe("commands on a session in SQLite (--session sqlite:<file>#<id>)", () => {
  it("context status, history, inspect and export say what they say on the file", async () => {
    await copyIn();
    for (const command of [["context", "status"], ["context", "history"], ["context", "inspect"], ["context", "export", "-"]]) {
      const onFile = await sandbox.runMain([...command, "--session", sandbox.sessionPath, "--json"]);
      const onDb = await sandbox.runMain([...command, "--session", location, "--json"]);
      expect(onDb.code, `${command.join(" ")}: ${onDb.stderr}`).toBe(onFile.code);
      const snapshot = /snapshot (\S+)\)/.exec(onDb.stderr)?.[1] as string;
      expect(snapshot, onDb.stderr).toBeDefined();
      const strip = (text: string) => neutral(text.replace(/"(exportedAt|generatedAt)": "[^"]*"/g, '"$1": "<time>"'), location, sandbox.sessionPath, snapshot);
      // Only the database records a compaction being prepared in the background (none here).
      const recorded = (text: string) => (command[1] === "status" ? text.replace('"recorded": true', '"recorded": false') : text);
      if (command[1] === "status") expect((JSON.parse(onDb.stdout) as { background: unknown }).background).toStrictEqual({ recorded: true, preparation: null });
      expect(strip(recorded(onDb.stdout)), command.join(" ")).toBe(strip(onFile.stdout));
    }
  });

  it("context status shows the compaction a worker claimed to prepare in the background, who prepares it and how old it is, in text and --json", async () => {
    await copyIn();
    const store = await openSqliteStore({ file: db, session: REAL_SESSION_ID });
    const claims = store.preparationClaims;
    try {
      const branch = await store.branch();
      const status = async () => {
        const text = await sandbox.runMain(["context", "status", "--session", location], { NO_COLOR: "1" });
        const json = await sandbox.runMain(["context", "status", "--session", location, "--json"]);
        expect(text.code, text.stderr).toBe(0);
        return { line: /^Background {7}(.*)$/m.exec(text.stdout)?.[1], background: (JSON.parse(json.stdout) as { background: { recorded: boolean; preparation: Record<string, unknown> | null } }).background };
      };
      expect(await status()).toStrictEqual({ line: "none being prepared", background: { recorded: true, preparation: null } });
      const claimed = await claims.claim({ owner: "worker-7", baseCompactionId: branch.newestCompactionId, headEntryId: branch.leafId, tokens: 150_321, leaseMs: 60_000 });
      if (!claimed.claimed) throw new Error("expected the claim");
      const preparing = await status();
      expect(preparing.line).toMatch(/^preparing by worker-7, started \d+ seconds? ago \(at 150,321 tokens\)$/);
      expect(preparing.background).toMatchObject({
        recorded: true,
        preparation: { state: "preparing", owner: "worker-7", startedAt: claimed.claim.claimedAt, readyAt: null, tokens: 150_321, baseCompactionId: branch.newestCompactionId, headEntryId: branch.leafId },
      });
      expect(preparing.background.preparation?.["ageMs"]).toBeGreaterThanOrEqual(0);
      expect(preparing.background.preparation?.["leaseExpiresInMs"]).toBeGreaterThan(0);
      await claims.renew(claimed.claim.token, { leaseMs: 60_000, ready: true });
      const ready = await status();
      expect(ready.line).toMatch(/^ready, prepared by worker-7, started .* ago \(at 150,321 tokens\), ready \d+ seconds? ago: applied at the threshold$/);
      expect(ready.background.preparation).toMatchObject({ state: "ready", readyAt: expect.any(String) });
      await claims.release(claimed.claim.token);
      await claims.claim({ owner: "worker-9", baseCompactionId: branch.newestCompactionId, headEntryId: branch.leafId, tokens: 10, leaseMs: 1 });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const abandoned = await status();
      expect(abandoned.line).toMatch(/^abandoned: claimed by worker-9 .* ago \(at 10 tokens\), its lease ran out .* ago; the next worker past the prepare mark takes it over$/);
      expect(abandoned.background.preparation).toMatchObject({ state: "abandoned", owner: "worker-9" });
      expect(abandoned.background.preparation?.["leaseExpiresInMs"]).toBeLessThanOrEqual(0);
    } finally {
      await store.close();
    }
  });

  it("search uses the database's full-text search and finds what the file's index finds first", async () => {
    await copyIn();
    const onFile = JSON.parse((await sandbox.runMain(["search", "user-message-selector", "--limit", "50", "--session", sandbox.sessionPath, "--json"])).stdout) as { results: { entryId: string; exact: boolean }[] };
    const run = await sandbox.runMain(["search", "user-message-selector", "--limit", "50", "--session", location, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const onDb = JSON.parse(run.stdout) as { session: { path: string; id: string }; index: { path: string }; results: { entryId: string; exact: boolean; role: string }[] };
    expect(onDb.session).toEqual({ path: location, id: REAL_SESSION_ID });
    expect(onDb.index.path).toContain("store:sqlite");
    expect(onDb.results.length).toBeGreaterThan(0);
    // Entries that hold the query as typed come first, as over the file.
    expect(onDb.results[0]?.exact).toBe(true);
    const exactOnFile = onFile.results.filter((hit) => hit.exact).map((hit) => hit.entryId);
    const exactOnDb = onDb.results.filter((hit) => hit.exact).map((hit) => hit.entryId);
    expect(exactOnFile.length).toBeLessThan(50); // every exact entry is in both lists
    expect(new Set(exactOnDb)).toEqual(new Set(exactOnFile));
    expect(onDb.results.findIndex((hit) => !hit.exact)).toBe(exactOnDb.length);
  });

  it("compact --yes writes pi's compaction entry to the database, not to the snapshot or the file", async () => {
    await copyIn();
    const fileBefore = sandbox.bytes();
    const run = await sandbox.runMain(["compact", "--yes", "--session", location, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { written: boolean; entryId: string };
    expect(report.written).toBe(true);
    const store = await openSqliteStore({ file: db, session: REAL_SESSION_ID });
    const branch = await store.branch();
    expect(branch.newestCompactionId).toBe(report.entryId);
    expect(branch.compactions).toBe(1);
    await store.close();
    expect(sandbox.bytes().equals(fileBefore)).toBe(true);
    const history = await sandbox.runMain(["context", "history", "--session", location]);
    expect(history.stdout.match(/Strategy/g)).toHaveLength(1);
  });

  it("autocompact off writes the setting to the database, and status reads it back", async () => {
    await copyIn();
    expect((await sandbox.runMain(["autocompact", "off", "--session", location])).code).toBe(0);
    const store = await openSqliteStore({ file: db, session: REAL_SESSION_ID });
    expect((await store.branch()).autoCompact).toBe(false);
    await store.close();
    const shown = JSON.parse((await sandbox.runMain(["autocompact", "--session", location, "--json"])).stdout) as { enabled: boolean; source: string };
    expect(shown).toMatchObject({ enabled: false, source: "session" });
  });

  it("refuses what works on files only (branch, upgrade), saying how to get a file", async () => {
    await copyIn();
    const run = await sandbox.runMain(["session", "branch", "--at", "l00000005", "--session", location]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("is a session in a database, and this command works on session files only");
    expect(run.stderr).toContain("compaction session copy");
  });

  it("writes nothing when another writer compacted the session after it was read", async () => {
    await copyIn();
    const io = quietIo(sandbox.root);
    const snapshot = await databaseSnapshot(location, io);
    const session = databaseOfSnapshot(snapshot)!;
    const other = await openSqliteStore({ file: db, session: REAL_SESSION_ID });
    const compaction = (summary: string) => ({
      summary,
      firstKeptEntryId: "l00001000",
      tokensBefore: 1000,
      details: createCompactionEvent({ summary, messagesCompacted: 10, tokensBeforeCompaction: 1000, tokensAfterCompaction: 100, trigger: "manual", boundaryMessageId: "l00001000", strategy: "test" }),
    });
    const theirs = await other.appendCompaction(compaction("theirs"), { newestCompactionId: null });
    expect(theirs.written).toBe(true);
    await expect(writeDatabaseCompaction(session, compaction("ours"))).rejects.toThrow(/another writer changed its branch/);
    const compactions = (await other.entries()).filter((entry): entry is CompactionEntry => entry.type === "compaction");
    expect(compactions.map((entry) => entry.summary)).toEqual(["theirs"]);
    await other.close();
    expect(readFileSync(snapshot, "utf8")).not.toContain('"theirs"');
  });
});

function quietIo(root: string): CliIo {
  return {
    stdout: { write: () => true },
    stderr: { write: () => true },
    stdin: process.stdin,
    env: { HOME: join(root, "home") },
    cwd: root,
  };
}
