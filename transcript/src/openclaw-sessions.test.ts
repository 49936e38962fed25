import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as zlib from "node:zlib";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { buildContext } from "./context.js";
import { listOpenClawAgents, listOpenClawSessions, openClawAgentDatabase, parseOpenClawSession, readOpenClawSession } from "./openclaw-sessions.js";
import { OPENCLAW_SESSION_TABLES_SQL } from "./openclaw-schema.js";
import { parseSession } from "./parse.js";
import { upgradeSession } from "./upgrade.js";

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
const PI_LARGE = fileURLToPath(new URL("../../../shared/fixtures/real/pi-large-session.jsonl", import.meta.url));
const zstd = (zlib as unknown as { zstdCompressSync?: (data: Buffer) => Buffer }).zstdCompressSync;

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A state dir with agent `main`'s database holding the real pi session under two keys; some rows zstd-compressed when Node has zstd. */
async function stateDirWithRealSession(): Promise<{ stateDir: string; lines: string[] }> {
  const stateDir = mkdtempSync(join(tmpdir(), "openclaw-state-"));
  roots.push(stateDir);
  const database = openClawAgentDatabase("main", { stateDir });
  mkdirSync(join(database, ".."), { recursive: true });
  // OpenClaw's rows are pi entries with ids: the real (version 1) session upgraded as pi does.
  const copy = join(stateDir, "session.jsonl");
  copyFileSync(PI_LARGE, copy);
  await upgradeSession(copy);
  const lines = readFileSync(copy, "utf8").split("\n").filter((line) => line !== "");
  // Only the tables the reader uses: the rows' other references (conversations) are not there.
  const db = new sqlite!.DatabaseSync(database, { enableForeignKeyConstraints: false });
  db.exec(OPENCLAW_SESSION_TABLES_SQL);
  const node = db.prepare("INSERT INTO session_nodes (session_key, current_session_id, entry_json, updated_at) VALUES (?, ?, ?, ?)");
  const window = db.prepare("INSERT INTO session_windows (session_id, session_key, created_at, updated_at) VALUES (?, ?, ?, ?)");
  const plain = db.prepare("INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)");
  const packed = db.prepare("INSERT INTO transcript_events (session_id, seq, event_zstd, event_utf8_bytes, navigation_json, created_at) VALUES (?, ?, ?, ?, ?, ?)");
  node.run("agent:main:main", "real-session", JSON.stringify({ sessionId: "real-session" }), 2000);
  window.run("real-session", "agent:main:main", 1000, 2000);
  lines.forEach((line, seq) => {
    if (zstd !== undefined && seq % 3 === 2) packed.run("real-session", seq, zstd(Buffer.from(line)), Buffer.byteLength(line), "{}", 1000 + seq);
    else plain.run("real-session", seq, line, 1000 + seq);
  });
  node.run("agent:main:telegram:42", "small-session", JSON.stringify({ sessionId: "small-session" }), 1000);
  window.run("small-session", "agent:main:telegram:42", 1000, 1000);
  lines.slice(0, 5).forEach((line, seq) => plain.run("small-session", seq, line, 1000 + seq));
  db.close();
  return { stateDir, lines };
}

describe.skipIf(sqlite === undefined)("OpenClaw's SQLite sessions", () => {
  it("reads a session by key, by id, and the newest by default, as the same entries as the pi file", async () => {
    const { stateDir, lines } = await stateDirWithRealSession();
    const database = openClawAgentDatabase("main", { stateDir });
    expect(listOpenClawAgents({ stateDir })).toEqual(["main"]);
    expect(listOpenClawSessions(database).map((s) => [s.sessionKey, s.events])).toEqual([
      ["agent:main:main", lines.length],
      ["agent:main:telegram:42", 5],
    ]);
    const byKey = readOpenClawSession(database, { sessionKey: "agent:main:main" });
    expect(byKey.lines).toEqual(lines); // compressed rows come back byte for byte
    expect(readOpenClawSession(database, { sessionId: "small-session" }).sessionKey).toBe("agent:main:telegram:42");
    expect(readOpenClawSession(database).sessionId).toBe("real-session");

    const parsed = parseOpenClawSession(byKey);
    const fromFile = parseSession(`${lines.join("\n")}\n`);
    expect(parsed.entries).toEqual(fromFile.entries);
    expect(buildContext(parsed.entries).messages.length).toBeGreaterThan(100);
  });

  it("names the sessions there when a key is unknown, and the database when the agent is", async () => {
    const { stateDir } = await stateDirWithRealSession();
    const database = openClawAgentDatabase("main", { stateDir });
    expect(() => readOpenClawSession(database, { sessionKey: "agent:main:nope" })).toThrow(expect.objectContaining({ code: "COMPACTION_TRANSCRIPT_NOT_FOUND", hint: expect.stringContaining("agent:main:main") }));
    expect(() => readOpenClawSession(openClawAgentDatabase("ghost", { stateDir }))).toThrow(expect.objectContaining({ code: "COMPACTION_TRANSCRIPT_NOT_FOUND" }));
  });

  it("says what is missing for a SQLite file that is not an OpenClaw agent database, and never writes it", () => {
    const root = mkdtempSync(join(tmpdir(), "openclaw-other-"));
    roots.push(root);
    const path = join(root, "other.sqlite");
    const db = new sqlite!.DatabaseSync(path);
    db.exec("CREATE TABLE t (x INTEGER)");
    db.close();
    const before = readFileSync(path);
    expect(() => readOpenClawSession(path)).toThrow(expect.objectContaining({ code: "COMPACTION_TRANSCRIPT_INVALID", message: expect.stringMatching(/session_nodes/) }));
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});
