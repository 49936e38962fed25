/**
 * Background compaction with a session many workers share in a SQLite database: each manager has
 * its own connection (another worker's view), and the compaction prepared in the background is
 * claimed in the database first (preparation-claim.ts). In one process, with model summaries the
 * test releases; context-manager.claims.processes.test.ts runs it with two processes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Compactor, createEstimateCounter, createPiAdapter, type PiMessage, type Summarizer } from "@compaction/core";
import { keepRecent } from "@compaction/core/testing";
import { openSqliteStore, type SqliteStore } from "@compaction/transcript";
import { exchange } from "./__fixtures__/compactors.js";
import { SlowModel } from "./__fixtures__/slow-model.js";
import type { ContextManager } from "./context-manager.js";
import { createContextManager, type ContextManagerOptions } from "./create-context-manager.js";
import type { BackgroundEvent, CompactionEndEvent } from "./events.js";

const { DatabaseSync: Database } = createRequire(import.meta.url)("node:sqlite") as { DatabaseSync: typeof DatabaseSync };
const dir = mkdtempSync(join(tmpdir(), "cm-claims-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Worker {
  readonly manager: ContextManager<PiMessage>;
  readonly model: SlowModel;
  readonly store: SqliteStore;
  readonly background: BackgroundEvent[];
  readonly ends: CompactionEndEvent<PiMessage>[];
  readonly warnings: string[];
}

const opened: Worker[] = [];
const handles: SqliteStore[] = [];
afterEach(async () => {
  for (const worker of opened.splice(0)) {
    worker.model.instant = true;
    worker.model.release();
    await worker.manager.dispose();
    await worker.store.close();
  }
  for (const store of handles.splice(0)) await store.close();
});

function compactorWith(model: Summarizer): Compactor<PiMessage> {
  return new Compactor<PiMessage>({ summarizer: model, adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), plugins: [keepRecent(600)], contextWindow: 4_000, reserveTokens: 400 });
}

let sessions = 0;
async function session(): Promise<{ file: string; id: string }> {
  const file = join(dir, `s${++sessions}.sqlite`);
  const store = await openSqliteStore({ file, create: { cwd: "/srv" } });
  const id = store.sessionId;
  await store.close();
  return { file, id };
}

async function worker(name: string, at: { file: string; id: string }, options: Partial<ContextManagerOptions<PiMessage>> = {}): Promise<Worker> {
  const model = new SlowModel();
  const store = await openSqliteStore({ file: at.file, session: at.id });
  const manager = await createContextManager<PiMessage>({ compactor: compactorWith(model), store, worker: name, waitMs: 10_000, ...options });
  const made: Worker = { manager, model, store, background: [], ends: [], warnings: [] };
  manager.on("background", (event) => made.background.push(event));
  manager.on("compaction-end", (event) => made.ends.push(event));
  manager.on("warning", (event) => made.warnings.push(event.kind));
  opened.push(made);
  return made;
}

/** Another handle on the session (the test's own view of the database). */
async function handle(at: { file: string; id: string }): Promise<SqliteStore> {
  const store = await openSqliteStore({ file: at.file, session: at.id });
  handles.push(store);
  return store;
}

/** Appends exchanges through `by`, checking after each, until `until()` holds. */
async function grow(by: Worker, until: () => boolean, label: string): Promise<void> {
  for (let i = 0; !until() && i < 200; i++) {
    await by.manager.append(exchange(120, `${label}${i}`));
    await by.manager.check();
  }
  expect(until()).toBe(true);
}

async function compactionEntries(store: SqliteStore): Promise<number> {
  return (await store.entries()).filter((entry) => entry.type === "compaction").length;
}

async function eventually(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting until ${what}`);
}

const starts = (w: Worker) => w.background.filter((event) => event.type === "start").length;

describe("background compaction claimed in a shared SQLite session", () => {
  it("only the worker holding the claim prepares; the other, past the prepare mark too, goes on from the holder's compaction", async () => {
    const at = await session();
    const a = await worker("worker a", at);
    const b = await worker("worker b", at);
    const db = await handle(at);
    await grow(a, () => a.manager.prepared !== null, "a");
    expect(a.manager.prepared?.claim).toMatchObject({ owner: "worker a" });
    expect(await db.preparationClaims.current()).toMatchObject({ owner: "worker a", state: "live", readyAt: null });
    // b reads the same session past the prepare mark, and is refused.
    expect(await b.manager.check()).toBeNull();
    expect(b.manager.tokens).toBeGreaterThan(b.manager.prepareMark as number);
    expect(b.manager.prepared).toBeNull();
    expect(b.background).toEqual([{ type: "claimed-elsewhere", owner: "worker a", claimedAt: expect.any(String), ageMs: expect.any(Number), ready: false }]);
    // b goes on past the threshold while a's model writes: b neither prepares nor compacts.
    const byB: PiMessage[] = [];
    while (b.manager.tokens <= b.manager.threshold) {
      const turn = exchange(120, `b${byB.length}`);
      byB.push(...turn);
      await b.manager.append(turn);
      expect(await b.manager.check()).toBeNull();
    }
    expect(b.model.calls).toBe(0);
    expect(b.background.filter((event) => event.type === "claimed-elsewhere")).toHaveLength(1);
    a.model.release();
    await a.manager.prepared?.done;
    const applied = await a.manager.check();
    expect(applied?.status).toBe("compacted");
    expect(await db.preparationClaims.current()).toBeNull();
    // b sees a's compaction, with its own messages after it; it had nothing to drop.
    await b.manager.check();
    expect(b.manager.compactions).toBe(1);
    const texts = (messages: readonly PiMessage[]) => messages.map((m) => JSON.stringify((m as { content?: unknown }).content));
    expect(texts(b.manager.messages.slice(-byB.length))).toEqual(texts(byB));
    expect(texts(b.manager.messages)).toEqual(texts(a.manager.messages));
    expect(await compactionEntries(db)).toBe(1);
    expect(starts(a) + starts(b)).toBe(1);
    expect([...a.background, ...b.background].filter((event) => event.type === "dropped")).toEqual([]);
    expect([...a.warnings, ...b.warnings]).not.toContain("compaction-superseded");
  });

  it("a holder whose summary is ready applies it at a renewal once another worker's appends took the session past the threshold", async () => {
    const at = await session();
    const a = await worker("worker a", at, { claimLeaseMs: 90 });
    const b = await worker("worker b", at);
    const db = await handle(at);
    await grow(a, () => a.manager.prepared !== null, "a");
    a.model.release();
    await a.manager.prepared?.done;
    await eventually(async () => (await db.preparationClaims.current())?.readyAt !== null, "the claim says the preparation is ready");
    // Only b's host calls check() from here.
    for (let i = 0; b.manager.tokens <= b.manager.threshold && i < 50; i++) {
      await b.manager.append(exchange(120, `b${i}`));
      await b.manager.check();
    }
    await eventually(async () => (await compactionEntries(db)) === 1, "a applies its compaction");
    expect(a.ends).toHaveLength(1);
    expect(a.ends[0]?.result.status).toBe("compacted");
    await eventually(async () => (await db.preparationClaims.current()) === null, "a releases its claim");
    await b.manager.check();
    expect(b.manager.compactions).toBe(1);
    expect(starts(b)).toBe(0);
  });

  it("a claim left by a crashed worker blocks the session only until its lease runs out; then the next worker past the prepare mark takes it over", async () => {
    const at = await session();
    const db = await handle(at);
    const a = await worker("worker a", at);
    const crashed = await db.preparationClaims.claim({ owner: "crashed worker", baseCompactionId: null, headEntryId: null, tokens: 0, leaseMs: 150 });
    expect(crashed.claimed).toBe(true);
    await grow(a, () => a.background.length > 0, "a");
    expect(a.manager.prepared).toBeNull();
    expect(a.background).toMatchObject([{ type: "claimed-elsewhere", owner: "crashed worker" }]);
    await eventually(async () => (await db.preparationClaims.current())?.state === "expired", "the crashed worker's lease runs out");
    await a.manager.check();
    expect(a.manager.prepared).not.toBeNull();
    expect(await db.preparationClaims.current()).toMatchObject({ owner: "worker a", state: "live" });
  });

  it("a worker that cannot send a request waits for the holder's compaction instead of compacting itself", async () => {
    const at = await session();
    const a = await worker("worker a", at);
    const b = await worker("worker b", at, { waitMs: 20_000 });
    const db = await handle(at);
    await grow(a, () => a.manager.prepared !== null, "a");
    await b.manager.append(exchange(1_400, "b-large"));
    expect(b.manager.tokens).toBeGreaterThan(b.manager.contextWindow - b.manager.reserveTokens);
    const waiting = b.manager.check();
    await eventually(() => b.background.some((event) => event.type === "waiting"), "b waits");
    a.model.release();
    await a.manager.prepared?.done;
    expect((await a.manager.check())?.status).toBe("compacted");
    expect(await waiting).toBeNull();
    expect(b.background.map((event) => event.type)).toEqual(["claimed-elsewhere", "waiting", "wait"]);
    expect(b.background.at(-1)).toMatchObject({ type: "wait", timedOut: false });
    expect(b.ends).toEqual([]);
    expect(b.model.calls).toBe(0);
    expect(b.manager.tokens).toBeLessThanOrEqual(b.manager.contextWindow - b.manager.reserveTokens);
    expect(await compactionEntries(db)).toBe(1);
  });

  it("releases the claim when its preparation is dropped (a manual compaction) and when the manager is disposed", async () => {
    const at = await session();
    const a = await worker("worker a", at);
    const db = await handle(at);
    await grow(a, () => a.manager.prepared !== null, "a");
    a.model.instant = true;
    a.model.release();
    expect((await a.manager.compact()).status).toBe("compacted");
    expect(a.background.some((event) => event.type === "dropped")).toBe(true);
    expect(await db.preparationClaims.current()).toBeNull();
    a.model.instant = false;
    a.model.hold();
    await grow(a, () => a.manager.prepared !== null, "again");
    expect(await db.preparationClaims.current()).toMatchObject({ owner: "worker a" });
    opened.splice(opened.indexOf(a), 1);
    a.model.release();
    await a.manager.dispose();
    await a.store.close();
    expect(await db.preparationClaims.current()).toBeNull();
  });

  it("drops its preparation when its claim was taken from it (its renewal finds another token)", async () => {
    const at = await session();
    const a = await worker("worker a", at, { claimLeaseMs: 60 });
    await grow(a, () => a.manager.prepared !== null, "a");
    const raw = new Database(at.file);
    raw.prepare("UPDATE compaction_preparation_claims SET token = 'someone else', owner = 'worker c'").run();
    raw.close();
    await eventually(() => a.background.some((event) => event.type === "dropped"), "a drops its preparation");
    expect(a.background.find((event) => event.type === "dropped")).toMatchObject({ cost: { why: expect.stringContaining("taken over by another worker") } });
    expect(a.manager.prepared).toBeNull();
  });

  it("leaves a store without claims (in memory) as it was: every manager prepares its own", async () => {
    const model = new SlowModel();
    const manager = await createContextManager<PiMessage>({ compactor: compactorWith(model), messages: [] });
    try {
      for (let i = 0; manager.prepared === null && i < 100; i++) {
        await manager.append(exchange(120, `m${i}`));
        await manager.check();
      }
      expect(manager.prepared?.claim).toBeNull();
    } finally {
      model.instant = true;
      model.release();
      await manager.dispose();
    }
  });

  it("refuses a worker name or claim lease that cannot be used, naming the option", async () => {
    const at = await session();
    const store = await handle(at);
    await expect(createContextManager<PiMessage>({ compactor: compactorWith(new SlowModel()), store, worker: " " })).rejects.toThrow(/worker must be a non-empty string/);
    await expect(createContextManager<PiMessage>({ compactor: compactorWith(new SlowModel()), store, claimLeaseMs: 0 })).rejects.toThrow(/claimLeaseMs must be a whole number/);
  });
});
