/**
 * The Postgres store against a real server (src/test-support/global-setup.ts): the store
 * contract (appends, branches, conditional compaction, settings, version, search) and a real
 * pi session moved in and read back unchanged.
 */
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { type CompactionEvent, ErrorCodes } from "@compaction/core";
import { autoCompactEntry, buildContext, type NewEntry, type PiCompaction, readSession, type SessionEntry } from "@compaction/transcript";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresStore, type PostgresStore } from "./index.js";
import { freshDatabase, skipReason } from "./test-support/database.js";

const LARGE_SESSION = fileURLToPath(new URL("../../../examples/sessions/pi-large-session.jsonl", import.meta.url));

function user(text: string): NewEntry {
  return { type: "message", message: { role: "user", content: text, timestamp: Date.now() } };
}

function assistant(text: string): NewEntry {
  return {
    type: "message",
    message: { role: "assistant", content: [{ type: "text", text }], api: "x", provider: "x", model: "m", usage: {}, stopReason: "stop", timestamp: Date.now() },
  } as unknown as NewEntry;
}

function compaction(firstKeptEntryId: string, summary = "The user asked about things."): PiCompaction {
  return { summary, firstKeptEntryId, tokensBefore: 1234, details: { strategy: "test" } as unknown as CompactionEvent };
}

describe.skipIf(skipReason !== undefined)(`Postgres store${skipReason === undefined ? "" : ` (skipped: ${skipReason})`}`, () => {
  let url = "";
  const opened: PostgresStore[] = [];
  async function open(session: string, create = true): Promise<PostgresStore> {
    const store = await openPostgresStore({ connectionString: url, session, create });
    opened.push(store);
    return store;
  }

  beforeAll(async () => {
    url = await freshDatabase("store");
  });
  afterAll(async () => {
    for (const store of opened) await store.close();
  });

  it("creates a session whose location names host, port, database and session but no password", async () => {
    const store = await open("s-location");
    const parsed = new URL(url);
    expect(store.kind).toBe("postgres");
    expect(store.location).toBe(`postgres://${parsed.hostname}:${parsed.port}${parsed.pathname}#s-location`);
    expect(store.location).not.toContain(parsed.password);
    const header = await store.header();
    expect(header).toMatchObject({ type: "session", id: "s-location", version: 3 });
    expect(await store.entries()).toEqual([]);
    expect(await store.branch()).toEqual({ entries: [], leafId: null, newestCompactionId: null, compactions: 0, autoCompact: undefined });
  });

  it("creates a session with the header fields given, a copied session's creation time kept, the version current", async () => {
    const fields = { timestamp: "2025-11-20T23:33:50.805Z", cwd: "/work/project", parentSession: "/sessions/parent.jsonl", title: "checkout", version: 1 };
    const store = await openPostgresStore({ connectionString: url, session: "s-header", create: fields });
    opened.push(store);
    expect(await store.header()).toStrictEqual({ type: "session", version: 3, id: "s-header", timestamp: "2025-11-20T23:33:50.805Z", cwd: "/work/project", parentSession: "/sessions/parent.jsonl", title: "checkout" });
  });

  it("refuses a create timestamp that is not a time, naming the field, and creates no session", async () => {
    let thrown: unknown;
    try {
      await openPostgresStore({ connectionString: url, session: "s-bad-time", create: { timestamp: "yesterday" } });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: ErrorCodes.INPUT_INVALID });
    expect((thrown as Error).message).toMatch(/^Cannot create session s-bad-time in postgres:\/\/.*#s-bad-time: `create\.timestamp` must be an ISO 8601 time, but it is "yesterday"\.$/);
    await expect(openPostgresStore({ connectionString: url, session: "s-bad-time" })).rejects.toMatchObject({ code: ErrorCodes.TRANSCRIPT_NOT_FOUND });
  });

  it("appends after the leaf, chains parents, assigns ids and timestamps, and changes the version", async () => {
    const store = await open("s-append");
    const v0 = await store.version();
    const first = await store.append([user("hello"), assistant("hi")]);
    const v1 = await store.version();
    const second = await store.append([user("again")]);
    expect(v1).not.toBe(v0);
    expect(await store.version()).not.toBe(v1);
    expect(first[0]?.parentId).toBeNull();
    expect(first[1]?.parentId).toBe(first[0]?.id);
    expect(second[0]?.parentId).toBe(first[1]?.id);
    for (const entry of [...first, ...second]) {
      expect(entry.id).toMatch(/^[0-9a-f]{8}$/);
      expect(Number.isNaN(Date.parse(entry.timestamp))).toBe(false);
    }
    expect(await store.entries()).toEqual([...first, ...second]);
    const branch = await store.branch();
    expect(branch.leafId).toBe(second[0]?.id);
    expect(branch.entries).toEqual([...first, ...second]);
    // A second store on the same session sees the same.
    const other = await open("s-append", false);
    expect(await other.entries()).toEqual([...first, ...second]);
    expect(await other.version()).toBe(await store.version());
  });

  it("writes all of an append or nothing: a bad entry or a reused id leaves the session as it was", async () => {
    const store = await open("s-atomic");
    const [kept] = await store.append([user("one")]);
    const before = await store.version();
    await expect(store.append([user("two"), { type: "message" } as unknown as NewEntry])).rejects.toThrow(/New entry 1 is not a session entry/);
    await expect(store.append([user("two"), { ...user("three"), id: kept?.id } as NewEntry])).rejects.toThrow(/already uses/);
    await expect(store.append([{ ...user("x"), parentId: "nope0000" } as NewEntry])).rejects.toThrow(/not an entry of the session/);
    expect(await store.version()).toBe(before);
    expect(await store.entries()).toEqual([kept]);
  });

  it("appends a compaction only when the newest compaction is still the expected one", async () => {
    const store = await open("s-compact");
    const written = await store.append([user("a"), assistant("b"), user("c"), assistant("d")]);
    const kept = written[2]?.id as string;
    const first = await store.appendCompaction(compaction(kept), { newestCompactionId: null });
    expect(first.written).toBe(true);
    if (!first.written) return;
    expect(first.entry).toMatchObject({ type: "compaction", firstKeptEntryId: kept, tokensBefore: 1234, parentId: written[3]?.id });
    // A second worker planned from the same state: nothing written, told what is newest now.
    const second = await store.appendCompaction(compaction(kept), { newestCompactionId: null });
    expect(second).toEqual({ written: false, newestCompactionId: first.entry.id });
    // A first kept entry that is not on the branch: declined, nothing written.
    expect(await store.appendCompaction(compaction("zzzzzzzz"), { newestCompactionId: first.entry.id })).toEqual({ written: false, newestCompactionId: first.entry.id });
    const more = await store.append([user("e"), assistant("f")]);
    const third = await store.appendCompaction(compaction(more[0]?.id as string, "Second summary."), { newestCompactionId: first.entry.id });
    expect(third.written).toBe(true);
    const branch = await store.branch();
    expect(branch.compactions).toBe(2);
    expect(branch.newestCompactionId).toBe(third.written ? third.entry.id : "");
    expect((await store.entries()).length).toBe(8); // 4, a compaction, 2, a compaction
  });

  it("reads the branch from the boundary with the same context as the whole branch", async () => {
    const store = await open("s-boundary");
    const early = await store.append([user("old question"), assistant("old answer"), user("kept question"), assistant("kept answer")]);
    const result = await store.appendCompaction(compaction(early[2]?.id as string), { newestCompactionId: null });
    await store.append([user("new question"), assistant("new answer")]);
    const whole = await store.branch();
    const boundary = await store.branch({ fromBoundary: true });
    expect(boundary.entries.length).toBeLessThan(whole.entries.length);
    expect(boundary.entries[0]?.id).toBe(early[2]?.id);
    expect(boundary.newestCompactionId).toBe(result.written ? result.entry.id : "");
    expect(boundary.compactions).toBe(1);
    expect(buildContext(boundary.entries).messages).toEqual(buildContext(whole.entries).messages);
    expect(buildContext(whole.entries).messages.length).toBe(5); // summary, kept pair, new pair
  });

  it("keeps the session's auto-compaction setting, the latest on the branch", async () => {
    const store = await open("s-settings");
    await store.append([user("x"), autoCompactEntry(false)]);
    expect((await store.branch()).autoCompact).toBe(false);
    await store.append([autoCompactEntry(true), user("y")]);
    expect((await store.branch()).autoCompact).toBe(true);
    expect((await store.branch({ fromBoundary: true })).autoCompact).toBe(true);
  });

  it("follows a branch made by an explicit parent: the leaf is the entry written last", async () => {
    const store = await open("s-branches");
    const main = await store.append([user("root"), assistant("a1"), user("q2")]);
    const side = await store.append([{ ...user("other q2"), parentId: main[1]?.id } as NewEntry, assistant("other a2")]);
    const branch = await store.branch();
    expect(branch.entries.map((entry) => entry.id)).toEqual([main[0]?.id, main[1]?.id, side[0]?.id, side[1]?.id]);
    expect((await store.entries()).length).toBe(5);
  });

  it("searches with Postgres full-text search, entries holding the query as typed first", async () => {
    const store = await open("s-search");
    const written = await store.append([
      user("The theme picker and the selector of themes: theme, selector, theme again and selector again."),
      assistant("I changed src/theme-selector.ts to read the config."),
      user("Unrelated: the weather is nice."),
      assistant("Compaction keeps the session inside the window."),
    ]);
    const exact = await store.search("theme-selector.ts", { limit: 5 });
    expect(exact[0]?.entry.id).toBe(written[1]?.id);
    expect(exact[0]?.score).toBeGreaterThanOrEqual(1);
    expect(exact.map((hit) => hit.entry.id)).toContain(written[0]?.id);
    expect((exact[1]?.score ?? 0) < 1).toBe(true);
    // Words of a path are found alone, a word prefix finds longer words, case does not matter.
    expect((await store.search("selector", { limit: 5 })).map((hit) => hit.entry.id)).toContain(written[1]?.id);
    expect((await store.search("COMPACT", { limit: 5 })).map((hit) => hit.entry.id)).toEqual([written[3]?.id]);
    expect(await store.search("nothing-like-this", { limit: 5 })).toEqual([]);
    expect(await store.search("  ", { limit: 5 })).toEqual([]);
    expect(await store.search("weather", { limit: 1 })).toHaveLength(1);
    await expect(store.search("x", { limit: 0 })).rejects.toThrow(/limit/);
  });

  it("holds a real pi session moved in with its ids, and gives it back unchanged", async () => {
    const parsed = readSession(LARGE_SESSION);
    const { type: _type, id: _id, ...header } = parsed.header;
    const store = await openPostgresStore({ connectionString: url, session: "s-real", create: header });
    opened.push(store);
    const written: SessionEntry[] = [];
    for (let i = 0; i < parsed.entries.length; i += 200) written.push(...(await store.append(parsed.entries.slice(i, i + 200) as unknown as NewEntry[])));
    const back = await store.entries();
    // The same entries, and each one's JSON exactly as written (json, not jsonb: key order kept).
    const differing = back.filter((entry, index) => JSON.stringify(entry) !== JSON.stringify(written[index])).map((entry) => entry.id);
    expect(differing).toEqual([]);
    expect(back.length).toBe(parsed.entries.length);
    expect(back.every((entry, index) => isDeepStrictEqual(entry, parsed.entries[index]))).toBe(true);
    expect(await store.header()).toEqual({ ...parsed.header, id: "s-real", version: 3 }); // the entries were migrated to version 3 when read
    const branch = await store.branch({ fromBoundary: true });
    expect(buildContext(branch.entries).messages).toEqual(buildContext(parsed.entries).messages);
    const hits = await store.search("theme-selector.ts", { limit: 5 });
    expect(hits.length).toBe(5);
    const holding = parsed.entries.filter((entry) => JSON.stringify(entry).includes("theme-selector.ts")).length;
    expect(holding).toBeGreaterThan(0);
    // Entries holding the path come first (score >= 1), each of them holding it.
    const exact = hits.filter((hit) => hit.score >= 1);
    expect(exact.length).toBe(Math.min(5, holding));
    for (const hit of exact) expect(JSON.stringify(hit.entry)).toContain("theme-selector.ts");
  });

  it("shares one pool among the stores opened with one connection string, ended with the last", async () => {
    // A connection string of its own (the other tests' stores share theirs), named in pg_stat_activity.
    const own = `${url}?application_name=pool_test`;
    const many = await Promise.all(Array.from({ length: 60 }, (_, i) => openPostgresStore({ connectionString: own, session: `s-pool-${i}`, create: true })));
    await Promise.all(many.map((store, i) => store.append([user(`hello ${i}`)])));
    const counter = new pg.Client({ connectionString: url });
    await counter.connect();
    const connections = async () =>
      (await counter.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'pool_test'")).rows[0]?.n;
    expect(await connections()).toBeLessThanOrEqual(10);
    expect(await connections()).toBeGreaterThan(0);
    for (const store of many) await store.close();
    for (let i = 0; i < 100 && (await connections()) !== 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await connections()).toBe(0);
    await counter.end();
  });

  it("takes the session from a connection string's #fragment, as --session names one", async () => {
    const made = await openPostgresStore({ connectionString: `${url}#s-fragment`, create: true });
    opened.push(made);
    expect(made.sessionId).toBe("s-fragment");
    expect(made.location.endsWith("#s-fragment")).toBe(true);
    const again = await openPostgresStore({ connectionString: `${url}#s-fragment` });
    opened.push(again);
    expect((await again.header()).id).toBe("s-fragment");
  });

  it("fails clearly once closed", async () => {
    const store = await openPostgresStore({ connectionString: url, session: "s-closed", create: true });
    await store.close();
    await expect(store.entries()).rejects.toThrow(/closed/);
    await store.close();
  });
});

