/**
 * Many workers, one session, as a service runs them: real Node processes writing to the same
 * session in a SQLite database and in a pi file at once. Appends with generated interleavings
 * lose nothing and keep one order (each batch together, each worker's batches in its order, one
 * parent chain); two workers compacting from the same state compact once; a worker killed with
 * SIGKILL inside a compaction's write leaves the session as it was, and the session opens and
 * takes the next compaction.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import {
  createPiFileStore,
  type EntryStore,
  openPiFileStore,
  openSqliteStore,
  type SessionEntry,
  type SqliteStore,
} from "@compaction/transcript";
import { afterAll, describe, expect, it } from "vitest";

const WORKER = fileURLToPath(new URL("./support/session-store-worker.mjs", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "session-stores-concurrency-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let count = 0;

interface Worker {
  readonly child: ChildProcess;
  readonly lines: string[];
  readonly closed: Promise<number | null>;
  stderr: string;
}

function startWorker(spec: Record<string, unknown>): Worker {
  const child = spawn(process.execPath, [WORKER, JSON.stringify(spec)], { stdio: ["ignore", "pipe", "pipe"] });
  const worker: Worker = { child, lines: [], stderr: "", closed: new Promise((resolve) => child.on("close", (code) => resolve(code))) };
  let pending = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    pending += chunk.toString("utf8");
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    worker.lines.push(...lines);
  });
  child.stderr?.on("data", (chunk: Buffer) => (worker.stderr += chunk.toString("utf8")));
  return worker;
}

async function finished(worker: Worker): Promise<void> {
  const code = await worker.closed;
  expect(worker.stderr.replace(/^.*ExperimentalWarning.*\n|^\(Use `node --trace-warnings.*\n/gm, "")).toBe("");
  expect(code).toBe(0);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

const user = (text: string) => ({ type: "message" as const, message: { role: "user" as const, content: text, timestamp: 1 } });

/** A fresh session of the store kind with `entries` user messages; what a worker needs to open it. */
interface Session {
  readonly store: EntryStore;
  readonly spec: { store: string; file: string; session?: string };
  readonly ids: string[];
}

const kinds: Record<string, (entries: number) => Promise<Session>> = {
  sqlite: async (entries) => {
    const file = join(dir, "sessions.sqlite");
    const store = await openSqliteStore({ file, create: { cwd: "/service" } });
    const ids = (await store.append(Array.from({ length: entries }, (_, i) => user(`seed ${i}`)))).map((e) => e.id);
    return { store, spec: { store: "sqlite", file, session: (store as SqliteStore).sessionId }, ids };
  },
  "pi-file": async (entries) => {
    const file = join(dir, `s${++count}.jsonl`);
    const store = await createPiFileStore(file, { cwd: "/service" }, Array.from({ length: entries }, (_, i) => user(`seed ${i}`)));
    const ids = (await store.entries()).map((e) => e.id);
    return { store, spec: { store: "pi-file", file }, ids };
  },
};

const reopen = (session: Session): Promise<EntryStore> =>
  session.spec.store === "sqlite"
    ? openSqliteStore({ file: session.spec.file, session: session.spec.session as string })
    : openPiFileStore(session.spec.file, { lock: { staleMs: 2_000 } });

const batch = fc.record({ size: fc.integer({ min: 1, max: 4 }), delayMs: fc.integer({ min: 0, max: 3 }) });
const plan = fc.array(batch, { minLength: 4, maxLength: 12 });

function contentOf(entry: SessionEntry): string {
  const content = entry.type === "message" ? (entry.message as { content?: unknown }).content : undefined;
  return typeof content === "string" ? content : "";
}

describe.each(Object.keys(kinds))("many workers on one %s session", (kind) => {
  const open = kinds[kind] as (entries: number) => Promise<Session>;

  it("two processes appending at once lose nothing and keep one order (generated interleavings)", async () => {
    await fc.assert(
      fc.asyncProperty(plan, plan, async (planA, planB) => {
        const session = await open(2);
        const workers = [
          startWorker({ ...session.spec, name: "a", mode: "append", plan: planA }),
          startWorker({ ...session.spec, name: "b", mode: "append", plan: planB }),
        ];
        for (const worker of workers) await finished(worker);
        const entries = (await session.store.entries()).slice(2);
        const acked = workers.flatMap((w) => w.lines.filter((l) => l.startsWith("ok ")).flatMap((l) => l.slice(3).split(" ")));
        const expected = [...planA, ...planB].reduce((sum, b) => sum + b.size, 0);
        expect(entries).toHaveLength(expected);
        expect(new Set(entries.map((e) => e.id))).toStrictEqual(new Set(acked));
        const all = await session.store.entries();
        all.forEach((entry, i) => expect(entry.parentId).toBe(i === 0 ? null : all[i - 1]?.id));
        // Each batch is written together, and each worker's batches in its own order.
        for (const [name, workerPlan] of [["a", planA], ["b", planB]] as const) {
          const mine = entries.map(contentOf).filter((text) => text.startsWith(`${name}:`));
          expect(mine).toStrictEqual(workerPlan.flatMap((b, i) => Array.from({ length: b.size }, (_, j) => `${name}:${i}:${j}`)));
          workerPlan.forEach((b, i) => {
            const at = entries.findIndex((e) => contentOf(e) === `${name}:${i}:0`);
            expect(entries.slice(at, at + b.size).map(contentOf)).toStrictEqual(Array.from({ length: b.size }, (_, j) => `${name}:${i}:${j}`));
          });
        }
        expect((await session.store.branch()).leafId).toBe(all.at(-1)?.id);
        await session.store.close();
      }),
      { numRuns: 3 },
    );
  }, 60_000);

  it("two processes that both saw the threshold crossed compact once", async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat(5), fc.nat(5), fc.boolean(), async (keepA, keepB, compactedBefore) => {
        const session = await open(6);
        let expectedNewest: string | null = null;
        if (compactedBefore) {
          const first = await session.store.appendCompaction(
            { summary: "earlier", firstKeptEntryId: session.ids[1] as string, tokensBefore: 10, details: {} as never },
            { newestCompactionId: null },
          );
          expectedNewest = first.written ? first.entry.id : null;
        }
        const go = join(dir, `go-${++count}`);
        const workers = [keepA, keepB].map((keep, i) =>
          startWorker({ ...session.spec, name: `w${i}`, mode: "compact", go, firstKept: session.ids[keep] }),
        );
        await until(() => workers.every((w) => w.lines.includes("ready")), "both workers to read the branch");
        writeFileSync(go, "");
        for (const worker of workers) await finished(worker);
        const outcomes = workers.map((w) => w.lines.find((l) => l.startsWith("written") || l.startsWith("lost")) ?? "");
        expect(outcomes.filter((o) => o.startsWith("written"))).toHaveLength(1);
        const winner = (outcomes.find((o) => o.startsWith("written")) as string).slice("written ".length);
        expect(outcomes.find((o) => o.startsWith("lost"))).toBe(`lost ${winner}`);
        const compactions = (await session.store.entries()).filter((e) => e.type === "compaction");
        expect(compactions.map((e) => e.id)).toStrictEqual([...(expectedNewest === null ? [] : [expectedNewest]), winner]);
        expect(await session.store.branch({ fromBoundary: true })).toMatchObject({ newestCompactionId: winner, compactions: compactedBefore ? 2 : 1 });
        await session.store.close();
      }),
      { numRuns: 3 },
    );
  }, 60_000);

  it("a worker killed with SIGKILL inside a compaction's write leaves the session as it was", async () => {
    const session = await open(6);
    const before = await session.store.entries();
    const version = await session.store.version();
    const worker = startWorker({ ...session.spec, name: "doomed", mode: "hang-in-compaction", firstKept: session.ids[3] });
    await until(() => worker.lines.includes("inside"), "the worker to be inside the write");
    // While it is inside, the session reads as before (SQLite: its transaction is not committed).
    expect(await session.store.entries()).toStrictEqual(before);
    worker.child.kill("SIGKILL");
    expect(await worker.closed).toBeNull();
    const after = await reopen(session);
    expect(await after.entries()).toStrictEqual(before);
    expect(await after.version()).toBe(version);
    expect(await after.branch()).toMatchObject({ compactions: 0, newestCompactionId: null, leafId: before.at(-1)?.id });
    // The next worker compacts (SQLite at once; a pi file once the dead worker's lock is stale).
    const next = await after.appendCompaction(
      { summary: "after the crash", firstKeptEntryId: session.ids[3] as string, tokensBefore: 10, details: {} as never },
      { newestCompactionId: null },
    );
    expect(next.written).toBe(true);
    if (session.spec.store === "sqlite") {
      const { DatabaseSync: Database } = createRequire(import.meta.url)("node:sqlite") as { DatabaseSync: typeof DatabaseSync };
      const db = new Database(session.spec.file);
      expect(db.prepare("PRAGMA integrity_check").get()).toMatchObject({ integrity_check: "ok" });
      db.close();
    }
    await after.close();
    await session.store.close();
  }, 60_000);
});
