import { appendFileSync, existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { entryText } from "@compaction/plugin-recall";
import { readSession, SessionTree } from "@compaction/transcript";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "./index.js";
import type { CliIo } from "./io.js";
import { createSandbox, giveAgentRecall, REAL_SESSION_ID, type Sandbox } from "./test-support/cli-sandbox.js";

interface Report {
  session: { path: string; id: string };
  query: string;
  leafId: string;
  index: { path: string; rebuilt: boolean; reason: string | null; entries: number };
  results: { entryId: string; timestamp: string; role: string; snippet: string; score: number; exact: boolean }[];
}

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(() => sandbox.remove());

const searchJson = (...args: string[]) => JSON.parse(sandbox.run(["search", ...args, "--json"]).stdout) as Report;

describe("compaction search", () => {
  it("prints one block per result: entry id, role, time and score, then the snippet", () => {
    const run = sandbox.run(["search", "port user-message-selector"], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^5 results for "port user-message-selector" in session d703a1a9-1b7b-4fb1-b512-c9738b1fe617, current branch, best first:\n\n/);
    expect(run.stdout).toMatch(/\nl00000005  user  2025-11-20T23:33:50\.804Z  score \d+\.\d\d\n  .*we still need to port over user-message-selector\.ts/);
    expect(run.stdout.trimEnd().split("\n\n")).toHaveLength(6);
  });

  it("prints one JSON object with --json: the session, the index and the results", () => {
    const report = searchJson("port user-message-selector");
    expect(report).toMatchObject({
      session: { path: sandbox.sessionPath, id: REAL_SESSION_ID },
      query: "port user-message-selector",
      leafId: "l00001019",
      index: { path: `${sandbox.sessionPath}.recall.json`, rebuilt: true, reason: "no index yet", entries: 1018 },
    });
    expect(report.results).toHaveLength(5);
    expect(report.results.find((hit) => hit.role === "user")).toMatchObject({ entryId: "l00000005", timestamp: "2025-11-20T23:33:50.804Z" });
  });

  it("keeps the index beside the session and reuses it: the second search rebuilds nothing", () => {
    expect(searchJson("theme").index.rebuilt).toBe(true);
    expect(existsSync(`${sandbox.sessionPath}.recall.json`)).toBe(true);
    expect(searchJson("theme").index).toMatchObject({ rebuilt: false, reason: null });
  });

  it("finds entries appended since the last search", () => {
    searchJson("theme");
    const line = { type: "message", id: "feed0001", parentId: "l00001019", timestamp: "2025-11-21T04:00:00.000Z", message: { role: "user", content: "what about the zeppelin dashboard", timestamp: 1 } };
    appendFileSync(sandbox.sessionPath, `${JSON.stringify(line)}\n`);
    const report = searchJson("zeppelin");
    expect(report.index.rebuilt).toBe(false);
    expect(report.results.map((hit) => hit.entryId)).toEqual(["feed0001"]);
  });

  it("finds early messages after compact has summarised them out of the context", () => {
    expect(sandbox.run(["compact", "--yes"]).code).toBe(0);
    const report = searchJson("user-message-selector", "--limit", "20");
    expect(report.results.map((hit) => hit.entryId)).toContain("l00000005");
  });

  it("shows at most --limit results", () => {
    expect(searchJson("theme", "--limit", "2").results).toHaveLength(2);
  });

  it("exits 2 for a --limit that is not a whole number of at least 1", () => {
    const run = sandbox.run(["search", "theme", "--limit", "0"], { NO_COLOR: "1" });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--limit expects a whole number of at least 1, but got '0'.");
  });

  it("exits 2 without a query", () => {
    expect(sandbox.run(["search"]).code).toBe(2);
  });

  it("says so, exit 0, when nothing matches", () => {
    const run = sandbox.run(["search", "kubernetes"], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`No results for "kubernetes" on the current branch of session ${REAL_SESSION_ID} (${sandbox.sessionPath}).\n`);
  });

  it("searches the session given with --session (an id prefix)", () => {
    expect(searchJson("theme", "--session", REAL_SESSION_ID.slice(0, 8)).session.path).toBe(sandbox.sessionPath);
  });

  it("exits 3 when the session does not exist", () => {
    expect(sandbox.run(["search", "theme", "--session", join(sandbox.root, "missing.jsonl")]).code).toBe(3);
  });

  it("uses the recall plugin's options from .compactionrc: indexDir and limit", () => {
    sandbox.writeConfig(".compactionrc.json", JSON.stringify({ preset: "rolling", options: { recall: { indexDir: join(sandbox.root, "indexes"), limit: 3 } } }));
    const report = searchJson("theme");
    expect(report.index.path).toBe(join(sandbox.root, "indexes", `${sandbox.sessionPath.split("/").at(-1)}.recall.json`));
    expect(report.results).toHaveLength(3);
  });

  it("writes nothing to stderr when stderr is not a terminal", () => {
    expect(sandbox.run(["search", "theme"]).stderr).toBe("");
  });

  it("shows the build's progress on stderr when it is a terminal", async () => {
    let stdout = "";
    let stderr = "";
    const io: CliIo = {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text), isTTY: true },
      stdin: process.stdin,
      env: { NO_COLOR: "1", HOME: join(sandbox.root, "home"), COMPACTION_SESSIONS_DIR: sandbox.sessionsDir },
      cwd: sandbox.project,
    };
    const before = sandbox.bytes();
    expect(await main(["search", "theme"], io)).toBe(0);
    const name = sandbox.sessionPath.split("/").at(-1) as string;
    expect(stderr).toContain(`\r\u001b[2KIndexing ${name} for search `);
    expect(stderr).toMatch(/for search 100% \(\d+\.\d \/ \d+\.\d MiB\)/);
    expect(stderr.endsWith("\r\u001b[2K")).toBe(true);
    expect(stdout).toContain("results for \"theme\"");
    expect(statSync(`${sandbox.sessionPath}.recall.json`).size).toBeGreaterThan(0);
    expect(sandbox.bytes().equals(before)).toBe(true);
  });
});

describe("compaction search for a path, a name or an id", () => {
  // Issue 13: BM25 splits "theme-selector.ts" into theme, selector, ts; entries that contain the
  // path as typed must come before those that only share those words.
  it.each(["oauth-selector.ts", "theme.md", "user-message-selector.ts", "theme-selector.ts"])(
    "ranks every entry containing %s first, after a rolling compaction",
    async (query) => {
      // pi loads @compaction/pi for this user, so rolling evicts (see compact-rolling.test.ts).
      giveAgentRecall(sandbox);
      const compact = sandbox.run(["compact", "--yes", "--preset", "rolling", "--json"]);
      expect(compact.code).toBe(0);
      expect(JSON.parse(compact.stdout)).toMatchObject({ recallTool: { fallback: false }, summary: expect.stringContaining("memory_search") });
      const parsed = readSession(sandbox.sessionPath);
      const branch = new SessionTree(parsed.entries).branch();
      const containing = new Set(
        branch.filter((entry) => (entryText(entry)?.text ?? "").replace(/\s+/g, " ").toLowerCase().includes(query.toLowerCase())).map((entry) => entry.id),
      );
      expect(containing.size).toBeGreaterThan(0);
      const report = searchJson(query, "--limit", String(containing.size + 5));
      const ids = report.results.map((hit) => hit.entryId);
      expect(new Set(ids.slice(0, containing.size))).toEqual(containing);
      expect(report.results.slice(0, containing.size).every((hit) => hit.exact)).toBe(true);
      expect(report.results.slice(containing.size).some((hit) => hit.exact)).toBe(false);
    },
  );
});
