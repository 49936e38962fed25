import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { ErrorCodes, type PiMessage } from "@compaction/core";
import { rejection } from "@compaction/core/testing";
import type { NewEntry } from "../new-entries.js";
import { contractAssistant, contractUser } from "./entry-store-contract.js";
import { SQLITE_SCHEMA_VERSION } from "./sqlite-schema.js";
import { openSqliteStore, parseSqliteLocation, sqliteLocation } from "./sqlite-store.js";

const { DatabaseSync: Database } = createRequire(import.meta.url)("node:sqlite") as { DatabaseSync: typeof DatabaseSync };
const dir = mkdtempSync(join(tmpdir(), "compaction-sqlite-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let count = 0;
const newFile = () => join(dir, `db${++count}.sqlite`);

const toolCall = (name: string, args: Record<string, unknown>): NewEntry => ({
  type: "message",
  message: { role: "assistant", content: [{ type: "toolCall", id: `call-${name}`, name, arguments: args }], stopReason: "toolUse", timestamp: 1 } as PiMessage,
});
const toolResult = (name: string, text: string): NewEntry => ({
  type: "message",
  message: { role: "toolResult", toolCallId: `call-${name}`, toolName: name, content: [{ type: "text", text }], isError: false, timestamp: 1 } as PiMessage,
});

describe("SqliteStore: many sessions in one database", () => {
  it("keeps each session's entries, leaf, version and search to itself", async () => {
    const file = newFile();
    const a = await openSqliteStore({ file, session: "session-a", create: { cwd: "/a" } });
    const b = await openSqliteStore({ file, session: "session-b", create: { cwd: "/b" } });
    await a.append([contractUser("alpha words"), contractAssistant("more alpha")]);
    await b.append([contractUser("beta words")]);
    expect((await a.entries()).map((e) => e.parentId === null)).toStrictEqual([true, false]);
    expect(await b.entries()).toHaveLength(1);
    expect((await a.header()).cwd).toBe("/a");
    expect((await b.header()).id).toBe("session-b");
    expect(await b.version()).toBe("1");
    expect(await b.search("alpha", { limit: 5 })).toStrictEqual([]);
    expect(await a.search("words", { limit: 5 })).toHaveLength(1);
    await a.close();
    await b.close();
  });

  it("opens an existing session with create without changing it, and names its location sqlite:<file>#<id>", async () => {
    const file = newFile();
    const first = await openSqliteStore({ file, session: "s1", create: { cwd: "/one" } });
    await first.append([contractUser("kept")]);
    const again = await openSqliteStore({ file, session: "s1", create: { cwd: "/other" } });
    expect((await again.header()).cwd).toBe("/one");
    expect(await again.entries()).toHaveLength(1);
    expect(again.location).toBe(sqliteLocation(file, "s1"));
    expect(parseSqliteLocation(again.location)).toStrictEqual({ file, session: "s1" });
    expect(parseSqliteLocation("/tmp/x.jsonl")).toBeUndefined();
    await first.close();
    await again.close();
  });

  it("creates a session with the header fields given, keeping a copied session's creation time, in pi's key order", async () => {
    const file = newFile();
    const fields = { timestamp: "2025-11-20T23:33:50.805Z", cwd: "/work/project", parentSession: "/sessions/parent.jsonl", title: "checkout flow", version: 1 };
    const store = await openSqliteStore({ file, session: "s-copied", create: fields });
    const header = await store.header();
    expect(header).toStrictEqual({ type: "session", version: 3, id: "s-copied", timestamp: "2025-11-20T23:33:50.805Z", cwd: "/work/project", parentSession: "/sessions/parent.jsonl", title: "checkout flow" });
    expect(Object.keys(header)).toStrictEqual(["type", "version", "id", "timestamp", "cwd", "parentSession", "title"]);
    await store.close();
    const db = new Database(file);
    // The session's creation time (what `session list` orders by) is the header's.
    expect(db.prepare("SELECT created FROM compaction_sessions WHERE id = 's-copied'").get()).toMatchObject({ created: "2025-11-20T23:33:50.805Z" });
    db.close();
    const fresh = await openSqliteStore({ file, session: "s-new", create: {} });
    expect(Date.now() - Date.parse((await fresh.header()).timestamp)).toBeLessThan(60_000);
    expect((await fresh.header()).cwd).toBe(process.cwd());
    await fresh.close();
  });

  it("runs in WAL mode with synchronous FULL", async () => {
    const file = newFile();
    const store = await openSqliteStore({ file, create: {} });
    await store.close();
    const db = new Database(file);
    expect(db.prepare("PRAGMA journal_mode").get()).toMatchObject({ journal_mode: "wal" });
    db.close();
  });
});

describe("SqliteStore.search", () => {
  it("ranks the entry holding an identifier as typed above entries that only share its words", async () => {
    const store = await openSqliteStore({ file: newFile(), create: {} });
    await store.append([
      contractUser("theme selector theme selector: the theme and the selector, theme theme selector ts ts"),
      toolCall("read", { path: "src/ui/theme-selector.ts" }),
      toolResult("read", "export function pickTheme() {}"),
      contractAssistant("Unrelated words about the weather."),
    ]);
    const hits = await store.search("theme-selector.ts", { limit: 3 });
    expect(hits[0]?.entry.type).toBe("message");
    expect(JSON.stringify(hits[0]?.entry)).toContain("src/ui/theme-selector.ts");
    expect(hits).toHaveLength(2);
    const result = await store.search("pickTheme", { limit: 3 });
    expect(JSON.stringify(result[0]?.entry)).toContain("toolResult");
    expect(await store.search("   ", { limit: 3 })).toStrictEqual([]);
    expect((await rejection(store.search("x", { limit: 0 }))).code).toBe(ErrorCodes.INPUT_INVALID);
    await store.close();
  });

  it("finds compaction summaries and leaves settings entries out", async () => {
    const store = await openSqliteStore({ file: newFile(), create: {} });
    const written = await store.append([contractUser("first"), contractAssistant("second"), { type: "custom", customType: "x", data: { note: "hidden-setting" } }]);
    await store.appendCompaction(
      { summary: "The user migrated the billing module.", firstKeptEntryId: written[1]?.id as string, tokensBefore: 10, details: {} as never },
      { newestCompactionId: null },
    );
    expect((await store.search("billing", { limit: 2 }))[0]?.entry.type).toBe("compaction");
    expect(await store.search("hidden", { limit: 2 })).toStrictEqual([]);
    await store.close();
  });
});

describe("SqliteStore errors", () => {
  it("a missing database file without create: COMPACTION_TRANSCRIPT_NOT_FOUND, and no file is made", async () => {
    const file = join(dir, "nowhere", "x.sqlite");
    const error = await rejection(openSqliteStore({ file, session: "s" }));
    expect(error).toMatchObject({ code: ErrorCodes.TRANSCRIPT_NOT_FOUND });
    expect(error.message).toContain(file);
  });

  it.each([
    ["a timestamp that is not a time", { timestamp: "yesterday" }, '`create.timestamp` must be an ISO 8601 time, but it is "yesterday"'],
    ["a cwd that is not a path", { cwd: 42 }, "`create.cwd` must be a directory path, but it is 42"],
    ["a parentSession that is not a path", { parentSession: {} }, "`create.parentSession` must be a session file path, but it is {}"],
  ])("create with %s: COMPACTION_INPUT_INVALID naming the field, and no file is made", async (_name, create, says) => {
    const file = join(dir, "never", `${count++}.sqlite`);
    const error = await rejection(openSqliteStore({ file, session: "s", create: create as never }));
    expect(error).toMatchObject({ code: ErrorCodes.INPUT_INVALID });
    expect(error.message).toBe(`Cannot create session s in ${file}: ${says}.`);
    expect(existsSync(file)).toBe(false);
  });

  it("a session that does not exist: COMPACTION_TRANSCRIPT_NOT_FOUND naming a similar id", async () => {
    const file = newFile();
    (await openSqliteStore({ file, session: "checkout-flow", create: {} })).close();
    const error = await rejection(openSqliteStore({ file, session: "checkout-flwo" }));
    expect(error).toMatchObject({ code: ErrorCodes.TRANSCRIPT_NOT_FOUND });
    expect(error.message).toContain('"checkout-flwo"');
    expect(error.message).toContain('"checkout-flow"');
  });

  it("a file that is not a database: COMPACTION_TRANSCRIPT_CORRUPT, the file unchanged", async () => {
    const file = join(dir, "notes.sqlite");
    writeFileSync(file, "these are notes, not a database\n".repeat(200));
    const error = await rejection(openSqliteStore({ file, session: "s", create: {} }));
    expect(error).toMatchObject({ code: ErrorCodes.TRANSCRIPT_CORRUPT });
    expect(error.hint).toBeTruthy();
  });

  it("a database from a newer schema: refused, naming both versions, and left as it was", async () => {
    const file = newFile();
    (await openSqliteStore({ file, session: "s", create: {} })).close();
    const db = new Database(file);
    db.prepare("UPDATE compaction_meta SET value = ? WHERE key = 'schema_version'").run(String(SQLITE_SCHEMA_VERSION + 1));
    db.close();
    const error = await rejection(openSqliteStore({ file, session: "s" }));
    expect(error).toMatchObject({ code: ErrorCodes.TRANSCRIPT_INVALID });
    expect(error.message).toContain(`schema version ${SQLITE_SCHEMA_VERSION + 1}`);
    expect(error.message).toContain(`reads schema version ${SQLITE_SCHEMA_VERSION}`);
    const after = new Database(file);
    expect(after.prepare("SELECT value FROM compaction_meta").get()).toMatchObject({ value: String(SQLITE_SCHEMA_VERSION + 1) });
    after.close();
  });

  it("an entry naming a parent that is not in the session: nothing of the batch is written", async () => {
    const store = await openSqliteStore({ file: newFile(), create: {} });
    await store.append([contractUser("a")]);
    const error = await rejection(store.append([contractUser("b"), { ...contractUser("c"), parentId: "nope" }]));
    expect(error).toMatchObject({ code: ErrorCodes.INPUT_INVALID });
    expect(error.message).toContain('"nope"');
    expect(await store.entries()).toHaveLength(1);
    expect(await store.version()).toBe("1");
    expect(await store.search("b", { limit: 5 })).toStrictEqual([]);
    await store.close();
  });
});
