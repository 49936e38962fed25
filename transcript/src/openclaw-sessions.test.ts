import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { buildContext } from "./context.js";
import { listOpenClawAgents, listOpenClawSessions, openClawAgentDatabase, parseOpenClawSession, readOpenClawSession } from "./openclaw-sessions.js";
import { parseSession } from "./parse.js";
import { writeOpenClawDatabase } from "./testing/openclaw-database.js";
import { upgradeSession } from "./upgrade.js";

/** node:sqlite (Node 22+), loaded as the reader loads it. */
const { DatabaseSync } = createRequire(import.meta.url)("node:sqlite") as typeof import("node:sqlite");
const PI_LARGE = fileURLToPath(new URL("../../../shared/fixtures/real/pi-large-session.jsonl", import.meta.url));

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A state dir with agent `main`'s database holding the real pi session under two keys; some rows zstd-compressed when Node has zstd. */
async function stateDirWithRealSession(): Promise<{ stateDir: string; lines: string[] }> {
  const stateDir = mkdtempSync(join(tmpdir(), "openclaw-state-"));
  roots.push(stateDir);
  const database = openClawAgentDatabase("main", { stateDir });
  // OpenClaw's rows are pi entries with ids: the real (version 1) session upgraded as pi does.
  const copy = join(stateDir, "session.jsonl");
  copyFileSync(PI_LARGE, copy);
  await upgradeSession(copy);
  const lines = readFileSync(copy, "utf8").split("\n").filter((line) => line !== "");
  writeOpenClawDatabase(database, [
    {
      key: "agent:main:main",
      id: "real-session",
      lines,
      entry: { sessionId: "real-session" },
      createdAt: 1000,
      updatedAt: 2000,
      firstEventAt: 1000,
      packed: (seq) => seq % 3 === 2,
    },
    { key: "agent:main:telegram:42", id: "small-session", lines: lines.slice(0, 5), entry: { sessionId: "small-session" }, createdAt: 1000, updatedAt: 1000, firstEventAt: 1000 },
  ]);
  return { stateDir, lines };
}

describe("OpenClaw's SQLite sessions", () => {
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
    const db = new DatabaseSync(path);
    db.exec("CREATE TABLE t (x INTEGER)");
    db.close();
    const before = readFileSync(path);
    expect(() => readOpenClawSession(path)).toThrow(expect.objectContaining({ code: "COMPACTION_TRANSCRIPT_INVALID", message: expect.stringMatching(/session_nodes/) }));
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});
