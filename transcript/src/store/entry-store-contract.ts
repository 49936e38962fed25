/**
 * The `EntryStore` contract as a vitest suite any store runs against itself
 * (`@compaction/transcript/testing`): append order and all-or-none, assigned ids and parents,
 * the header, the branch and its boundary, conditional compaction (both outcomes, and two
 * writers racing), version tokens, session settings, close, and the errors. A store passes it
 * by giving a factory for fresh sessions and for second handles on the same session (another
 * worker's view).
 *
 * ```ts
 * describeEntryStoreContract("SqliteStore", {
 *   create: () => openSqliteStore({ file, session: createSessionId(), create: { cwd: "/w" } }),
 *   reopen: (store) => openSqliteStore({ file, session: store.sessionId }),
 * });
 * ```
 */
import { describe, expect, it, afterAll } from "vitest";
import { CompactionError, ErrorCodes, createCompactionEvent, type PiMessage } from "@compaction/core";
import { buildContext } from "../context.js";
import type { NewEntry } from "../new-entries.js";
import type { PiCompaction } from "../pi-compaction-plan.js";
import { autoCompactEntry } from "../session-settings.js";
import { CURRENT_SESSION_VERSION, type SessionEntry } from "../types.js";
import type { EntryStore } from "./entry-store.js";

/** How the suite gets sessions from the store under test. */
export interface EntryStoreContractFactory {
  /** A new session with no entries, in a store the suite may write to. */
  create(): Promise<EntryStore>;
  /** A second, independent handle on the same session (another connection or file handle). */
  reopen(store: EntryStore): Promise<EntryStore>;
  /** Opens a session that does not exist; the suite expects it to fail. Leave out when the store cannot name one. */
  openMissing?(): Promise<EntryStore>;
  /** Called once after the suite (remove files, stop servers). */
  cleanup?(): Promise<void>;
}

const T = 1_767_225_600_000;

/** A user message entry with `text`. */
export function contractUser(text: string): NewEntry {
  return { type: "message", message: { role: "user", content: text, timestamp: T } as PiMessage };
}

/** An assistant message entry with `text`. */
export function contractAssistant(text: string): NewEntry {
  return { type: "message", message: { role: "assistant", content: [{ type: "text", text }], stopReason: "stop", timestamp: T } as PiMessage };
}

/** A compaction that keeps from `firstKeptEntryId`, as planPiCompaction makes them. */
export function contractCompaction(firstKeptEntryId: string, summary = "The user asked for things; the assistant did them."): PiCompaction {
  const details = createCompactionEvent({
    summary,
    messagesCompacted: 2,
    tokensBeforeCompaction: 1000,
    tokensAfterCompaction: 300,
    trigger: "auto",
    boundaryMessageId: firstKeptEntryId,
    strategy: "contract",
  });
  return { summary, firstKeptEntryId, tokensBefore: 1000, details };
}

async function rejects(promise: Promise<unknown>): Promise<CompactionError> {
  try {
    await promise;
  } catch (error) {
    return error as CompactionError;
  }
  throw new Error("expected the call to fail, but it succeeded");
}

/** Registers the contract's `describe` blocks for the store `name` makes. */
export function describeEntryStoreContract(name: string, factory: EntryStoreContractFactory): void {
  const opened: EntryStore[] = [];
  const create = async (): Promise<EntryStore> => {
    const store = await factory.create();
    opened.push(store);
    return store;
  };
  const reopen = async (store: EntryStore): Promise<EntryStore> => {
    const other = await factory.reopen(store);
    opened.push(other);
    return other;
  };
  const seeded = async (...texts: string[]): Promise<{ store: EntryStore; ids: string[] }> => {
    const store = await create();
    const written = await store.append(texts.map((text, i) => (i % 2 === 0 ? contractUser(text) : contractAssistant(text))));
    return { store, ids: written.map((e) => e.id) };
  };

  describe(`EntryStore contract: ${name}`, () => {
    afterAll(async () => {
      for (const store of opened) await store.close().catch(() => undefined);
      await factory.cleanup?.();
    });

    describe("header and an empty session", () => {
      it("has a version 3 session header with an id", async () => {
        const store = await create();
        const header = await store.header();
        expect(header.type).toBe("session");
        expect(header.version).toBe(CURRENT_SESSION_VERSION);
        expect(typeof header.id).toBe("string");
        expect(header.id.length).toBeGreaterThan(0);
        expect(typeof store.kind).toBe("string");
        expect(store.location.length).toBeGreaterThan(0);
      });

      it("has no entries and an empty branch", async () => {
        const store = await create();
        expect(await store.entries()).toStrictEqual([]);
        expect(await store.branch()).toStrictEqual({ entries: [], leafId: null, newestCompactionId: null, compactions: 0, autoCompact: undefined });
        expect(await store.branch({ fromBoundary: true })).toStrictEqual({ entries: [], leafId: null, newestCompactionId: null, compactions: 0, autoCompact: undefined });
      });

      it("never shows a password in its location", async () => {
        const store = await create();
        expect(store.location).not.toMatch(/:\/\/[^/@]*:[^/@]*@/);
      });
    });

    describe("append", () => {
      it("assigns ids, parents (a chain from the leaf) and timestamps, and returns the entries as written", async () => {
        const store = await create();
        const first = await store.append([contractUser("one"), contractAssistant("two")]);
        const second = await store.append([contractUser("three")]);
        expect(first.map((e) => e.parentId)).toStrictEqual([null, first[0]?.id]);
        expect(second[0]?.parentId).toBe(first[1]?.id);
        for (const entry of [...first, ...second]) {
          expect(entry.id).toMatch(/\S/);
          expect(Number.isNaN(Date.parse(entry.timestamp))).toBe(false);
        }
        expect(await store.entries()).toStrictEqual([...first, ...second]);
      });

      it("keeps ids and timestamps the caller gives", async () => {
        const store = await create();
        const [entry] = await store.append([{ ...contractUser("mine"), id: "cafe0001", timestamp: "2026-01-01T00:00:00.000Z" }]);
        expect(entry).toMatchObject({ id: "cafe0001", timestamp: "2026-01-01T00:00:00.000Z", parentId: null });
        expect((await store.entries())[0]).toStrictEqual(entry);
      });

      it("writes after the leaf as the store sees it, not as the caller last read it", async () => {
        const { store } = await seeded("a", "b");
        const other = await reopen(store);
        const mine = await store.append([contractUser("from the first handle")]);
        const theirs = await other.append([contractUser("from the second handle")]);
        expect(theirs[0]?.parentId).toBe(mine[0]?.id);
        expect((await other.branch()).leafId).toBe(theirs[0]?.id);
        expect((await store.branch()).leafId).toBe(theirs[0]?.id);
      });

      it("writes all entries or none: an invalid entry in a batch leaves the session unchanged", async () => {
        const { store } = await seeded("a", "b");
        const before = await store.entries();
        const version = await store.version();
        const error = await rejects(store.append([contractUser("fine"), { type: "message", message: {} } as unknown as NewEntry]));
        expect(error).toBeInstanceOf(CompactionError);
        expect(error.code).toBe(ErrorCodes.INPUT_INVALID);
        expect(await store.entries()).toStrictEqual(before);
        expect(await store.version()).toBe(version);
      });

      it("refuses an id the session already has, writing nothing", async () => {
        const { store, ids } = await seeded("a", "b");
        const before = await store.entries();
        const error = await rejects(store.append([contractUser("c"), { ...contractUser("dup"), id: ids[0] as string }]));
        expect(error.code).toBe(ErrorCodes.INPUT_INVALID);
        expect(await store.entries()).toStrictEqual(before);
      });

      it("refuses a session header as an entry", async () => {
        const store = await create();
        const error = await rejects(store.append([{ type: "session" } as unknown as NewEntry]));
        expect(error.code).toBe(ErrorCodes.INPUT_INVALID);
        expect(await store.entries()).toStrictEqual([]);
      });

      it("appending nothing writes nothing", async () => {
        const { store } = await seeded("a");
        const version = await store.version();
        expect(await store.append([])).toStrictEqual([]);
        expect(await store.version()).toBe(version);
      });

      it("keeps one order and one chain when two handles append at once", async () => {
        const store = await create();
        const other = await reopen(store);
        const writes: Promise<SessionEntry[]>[] = [];
        for (let i = 0; i < 10; i++) {
          writes.push(store.append([contractUser(`a${i}`), contractAssistant(`a${i}'`)]));
          writes.push(other.append([contractUser(`b${i}`)]));
        }
        const written = (await Promise.all(writes)).flat();
        const entries = await store.entries();
        expect(entries).toHaveLength(30);
        expect(new Set(entries.map((e) => e.id))).toStrictEqual(new Set(written.map((e) => e.id)));
        entries.forEach((entry, i) => expect(entry.parentId).toBe(i === 0 ? null : entries[i - 1]?.id));
        expect(await other.entries()).toStrictEqual(entries);
      });
    });

    describe("branch", () => {
      it("is the whole session for a linear history", async () => {
        const { store, ids } = await seeded("a", "b", "c");
        const branch = await store.branch();
        expect(branch.entries).toStrictEqual(await store.entries());
        expect(branch.leafId).toBe(ids[2]);
      });

      it("follows the newest entry's parents when an entry starts a new branch", async () => {
        const { store, ids } = await seeded("a", "b", "c");
        const [fork] = await store.append([{ ...contractUser("fork"), parentId: ids[0] as string }]);
        const [next] = await store.append([contractAssistant("on the fork")]);
        const branch = await store.branch();
        expect(branch.entries.map((e) => e.id)).toStrictEqual([ids[0], fork?.id, next?.id]);
        expect(next?.parentId).toBe(fork?.id);
        expect(await store.entries()).toHaveLength(5);
      });

      it("reads from the boundary the same context as the whole branch", async () => {
        const { store, ids } = await seeded("a", "b", "c", "d");
        const write = await store.appendCompaction(contractCompaction(ids[2] as string), { newestCompactionId: null });
        expect(write.written).toBe(true);
        await store.append([contractUser("e"), contractAssistant("f")]);
        const whole = await store.branch();
        const boundary = await store.branch({ fromBoundary: true });
        expect(boundary.entries.length).toBeLessThan(whole.entries.length);
        expect(boundary.entries.some((e) => e.id === ids[0])).toBe(false);
        expect(whole.entries.slice(whole.entries.length - boundary.entries.length)).toStrictEqual(boundary.entries);
        const fromBoundary = buildContext(boundary.entries);
        const fromWhole = buildContext(whole.entries);
        expect(fromBoundary.messages).toStrictEqual(fromWhole.messages);
        expect(fromBoundary.entryIds).toStrictEqual(fromWhole.entryIds);
        expect({ ...boundary, entries: [] }).toStrictEqual({ ...whole, entries: [] });
      });

      it("records the session's own settings: the newest auto-compaction entry on the branch wins", async () => {
        const { store } = await seeded("a");
        await store.append([autoCompactEntry(false), contractUser("b")]);
        expect((await store.branch()).autoCompact).toBe(false);
        expect((await store.branch({ fromBoundary: true })).autoCompact).toBe(false);
        await store.append([autoCompactEntry(true)]);
        expect((await store.branch({ fromBoundary: true })).autoCompact).toBe(true);
      });
    });

    describe("appendCompaction (conditional)", () => {
      it("writes pi's compaction entry when the newest compaction is still the expected one", async () => {
        const { store, ids } = await seeded("a", "b", "c", "d");
        const compaction = contractCompaction(ids[2] as string);
        const write = await store.appendCompaction(compaction, { newestCompactionId: null });
        if (!write.written) throw new Error("expected the compaction to be written");
        expect(write.entry).toMatchObject({
          type: "compaction",
          parentId: ids[3],
          summary: compaction.summary,
          firstKeptEntryId: ids[2],
          tokensBefore: 1000,
          details: compaction.details,
        });
        const branch = await store.branch();
        expect(branch).toMatchObject({ leafId: write.entry.id, newestCompactionId: write.entry.id, compactions: 1 });
        expect((await store.entries()).at(-1)).toStrictEqual(write.entry);
        const context = buildContext(branch.entries);
        expect(context.messages).toHaveLength(3);
        expect(context.entryIds).toStrictEqual([write.entry.id, ids[2], ids[3]]);
      });

      it("writes nothing when another writer compacted first, and says which compaction is newest", async () => {
        const { store, ids } = await seeded("a", "b", "c", "d");
        const first = await store.appendCompaction(contractCompaction(ids[2] as string), { newestCompactionId: null });
        if (!first.written) throw new Error("expected the first compaction to be written");
        const version = await store.version();
        const second = await store.appendCompaction(contractCompaction(ids[3] as string, "stale"), { newestCompactionId: null });
        expect(second).toStrictEqual({ written: false, newestCompactionId: first.entry.id });
        expect(await store.version()).toBe(version);
        const third = await store.appendCompaction(contractCompaction(ids[3] as string, "next"), { newestCompactionId: first.entry.id });
        expect(third.written).toBe(true);
        expect((await store.branch()).compactions).toBe(2);
      });

      it("writes nothing when the first kept entry is not on the branch", async () => {
        const { store, ids } = await seeded("a", "b", "c");
        await store.append([{ ...contractUser("fork"), parentId: ids[0] as string }]);
        const before = await store.entries();
        const write = await store.appendCompaction(contractCompaction(ids[2] as string), { newestCompactionId: null });
        expect(write).toStrictEqual({ written: false, newestCompactionId: null });
        const missing = await store.appendCompaction(contractCompaction("no-such-entry"), { newestCompactionId: null });
        expect(missing.written).toBe(false);
        expect(await store.entries()).toStrictEqual(before);
      });

      it("compacts once when two handles race from the same state", async () => {
        const { store, ids } = await seeded("a", "b", "c", "d");
        const other = await reopen(store);
        const writes = await Promise.all([
          store.appendCompaction(contractCompaction(ids[2] as string, "mine"), { newestCompactionId: null }),
          other.appendCompaction(contractCompaction(ids[3] as string, "theirs"), { newestCompactionId: null }),
        ]);
        expect(writes.filter((w) => w.written)).toHaveLength(1);
        expect((await store.entries()).filter((e) => e.type === "compaction")).toHaveLength(1);
        expect((await other.branch()).compactions).toBe(1);
      });

      it("refuses a compaction without a summary or first kept entry, writing nothing", async () => {
        const { store, ids } = await seeded("a", "b");
        const before = await store.entries();
        const bad = { ...contractCompaction(ids[1] as string), summary: "" };
        expect((await rejects(store.appendCompaction(bad, { newestCompactionId: null }))).code).toBe(ErrorCodes.INPUT_INVALID);
        const noKept = { ...contractCompaction(ids[1] as string), firstKeptEntryId: undefined } as unknown as PiCompaction;
        expect((await rejects(store.appendCompaction(noKept, { newestCompactionId: null }))).code).toBe(ErrorCodes.INPUT_INVALID);
        expect(await store.entries()).toStrictEqual(before);
      });
    });

    describe("version", () => {
      it("changes on every write, and only then", async () => {
        const { store, ids } = await seeded("a", "b", "c");
        const other = await reopen(store);
        const v1 = await store.version();
        await store.entries();
        await store.branch({ fromBoundary: true });
        expect(await store.version()).toBe(v1);
        await other.append([contractUser("d")]);
        const v2 = await store.version();
        expect(v2).not.toBe(v1);
        await store.appendCompaction(contractCompaction(ids[2] as string), { newestCompactionId: null });
        const v3 = await other.version();
        expect(v3).not.toBe(v2);
        expect(await store.version()).toBe(v3);
      });
    });

    describe("close", () => {
      it("makes further calls fail and leaves the session to other handles", async () => {
        const { store } = await seeded("a");
        const other = await reopen(store);
        await store.close();
        await expect(store.entries()).rejects.toThrow();
        await expect(store.append([contractUser("late")])).rejects.toThrow();
        expect(await other.entries()).toHaveLength(1);
      });
    });

    if (factory.openMissing !== undefined) {
      const openMissing = factory.openMissing;
      describe("errors", () => {
        it("opening a session that does not exist fails with COMPACTION_TRANSCRIPT_NOT_FOUND", async () => {
          const error = await rejects(openMissing());
          expect(error).toBeInstanceOf(CompactionError);
          expect(error.code).toBe(ErrorCodes.TRANSCRIPT_NOT_FOUND);
          expect(error.hint).toBeTruthy();
        });
      });
    }

    describe("search (stores that have it)", () => {
      it("finds an entry by a word and ranks an exact identifier first", async () => {
        const store = await create();
        if (store.search === undefined) return;
        await store.append([
          contractUser("Please look at the parser and its configuration loading."),
          contractAssistant("The configuration loader lives in src/config/load-config.ts and parses YAML."),
          contractUser("What about load config in general? The config is loaded at startup, config config."),
          contractAssistant("Unrelated: the weather is fine."),
        ]);
        const hits = await store.search("load-config.ts", { limit: 5 });
        expect(hits.length).toBeGreaterThan(0);
        expect(JSON.stringify(hits[0]?.entry)).toContain("src/config/load-config.ts");
        const words = await store.search("configuration", { limit: 5 });
        expect(words.map((h) => JSON.stringify(h.entry)).every((t) => t.includes("configuration"))).toBe(true);
        expect(words).toHaveLength(2);
        expect(await store.search("weather", { limit: 1 })).toHaveLength(1);
        for (let i = 1; i < words.length; i++) expect((words[i - 1] as { score: number }).score).toBeGreaterThanOrEqual((words[i] as { score: number }).score);
      });
    });
  });
}
