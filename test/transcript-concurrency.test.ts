/**
 * Appends from several processes at once, and processes killed while appending: the session
 * file must lose no acknowledged entry, never hold two writes mixed into one line, keep every
 * entry linked to the one before it, and always load (here and in pi-coding-agent).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildContext, createSession, loadBoundary, readSession, type SessionEntry } from "@compaction/transcript";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";

const WORKER = fileURLToPath(new URL("./support/transcript-worker.mjs", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "transcript-concurrency-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Worker {
  readonly child: ChildProcess;
  /** Ids the worker acknowledged (appended and fsynced), in order. */
  readonly acked: string[];
  /** Resolves once the worker has exited and all it printed is read. */
  readonly closed: Promise<number | null>;
  stderr: string;
  /** Called, synchronously as the line arrives, with the file size before each append of a big entry. */
  onBig?: (sizeBefore: number) => void;
}

interface WorkerOptions {
  readonly staleMs?: number;
  /** Size of the big entries of "forever" mode, in MiB. */
  readonly bigMiB?: number;
}

function startWorker(path: string, name: string, appends: number | "forever", options: WorkerOptions = {}): Worker {
  const args = [WORKER, path, name, String(appends), String(options.staleMs ?? 10_000), String(options.bigMiB ?? 4)];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  const worker: Worker = {
    child,
    acked: [],
    stderr: "",
    closed: new Promise((resolve) => child.on("close", (code) => resolve(code))),
  };
  let pending = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    pending += chunk.toString("utf8");
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      if (line.startsWith("ok ")) worker.acked.push(...line.slice(3).split(" "));
      if (line.startsWith("big ")) worker.onBig?.(Number(line.slice(4)));
    }
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
    await sleep(5);
  }
}

describe("appending from several processes", () => {
  it("keeps every entry of 4 processes appending 50 each at once, exactly once, in one chain", async () => {
    const path = join(dir, "concurrent.jsonl");
    await createSession(path, { cwd: dir }, [{ type: "message", message: { role: "user", content: "start", timestamp: 1 } }]);
    const workers = ["w1", "w2", "w3", "w4"].map((name) => startWorker(path, name, 50));
    const codes = await Promise.all(workers.map((worker) => worker.closed));
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

/**
 * What a kill may leave, checked without skipCorrupt by both readers: every acknowledged entry,
 * one chain, and at most one line left out, the incomplete start of an entry at the very end.
 * Returns that cut-short last line's bytes, if there is one.
 */
function expectLoadsAfterKill(path: string, acked: readonly string[]): Buffer | undefined {
  const read = readSession(path);
  const ids = new Set(read.entries.map((e) => e.id));
  expect(acked.filter((id) => !ids.has(id))).toEqual([]);
  expectOneChain(read.entries);
  expect(read.skipped.length).toBeLessThanOrEqual(1);
  expect(read.skipped.length > 0).toBe(read.incompleteTail);
  const entryStart = '{"type":"message","id":"';
  for (const { text } of read.skipped) expect(text.startsWith(entryStart) || entryStart.startsWith(text)).toBe(true);

  const boundary = loadBoundary(path);
  expect(boundary.incompleteTail).toBe(read.incompleteTail);
  expect(boundary.leafId).toBe(read.entries.at(-1)?.id ?? null);
  expect(boundary.messages).toStrictEqual(buildContext(read.entries).messages);
  if (!read.incompleteTail) return undefined;
  const bytes = readFileSync(path);
  return Buffer.from(bytes.subarray(bytes.lastIndexOf(0x0a) + 1));
}

/** Busy-waits (up to 2 s) until the file grows past `sizeBefore`, that is, until the big write has begun. */
function waitForWriteToBegin(path: string, sizeBefore: number): void {
  const deadline = performance.now() + 2_000;
  while (statSync(path).size <= sizeBefore && performance.now() < deadline);
}

describe("a process killed while appending", () => {
  /** A write of tens of MiB takes long enough for the kill to land inside it (a few MiB can finish first on a fast machine); kernels cut a killed write at page or folio (up to 2 MiB) boundaries. */
  const BIG_MIB = 24;
  const MIN_ROUNDS = 4;
  const MAX_ROUNDS = 16;

  it("leaves a file both readers load with every acknowledged entry, also when the kill cuts a write short", async () => {
    const path = join(dir, "killed.jsonl");
    await createSession(path, { cwd: dir });
    const acked: string[] = [];
    /** Rounds whose kill cut a write short: the file ended in part of a line. */
    let cutShort = 0;
    /** The part line the last kill left, which the next append must move to <file>.incomplete. */
    let fragment: Buffer | undefined;
    let asideBytes = 0;
    const expectMovedAside = (): void => {
      if (fragment === undefined) return;
      const aside = readFileSync(`${path}.incomplete`);
      expect(aside.length).toBe(asideBytes + fragment.length + 1);
      expect(aside.subarray(asideBytes).equals(Buffer.concat([fragment, Buffer.from("\n")]))).toBe(true);
      asideBytes = aside.length;
      fragment = undefined;
    };

    for (let round = 0; round < MIN_ROUNDS || (cutShort === 0 && round < MAX_ROUNDS); round++) {
      // The last round's worker may have died holding the lock: remove it, as the error for a lock
      // left behind says to (waiting for it to go stale would cost seconds a round; the last
      // append below does wait and take it over).
      rmSync(`${path}.lock`, { recursive: true, force: true });
      const worker = startWorker(path, `r${round}`, "forever", { bigMiB: BIG_MIB });
      // Even rounds: killed at a random moment of an append of a big entry (taking the lock,
      // reading the tail, writing, syncing, or already the next batch). Odd rounds: killed as
      // soon as the big write has begun.
      const aimed = round % 2 === 1;
      let bigSeen = false;
      worker.onBig = (sizeBefore) => {
        if (bigSeen) return;
        bigSeen = true;
        if (aimed) {
          waitForWriteToBegin(path, sizeBefore);
          worker.child.kill("SIGKILL");
        } else {
          setTimeout(() => worker.child.kill("SIGKILL"), Math.random() * 80);
        }
      };
      const code = await worker.closed;
      expect({ code, stderr: worker.stderr, bigSeen }).toEqual({ code: null, stderr: "", bigSeen: true });
      // The worker's first append came before its first big one, so the last round's part line is set aside by now.
      expect(worker.acked.length).toBeGreaterThan(0);
      expectMovedAside();
      acked.push(...worker.acked);
      fragment = expectLoadsAfterKill(path, acked);
      if (fragment !== undefined) cutShort++;
    }
    expect(cutShort).toBeGreaterThan(0);

    // One more append, taking over the lock the last worker may have died holding once it is
    // stale (2 s): it moves the last part line aside, and the file then loads with nothing left out.
    const last = startWorker(path, "last", 1, { staleMs: 2_000 });
    expect(await last.closed).toBe(0);
    expectMovedAside();
    acked.push(...last.acked);
    const read = readSession(path);
    expect(read.skipped).toEqual([]);
    expect(read.entries.map((e) => e.id).filter((id) => acked.includes(id))).toEqual(acked);
    expectOneChain(read.entries);
    expect(SessionManager.open(path).buildSessionContext().messages).toHaveLength(read.entries.length);
  }, 60_000);
});
