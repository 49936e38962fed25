import { afterEach, describe, expect, it } from "vitest";
import { ErrorCodes, type PiMessage } from "@compaction/core";
import { user } from "@compaction/core/testing/pi";
import {
  autoCompactEntry,
  buildContext,
  type CompactionEntry,
  type EntryStore,
  MemoryEntryStore,
  type NewEntry,
  type SessionEntry,
} from "@compaction/transcript";
import { Gate, exchange, keepRecent, piCompactor, type PiCompactorOptions } from "./__fixtures__/compactors.js";
import type { ContextManager } from "./context-manager.js";
import { createContextManager } from "./create-context-manager.js";
import type { ContextWarningEvent } from "./events.js";

const managers: Array<ContextManager<PiMessage>> = [];
afterEach(async () => {
  for (const manager of managers.splice(0)) await manager.dispose();
});

const entry = (message: PiMessage): NewEntry => ({ type: "message", message });
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));
/** The text of a message entry's message (its first text block), or null. */
function entryText(e: SessionEntry): string | null {
  if (e.type !== "message") return null;
  const content = (e.message as { content: unknown }).content;
  if (typeof content === "string") return content;
  const first = Array.isArray(content) ? (content[0] as { text?: unknown } | undefined) : undefined;
  return typeof first?.text === "string" ? first.text : null;
}

async function storeWith(messages: readonly PiMessage[], extra: readonly NewEntry[] = []): Promise<MemoryEntryStore> {
  const store = new MemoryEntryStore();
  if (messages.length + extra.length > 0) await store.append([...messages.map(entry), ...extra]);
  return store;
}

async function open(store: EntryStore, options: PiCompactorOptions & { autoCompact?: boolean } = {}): Promise<ContextManager<PiMessage>> {
  const manager = await createContextManager<PiMessage>({
    compactor: piCompactor(options),
    store,
    ...(options.autoCompact === undefined ? {} : { autoCompact: options.autoCompact }),
  });
  managers.push(manager);
  return manager;
}

/** The store's context as `buildContext` builds it from all its entries. */
async function storeContext(store: EntryStore): Promise<unknown> {
  return asJson(buildContext(await store.entries()).messages);
}

async function compactionEntries(store: EntryStore): Promise<CompactionEntry[]> {
  return (await store.entries()).filter((e): e is CompactionEntry => e.type === "compaction");
}

describe("a context manager on a session store", () => {
  it("starts from the store's context by the boundary rule and names its location", async () => {
    const store = await storeWith([...exchange(100, "a"), ...exchange(100, "b")]);
    const manager = await open(store);
    expect(asJson(manager.messages)).toEqual(await storeContext(store));
    expect(manager.session).toBe(store.location);
    expect(manager.compactions).toBe(0);
  });

  it("appends messages to the store as message entries, in order, each after the one before", async () => {
    const store = await storeWith(exchange(100));
    const manager = await open(store);
    await manager.append(user("first"));
    await manager.append([user("second"), user("third")]);
    const entries = await store.entries();
    const texts = entries.slice(-3).map(entryText);
    expect(texts).toEqual(["first", "second", "third"]);
    entries.slice(1).forEach((e, i) => expect(e.parentId).toBe(entries[i]!.id));
    expect(asJson(manager.messages)).toEqual(await storeContext(store));
  });

  it("compacts past the threshold into a compaction entry, and its context is the store's", async () => {
    const store = await storeWith([]);
    const manager = await open(store);
    const ends: number[] = [];
    manager.on("compaction-end", (event) => ends.push(event.compactions));
    for (let turn = 0; manager.compactions === 0 && turn < 20; turn++) {
      await manager.append(exchange(200, `fill${turn}`));
      await manager.check();
    }
    expect(manager.compactions).toBe(1);
    expect(ends).toEqual([1]);
    const [compaction] = await compactionEntries(store);
    expect(compaction?.summary).toContain("summary of the earlier conversation");
    expect(asJson(manager.messages)).toEqual(await storeContext(store));
    expect(manager.tokens).toBeLessThanOrEqual(manager.threshold);
    // A fresh manager on the same store starts where this one is.
    const again = await open(store);
    expect(asJson(again.messages)).toEqual(asJson(manager.messages));
    expect(again.compactions).toBe(1);
  });

  it("reads the session's own auto-compaction setting, also when another writer sets it later", async () => {
    const store = await storeWith(exchange(100), [autoCompactEntry(false)]);
    const manager = await open(store);
    expect(manager.autoCompact).toBe(false);
    await store.append([autoCompactEntry(true)]);
    await manager.check();
    expect(manager.autoCompact).toBe(true);
  });

  it("refuses store with session or messages, and a value that is not a store", async () => {
    const store = await storeWith([]);
    await expect(createContextManager({ compactor: piCompactor(), store, session: "/tmp/x.jsonl" })).rejects.toMatchObject({
      code: ErrorCodes.INPUT_INVALID,
      message: expect.stringContaining("store was given with session"),
    });
    await expect(createContextManager({ compactor: piCompactor(), store, messages: [] })).rejects.toMatchObject({
      message: expect.stringContaining("store was given with messages"),
    });
    await expect(createContextManager({ compactor: piCompactor(), store: { kind: "x" } as unknown as EntryStore })).rejects.toMatchObject({
      code: ErrorCodes.INPUT_INVALID,
      message: expect.stringContaining("store must be a session store"),
    });
  });

  it("refuses a store whose session is older than version 3", async () => {
    const store = new MemoryEntryStore({ header: { type: "session", version: 2, id: "old", timestamp: new Date().toISOString() } });
    await expect(createContextManager({ compactor: piCompactor(), store })).rejects.toMatchObject({
      code: ErrorCodes.TRANSCRIPT_INVALID,
      message: expect.stringContaining("version 2"),
    });
  });

  it("leaves the store as it was when writing the compaction fails, and says so", async () => {
    const store = await storeWith([...exchange(200, "a"), ...exchange(200, "b"), ...exchange(200, "c"), ...exchange(200, "d")]);
    const manager = await open(store);
    const before = await store.entries();
    store.appendCompaction = () => Promise.reject(new Error("connection lost"));
    const errors: unknown[] = [];
    manager.on("error", (event) => errors.push(event.error));
    const result = await manager.compact();
    expect(result.status).toBe("failed");
    expect(result.reason).toContain("connection lost");
    expect(errors).toHaveLength(1);
    expect(await store.entries()).toEqual(before);
    expect(manager.compactions).toBe(0);
  });
});

describe("two context managers on one session store", () => {
  it("each sees the other's messages before it measures", async () => {
    const store = await storeWith(exchange(100, "start"));
    const a = await open(store);
    const b = await open(store);
    await a.append(user("from a"));
    await b.check();
    expect(asJson(b.messages)).toEqual(await storeContext(store));
    await b.append(user("from b"));
    await a.check();
    expect(asJson(a.messages)).toEqual(await storeContext(store));
    expect(asJson(a.messages)).toEqual(asJson(b.messages));
  });

  it("a manager whose append lands after the other's messages measures the context with them, without a check between", async () => {
    const store = await storeWith(exchange(100, "start"));
    const a = await open(store, { autoCompact: false });
    const b = await open(store, { autoCompact: false });
    await a.append(exchange(150, "from a"));
    await b.append(user("from b"));
    const fresh = await open(store, { autoCompact: false });
    expect(asJson(b.messages)).toEqual(await storeContext(store));
    expect(b.tokens).toBe(fresh.tokens);
    expect(b.tokens).toBeGreaterThan(a.tokens);
  });

  it("compact once when both cross the threshold together: the later one is dropped with a warning", async () => {
    const messages = [...exchange(200, "a"), ...exchange(200, "b"), ...exchange(200, "c"), ...exchange(200, "d")];
    const store = await storeWith(messages);
    const gateA = new Gate();
    const gateB = new Gate();
    const a = await open(store, { plugins: [keepRecent(200, { gate: gateA, summary: "summary by a" })] });
    const b = await open(store, { plugins: [keepRecent(200, { gate: gateB, summary: "summary by b" })] });
    expect(a.tokens).toBeGreaterThan(a.threshold);
    const warnings: ContextWarningEvent[] = [];
    b.on("warning", (event) => warnings.push(event));
    const checkA = a.check();
    const checkB = b.check();
    await Promise.all([gateA.entered, gateB.entered]); // both planned from the same state
    gateA.open();
    const resultA = await checkA;
    gateB.open();
    const resultB = await checkB;
    expect(resultA?.status).toBe("compacted");
    expect(resultB?.status).toBe("noop");
    expect(resultB?.reason).toContain("Another writer compacted");
    expect(warnings.map((w) => w.kind)).toEqual(["compaction-superseded"]);
    const compactions = await compactionEntries(store);
    expect(compactions.map((c) => c.summary)).toEqual([expect.stringContaining("summary by a")]);
    expect(a.compactions).toBe(1);
    expect(b.compactions).toBe(1);
    expect(asJson(b.messages)).toEqual(await storeContext(store));
    expect(asJson(a.messages)).toEqual(asJson(b.messages));
    expect(b.tokens).toBeLessThanOrEqual(b.threshold);
  });

  it("lose no message and keep one order under generated interleavings of appends and checks", async () => {
    let compacted = 0;
    for (let seed = 1; seed <= 25; seed++) {
      const random = mulberry32(seed);
      const store = await storeWith(exchange(50, "start"));
      const workers = [await open(store), await open(store), await open(store)];
      const sent: string[] = [];
      const operations: Array<Promise<unknown>> = [];
      for (let step = 0; step < 30; step++) {
        const worker = workers[Math.floor(random() * workers.length)]!;
        if (random() < 0.75) {
          const text = `m${seed}-${step} ${"word ".repeat(Math.floor(random() * 80))}`;
          sent.push(text);
          operations.push(worker.append(user(text)));
        } else {
          operations.push(worker.check());
        }
        if (random() < 0.3) await Promise.resolve();
      }
      await Promise.all(operations);
      for (const worker of workers) await worker.idle();
      const written = (await store.entries()).map(entryText).filter((text): text is string => text !== null && text.startsWith(`m${seed}-`));
      // Every message is in the store, once; one worker's own messages keep the order it sent them in.
      expect([...written].sort()).toEqual([...sent].sort());
      // A compaction per crossing, never two from the same state: each compaction follows the one before on the branch.
      const branch = await store.branch();
      const compactionIds = branch.entries.filter((e) => e.type === "compaction").map((e) => e.id);
      expect(compactionIds.length).toBe(branch.compactions);
      compacted += branch.compactions;
      for (const worker of workers) {
        await worker.check();
        expect(asJson(worker.messages), `seed ${seed}`).toEqual(await storeContext(store));
      }
      managers.splice(0).forEach((m) => void m.dispose());
    }
    expect(compacted).toBeGreaterThan(0); // the interleavings crossed the threshold, so compactions raced too
  });
});

/** A small seeded generator, so a failing interleaving can be replayed by its seed. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("context managers on a session in SQLite", () => {
  it("two managers on two connections to one session compact once and end with the same context", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { openSqliteStore } = await import("@compaction/transcript");
    const dir = mkdtempSync(join(tmpdir(), "compaction-cm-sqlite-"));
    try {
      const file = join(dir, "sessions.sqlite");
      const first = await openSqliteStore({ file, create: { cwd: "/project" } });
      await first.append([...exchange(200, "a"), ...exchange(200, "b"), ...exchange(200, "c"), ...exchange(200, "d")].map(entry));
      const second = await openSqliteStore({ file, session: first.sessionId });
      const gateA = new Gate();
      const gateB = new Gate();
      const a = await open(first, { plugins: [keepRecent(200, { gate: gateA, summary: "summary by a" })] });
      const b = await open(second, { plugins: [keepRecent(200, { gate: gateB, summary: "summary by b" })] });
      const superseded: string[] = [];
      for (const manager of [a, b]) manager.on("warning", (event) => superseded.push(event.kind));
      const checks = [a.check(), b.check()];
      await Promise.all([gateA.entered, gateB.entered]);
      gateB.open();
      gateA.open();
      const results = await Promise.all(checks);
      expect(results.map((r) => r?.status).sort()).toEqual(["compacted", "noop"]);
      expect(superseded).toEqual(["compaction-superseded"]);
      expect(await compactionEntries(first)).toHaveLength(1);
      await a.append(user("after the compaction, from a"));
      await b.check();
      expect(asJson(b.messages)).toEqual(asJson(a.messages));
      expect(asJson(a.messages)).toEqual(await storeContext(first));
      await first.close();
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
