/**
 * Appends from several processes at once, and processes killed while appending: the session
 * file must lose no acknowledged entry, never hold two writes mixed into one line, keep every
 * entry linked to the one before it, and always load (here and in pi-coding-agent).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildContext, createSession, readSession, type SessionEntry } from "@compaction/core";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";

const WORKER = fileURLToPath(new URL("./support/transcript-worker.mjs", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "transcript-concurrency-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Worker {
  readonly child: ChildProcess;
  /** Ids the worker acknowledged (appended and fsynced), in order. */
  readonly acked: string[];
  readonly exited: Promise<number | null>;
  stderr: string;
}

function startWorker(path: string, name: string, appends: number | "forever", staleMs?: number): Worker {
  const args = [WORKER, path, name, String(appends), ...(staleMs === undefined ? [] : [String(staleMs)])];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  const worker: Worker = {
    child,
    acked: [],
    stderr: "",
    exited: new Promise((resolve) => child.on("exit", (code) => resolve(code))),
  };
  let pending = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    pending += chunk.toString("utf8");
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) if (line.startsWith("ok ")) worker.acked.push(...line.slice(3).split(" "));
  });
  child.stderr?.on("data", (chunk: Buffer) => (worker.stderr += chunk.toString("utf8")));
  return worker;
}

/** Every entry's parent is the entry on the line before it (the first's: none). */
function expectOneChain(entries: readonly SessionEntry[]): void {
  const broken = entries.filter((entry, i) => entry.parentId !== (i === 0 ? null : entries[i - 1]?.id));
  expect(broken.map((entry) => entry.id)).toEqual([]);
}

function userText(entry: SessionEntry): string {
  return entry.type === "message" && entry.message.role === "user" && typeof entry.message.content === "string" ? entry.message.content : "";
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe("appending from several processes", () => {
  it("keeps every entry of 4 processes appending 50 each at once, exactly once, in one chain", async () => {
    const path = join(dir, "concurrent.jsonl");
    await createSession(path, { cwd: dir }, [{ type: "message", message: { role: "user", content: "start", timestamp: 1 } }]);
    const workers = ["w1", "w2", "w3", "w4"].map((name) => startWorker(path, name, 50));
    const codes = await Promise.all(workers.map((worker) => worker.exited));
    expect({ codes, stderr: workers.map((w) => w.stderr).join("") }).toEqual({ codes: [0, 0, 0, 0], stderr: "" });

    const read = readSession(path);
    expect(read.skipped).toEqual([]);
    expect(read.entries).toHaveLength(201);
    const texts = read.entries.slice(1).map(userText).sort();
    const expected = ["w1", "w2", "w3", "w4"].flatMap((name) => Array.from({ length: 50 }, (_, i) => `${name}:${i}:0`)).sort();
    expect(texts).toEqual(expected);
    expect(new Set(read.entries.map((e) => e.id)).size).toBe(201);
    expect(workers.flatMap((w) => w.acked).sort()).toEqual(read.entries.slice(1).map((e) => e.id).sort());
    expectOneChain(read.entries);

    const pi = SessionManager.open(path).buildSessionContext();
    expect(pi.messages).toStrictEqual(buildContext(read.entries).messages);
  });
});

describe("a process killed while appending", () => {
  it("never leaves a file that fails to load or loses an acknowledged entry, round after round", async () => {
    const path = join(dir, "killed.jsonl");
    await createSession(path, { cwd: dir });
    const acked: string[] = [];
    for (let round = 0; round < 5; round++) {
      // The lock a killed worker held goes stale after 2 s; the next worker then takes it over.
      const worker = startWorker(path, `r${round}`, "forever", 2_000);
      await until(() => worker.acked.length > 0 || worker.child.exitCode !== null, `round ${round}'s first append`);
      expect(worker.stderr).toBe("");
      await sleep(20 + Math.floor(Math.random() * 300));
      worker.child.kill("SIGKILL");
      await worker.exited;
      acked.push(...worker.acked);

      // Loads without skipCorrupt: half a line a kill left at the end is an incomplete tail, and
      // the next append moves it to <file>.incomplete before writing.
      const read = readSession(path);
      const ids = new Set(read.entries.map((e) => e.id));
      expect(acked.filter((id) => !ids.has(id))).toEqual([]);
      expectOneChain(read.entries);
      // Only the line this round's kill cut short can be left out: the start of one entry.
      for (const skipped of read.skipped) expect(skipped.text).toMatch(/^\{"type":"message","id":"[0-9a-f]{8}","parentId":/);
      expect(read.skipped.length).toBeLessThanOrEqual(1);
      expect(read.skipped.length > 0).toBe(read.incompleteTail);
      expect(SessionManager.open(path).buildSessionContext().messages).toHaveLength(read.entries.length);
    }
    expect(acked.length).toBeGreaterThan(5);
  }, 120_000);
});
