import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { type CompactionResult, createCompactionEvent, ErrorCodes, type PiMessage } from "@compaction/core";
import { appendCompaction, appendEntries } from "./append.js";
import type { NewEntry } from "./new-entries.js";
import { withSessionLock } from "./session-lock.js";
import { upgradeSession } from "./upgrade.js";
import { buildContext } from "./context.js";
import { readSession } from "./parse.js";
import { createSession } from "./session-file.js";
import { SessionTree } from "./tree.js";
import type { CompactionEntry } from "./types.js";
import { rejection } from "@compaction/core/testing";

const PI_LARGE = fileURLToPath(new URL("../../../shared/fixtures/real/pi-large-session.jsonl", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "compaction-append-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileCount = 0;
const newPath = () => join(dir, `s${++fileCount}.jsonl`);

const user = (text: string): NewEntry => ({ type: "message", message: { role: "user", content: text, timestamp: 1_767_225_600_000 } });
const assistant = (text: string): NewEntry => ({
  type: "message",
  message: { role: "assistant", content: [{ type: "text", text }], stopReason: "stop", timestamp: 1_767_225_601_000 },
});

async function session(...texts: string[]): Promise<{ path: string; ids: string[] }> {
  const path = newPath();
  const created = await createSession(path, { cwd: "/project" }, texts.map((text, i) => (i % 2 === 0 ? user(text) : assistant(text))));
  return { path, ids: created.entries.map((entry) => entry.id) };
}


function compacted(summary: string): CompactionResult<PiMessage> {
  const event = createCompactionEvent({
    summary,
    messagesCompacted: 2,
    tokensBeforeCompaction: 1200,
    tokensAfterCompaction: 300,
    trigger: "manual",
    strategy: "test",
  });
  return { status: "compacted", messages: [], summary, cut: null, event, tokensBefore: 1200, tokensAfter: 300, warnings: [], reason: null, error: null };
}

describe("appendEntries", () => {
  it("links the first new entry to the current leaf and each next one to the one before", async () => {
    const { path, ids } = await session("one", "two");
    const written = await appendEntries(path, [user("three"), assistant("four")]);
    expect(written.map((entry) => entry.parentId)).toEqual([ids[1], written[0]?.id]);
    const read = readSession(path);
    expect(read.entries.map((entry) => entry.id)).toEqual([...ids, ...written.map((entry) => entry.id)]);
    expect(new SessionTree(read.entries).leaf?.id).toBe(written[1]?.id);
  });

  it("assigns 8-hex-digit ids and ISO timestamps, and keeps ones the caller gave", async () => {
    const { path } = await session("one");
    const [fresh, given] = await appendEntries(path, [user("a"), { ...user("b"), id: "cafe0001", timestamp: "2026-02-03T04:05:06.000Z" }]);
    expect(fresh?.id).toMatch(/^[0-9a-f]{8}$/);
    expect(new Date(fresh?.timestamp ?? "").toISOString()).toBe(fresh?.timestamp);
    expect(given).toMatchObject({ id: "cafe0001", timestamp: "2026-02-03T04:05:06.000Z", parentId: fresh?.id });
  });

  it("appends after an earlier entry when parentId is given, starting a new branch", async () => {
    const { path, ids } = await session("one", "two", "three");
    const [entry] = await appendEntries(path, [user("other")], { parentId: ids[0] });
    const tree = new SessionTree(readSession(path).entries);
    expect(tree.branch().map((e) => e.id)).toEqual([ids[0], entry?.id]);
  });

  it("refuses a parentId that names no entry, suggesting similar ids, and leaves the file as it was", async () => {
    const { path, ids } = await session("one", "two");
    const before = readFileSync(path);
    const error = await rejection(appendEntries(path, [user("x")], { parentId: `${ids[0]?.slice(0, 6)}zz` }));
    expect(error.code).toBe(ErrorCodes.TRANSCRIPT_INVALID);
    expect(error.message).toContain(`\`${ids[0]}\``);
    expect(readFileSync(path)).toEqual(before);
  });

  it("reads the leaf from the end of a long file whose last line is longer than a read block", async () => {
    const { path } = await session(...Array.from({ length: 200 }, (_, i) => `message ${i} ${"x".repeat(900)}`));
    const [big] = await appendEntries(path, [user("y".repeat(300_000))]);
    const [next] = await appendEntries(path, [user("after")]);
    expect(next?.parentId).toBe(big?.id);
  });

  it("passes over a complete line that does not parse when finding the leaf, as pi does", async () => {
    const { path, ids } = await session("one", "two");
    appendFileSync(path, "this line is damaged\n");
    const [entry] = await appendEntries(path, [user("three")]);
    expect(entry?.parentId).toBe(ids[1]);
  });

  it("moves half a line a crash left to <file>.incomplete, so the session loads without skipping anything", async () => {
    const { path, ids } = await session("one", "two");
    const fragment = '{"type":"message","id":"deadbeef","parentId":"';
    const whole = readFileSync(path);
    appendFileSync(path, fragment);
    const setAside: unknown[] = [];
    const [entry] = await appendEntries(path, [user("three")], { onSetAside: (aside) => setAside.push(aside) });
    const after = readFileSync(path);
    expect(after.subarray(0, whole.length)).toEqual(whole);
    expect(readFileSync(`${path}.incomplete`, "utf8")).toBe(`${fragment}\n`);
    expect(setAside).toEqual([{ path: `${path}.incomplete`, bytes: Buffer.byteLength(fragment) }]);
    expect(entry?.parentId).toBe(ids[1]);
    const read = readSession(path);
    expect(read.skipped).toEqual([]);
    expect(read.entries.map((e) => e.id)).toEqual([...ids, entry?.id]);
  });

  it("takes an entry line that only lacks its final newline as the leaf and ends it before appending", async () => {
    const path = newPath();
    const header = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}';
    const last = '{"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}';
    writeFileSync(path, `${header}\n${last}`);
    const [entry] = await appendEntries(path, [user("next")]);
    expect(entry?.parentId).toBe("aaaa0001");
    expect(readFileSync(path, "utf8").split("\n")[1]).toBe(last);
    expect(readSession(path).skipped).toEqual([]);
  });

  it("appends the first entry of a session holding only a header as a root", async () => {
    const { path } = await session();
    const [entry] = await appendEntries(path, [user("first")]);
    expect(entry?.parentId).toBeNull();
  });

  it("refuses a version 1 file, saying how to upgrade it, and does not change it", async () => {
    const path = newPath();
    copyFileSync(PI_LARGE, path);
    const error = await rejection(appendEntries(path, [user("x")]));
    expect(error.code).toBe(ErrorCodes.TRANSCRIPT_INVALID);
    expect(error.message).toContain("version 1");
    expect(error.hint).toContain("upgradeSession");
    expect(readFileSync(path).equals(readFileSync(PI_LARGE))).toBe(true);
  });

  it("reads a header line longer than its first read steps, with characters the steps cut", async () => {
    const path = newPath();
    const cwd = `/p/${"é日🎉".repeat(3000)}`;
    writeFileSync(path, `${JSON.stringify({ type: "session", version: 3, id: "h1", timestamp: "2026-01-01T00:00:00.000Z", cwd })}\n`);
    await appendEntries(path, [user("after a long header")]);
    const read = readSession(path);
    expect(read.header.cwd).toBe(cwd);
    expect(read.entries).toHaveLength(1);
  });

  it("refuses a file whose first line is not a session header", async () => {
    const path = newPath();
    writeFileSync(path, '{"type":"message","id":"a"}\n');
    expect((await rejection(appendEntries(path, [user("x")]))).code).toBe(ErrorCodes.TRANSCRIPT_INVALID);
  });

  it("fails with COMPACTION_TRANSCRIPT_NOT_FOUND for a file that does not exist", async () => {
    expect((await rejection(appendEntries(join(dir, "missing.jsonl"), [user("x")]))).code).toBe(ErrorCodes.TRANSCRIPT_NOT_FOUND);
  });

  it("rejects an entry that is not one (a second header, a message without a role) before writing", async () => {
    const { path } = await session("one");
    const before = readFileSync(path);
    const header = { type: "session", id: "x" } as unknown as NewEntry;
    const noRole = { type: "message", message: { content: "x" } } as unknown as NewEntry;
    expect((await rejection(appendEntries(path, [user("ok"), header]))).code).toBe(ErrorCodes.INPUT_INVALID);
    expect((await rejection(appendEntries(path, [noRole]))).code).toBe(ErrorCodes.INPUT_INVALID);
    expect(readFileSync(path)).toEqual(before);
  });

  it("refuses a given id the session already uses", async () => {
    const { path, ids } = await session("one");
    expect((await rejection(appendEntries(path, [{ ...user("x"), id: ids[0] as string }]))).code).toBe(ErrorCodes.INPUT_INVALID);
  });
});

describe("the session lock", () => {
  it("fails with COMPACTION_TRANSCRIPT_LOCKED when another writer holds the lock past the timeout", async () => {
    const { path } = await session("one");
    let release!: () => void;
    const held = withSessionLock(path, () => new Promise<void>((resolve) => (release = resolve)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const error = await rejection(appendEntries(path, [user("x")], { lock: { timeoutMs: 300 } }));
    release();
    await held;
    expect(error.code).toBe(ErrorCodes.TRANSCRIPT_LOCKED);
    expect(error.hint).toContain(`${path}.lock`);
  });

  it("takes over a lock a crashed process left behind once it is stale", async () => {
    const { path } = await session("one");
    mkdirSync(`${path}.lock`);
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${path}.lock`, old, old);
    const [entry] = await appendEntries(path, [user("x")], { lock: { staleMs: 2_000 } });
    expect(readSession(path).entries.at(-1)?.id).toBe(entry?.id);
  });

  it("serialises appends from one process: none is lost and they form one chain", async () => {
    const { path, ids } = await session("root");
    const written = await Promise.all(Array.from({ length: 20 }, (_, i) => appendEntries(path, [user(`m${i}`)])));
    const entries = readSession(path).entries;
    expect(entries).toHaveLength(21);
    expect(new Set(written.flat().map((e) => e.id)).size).toBe(20);
    entries.forEach((entry, i) => expect(entry.parentId).toBe(i === 0 ? null : entries[i - 1]?.id));
    expect(entries[0]?.id).toBe(ids[0]);
  });
});

describe("appendCompaction", () => {
  it("writes pi's compaction entry with the CompactionEvent as details, and the context follows the boundary rule", async () => {
    const { path, ids } = await session("one", "two", "three", "four");
    const result = compacted("Summary of one and two.");
    const entry = await appendCompaction(path, result, { firstKeptEntryId: ids[2] as string });
    expect(entry).toMatchObject({
      type: "compaction",
      parentId: ids[3],
      summary: "Summary of one and two.",
      firstKeptEntryId: ids[2],
      tokensBefore: 1200,
      details: result.event,
    });
    const raw = JSON.parse(readFileSync(path, "utf8").trimEnd().split("\n").at(-1) as string) as CompactionEntry;
    expect(Object.keys(raw).slice(0, 4)).toEqual(["type", "id", "parentId", "timestamp"]);
    const context = buildContext(readSession(path).entries);
    expect(context.entryIds).toEqual([entry.id, ids[2], ids[3]]);
    expect(context.messages[0]).toMatchObject({ role: "compactionSummary", summary: "Summary of one and two.", tokensBefore: 1200 });
  });

  it("uses the tokensBefore it is given over the result's", async () => {
    const { path, ids } = await session("one", "two");
    const entry = await appendCompaction(path, compacted("s"), { firstKeptEntryId: ids[1] as string, tokensBefore: 4321 });
    expect(entry.tokensBefore).toBe(4321);
  });

  it("refuses a firstKeptEntryId that is not on the branch being extended, leaving the file unchanged", async () => {
    const { path, ids } = await session("one", "two");
    await appendEntries(path, [user("side")], { parentId: ids[0] });
    const before = readFileSync(path);
    const error = await rejection(appendCompaction(path, compacted("s"), { firstKeptEntryId: ids[1] as string }));
    expect(error.code).toBe(ErrorCodes.INPUT_INVALID);
    expect(error.message).toContain(`"${ids[1]}" is not on the branch`);
    expect(readFileSync(path)).toEqual(before);
  });

  it("refuses a result that did not compact", async () => {
    const { path, ids } = await session("one");
    const noop: CompactionResult<PiMessage> = { ...compacted("s"), status: "noop", event: null, summary: null };
    expect((await rejection(appendCompaction(path, noop, { firstKeptEntryId: ids[0] as string }))).code).toBe(ErrorCodes.INPUT_INVALID);
  });
});

describe("upgradeSession", () => {
  it("rewrites a version 1 file as version 3 with the reader's ids, keeping the original as .bak", async () => {
    const path = newPath();
    copyFileSync(PI_LARGE, path);
    const migrated = readSession(path);
    const upgraded = await upgradeSession(path);
    expect(upgraded).toEqual({ path, fromVersion: 1, backupPath: `${path}.bak` });
    expect(readFileSync(`${path}.bak`).equals(readFileSync(PI_LARGE))).toBe(true);
    const read = readSession(path);
    expect(read.version).toBe(3);
    expect(read.entries).toEqual(migrated.entries);
    const [entry] = await appendEntries(path, [user("after the upgrade")]);
    expect(entry?.parentId).toBe(migrated.entries.at(-1)?.id);
  });

  it("keeps a line that is not an entry where it was", async () => {
    const path = newPath();
    const lines = readFileSync(PI_LARGE, "utf8").split("\n").slice(0, 6);
    lines.splice(3, 0, "garbage that is not JSON");
    writeFileSync(path, `${lines.join("\n")}\n`);
    await upgradeSession(path);
    expect(readFileSync(path, "utf8").split("\n")[3]).toBe("garbage that is not JSON");
  });

  it("leaves a version 3 file alone", async () => {
    const { path } = await session("one");
    const before = readFileSync(path);
    expect(await upgradeSession(path)).toEqual({ path, fromVersion: 3, backupPath: null });
    expect(readFileSync(path)).toEqual(before);
  });
});
