import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { OPENCLAW_SESSION_TABLES_SQL, openClawAgentDatabase } from "@compaction/transcript";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "./test-support/cli-sandbox.js";

/** The part of node:sqlite (Node 22+) the test uses; declared here while the repo's @types/node is 20. */
interface SqliteDatabase {
  exec(sql: string): void;
  prepare(sql: string): { run(...values: unknown[]): unknown; all(...values: unknown[]): unknown[] };
  close(): void;
}
type SqliteModule = { DatabaseSync: new (path: string, options?: { readOnly?: boolean; enableForeignKeyConstraints?: boolean }) => SqliteDatabase };

const sqlite = (() => {
  try {
    return createRequire(import.meta.url)("node:sqlite") as SqliteModule;
  } catch {
    return undefined;
  }
})();

let sandbox: Sandbox;
let stateDir: string;
let database: string;
const KEY = "agent:coder:main";

/** OpenClaw's state dir in the sandbox: agent `coder`'s database holding the sandbox's (real, version 3) session. */
beforeEach(async () => {
  sandbox = await createSandbox();
  if (sqlite === undefined) return;
  stateDir = join(sandbox.root, "openclaw-state");
  database = openClawAgentDatabase("coder", { stateDir });
  mkdirSync(join(database, ".."), { recursive: true });
  // Only the tables the reader uses: the rows' other references (conversations) are not there.
  const db = new sqlite.DatabaseSync(database, { enableForeignKeyConstraints: false });
  db.exec(OPENCLAW_SESSION_TABLES_SQL);
  db.prepare("INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at) VALUES (?, ?, ?, ?)").run(KEY, "oc-session", "{}", 1);
  db.prepare("INSERT INTO session_windows (session_id, session_key, created_at, updated_at) VALUES (?, ?, ?, ?)").run("oc-session", KEY, 1, 1);
  const insert = db.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)");
  readFileSync(sandbox.sessionPath, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .forEach((line, seq) => insert.run("oc-session", seq, line, seq));
  db.close();
});
afterEach(() => sandbox.remove());

describe.skipIf(sqlite === undefined)("the CLI on OpenClaw's SQLite sessions", () => {
  const env = () => ({ NO_COLOR: "1", OPENCLAW_STATE_DIR: stateDir });

  it("context status reads a session by key and by agent, with the same numbers as the pi file", () => {
    const fromFile = JSON.parse(sandbox.run(["context", "status", "--json", "--session", sandbox.sessionPath]).stdout);
    for (const target of [KEY, "openclaw:coder", database]) {
      const run = sandbox.run(["context", "status", "--json", "--session", target], env());
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain(`OpenClaw session ${KEY}`);
      const status = JSON.parse(run.stdout);
      expect(status.messages).toBe(fromFile.messages);
      expect(status.tokens).toBe(fromFile.tokens);
    }
  });

  it("inspect, history, export and search work on it, and OpenClaw's database is never written", () => {
    const before = readFileSync(database);
    expect(sandbox.run(["context", "inspect", "--session", KEY], env()).code).toBe(0);
    const history = sandbox.run(["context", "history", "--json", "--session", KEY], env());
    expect(history.code, history.stderr).toBe(0);
    expect(JSON.parse(history.stdout)).toEqual([]);
    const exported = sandbox.run(["context", "export", join(sandbox.root, "state.json"), "--session", KEY], env());
    expect(exported.code, exported.stderr).toBe(0);
    const search = sandbox.run(["search", "--json", "--session", KEY, "theme"], env());
    expect(search.code, search.stderr).toBe(0);
    expect(JSON.parse(search.stdout).results.length).toBeGreaterThan(0);
    expect(readFileSync(database).equals(before)).toBe(true);
  });

  it("refuses to write a compaction or a setting to it, saying why", () => {
    const compact = sandbox.run(["compact", "--yes", "--session", KEY], env());
    expect(compact.code).not.toBe(0);
    expect(compact.stderr).toMatch(/only reads .*OpenClaw/s);
    const setting = sandbox.run(["autocompact", "off", "--session", KEY], env());
    expect(setting.code).not.toBe(0);
    expect(setting.stderr).toMatch(/Cannot set auto-compaction/);
  });

  it("names the agents there when an agent id is unknown", () => {
    const run = sandbox.run(["context", "status", "--session", "openclaw:nobody"], env());
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/agents there: coder/);
  });
});
