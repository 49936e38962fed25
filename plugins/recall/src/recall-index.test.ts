import { appendFileSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appendEntries } from "@compaction/transcript";
import { ErrorCodes } from "@compaction/core";
import { describe, expect, it } from "vitest";
import { bm25Scorer } from "./bm25-scorer.js";
import { INDEX_SUFFIX } from "./index-file.js";
import { openRecallIndex, type RecallProgress } from "./recall-index.js";
import { append, assistant, sessionWith, tempDir, toolResult, user } from "./test-support/sessions.js";

const ids = (hits: readonly { entryId: string }[]) => hits.map((hit) => hit.entryId);

describe("openRecallIndex: building", () => {
  it("finds a user message by a word in it, with the entry id, timestamp, role and a snippet", async () => {
    const { path, ids: [first] } = await sessionWith([user("the flaky websocket reconnect test fails on CI"), assistant("looking")]);
    const index = await openRecallIndex(path);
    const [hit, ...rest] = await index.search("websocket");
    expect(rest).toEqual([]);
    expect(hit).toMatchObject({ entryId: first, role: "user", snippet: "the flaky websocket reconnect test fails on CI" });
    expect(hit?.timestamp).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(hit?.score).toBeGreaterThan(0);
  });

  it("indexes tool call names and arguments, and tool output with its tool name", async () => {
    const { path, ids: entryIds } = await sessionWith([
      user("check the config"),
      assistant("reading it", [{ id: "c1", name: "read", args: { path: "src/settings/loader.ts" } }]),
      toolResult("c1", "export const RETRY_BUDGET = 7;", "read"),
    ]);
    const index = await openRecallIndex(path);
    expect(ids(await index.search("loader.ts"))).toEqual([entryIds[1]]);
    const [output] = await index.search("RETRY_BUDGET");
    expect(output).toMatchObject({ entryId: entryIds[2], role: "toolResult" });
    expect(output?.snippet).toContain("[read]");
  });

  it("indexes compaction and branch summaries and custom messages under their entry type", async () => {
    const { path, ids: [first] } = await sessionWith([user("start")]);
    const written = await appendEntries(path, [
      { type: "compaction", summary: "## Goal\nMigrate the billing service to gRPC", firstKeptEntryId: first as string, tokensBefore: 1000 },
      { type: "branch_summary", summary: "Tried the kafka approach and abandoned it", fromId: first as string },
      { type: "custom_message", customType: "note", content: "remember the quarterly freeze", display: true },
      { type: "model_change", provider: "anthropic", modelId: "claude-sonnet-4-5" },
    ]);
    const index = await openRecallIndex(path);
    expect((await index.search("billing"))[0]).toMatchObject({ entryId: written[0]?.id, role: "compaction" });
    expect((await index.search("kafka"))[0]).toMatchObject({ entryId: written[1]?.id, role: "branch_summary" });
    expect((await index.search("quarterly"))[0]).toMatchObject({ entryId: written[2]?.id, role: "custom_message" });
    expect(await index.search("anthropic")).toEqual([]);
  });

  it("writes the index file beside the session, named after it, readable by the user alone", async () => {
    const { path } = await sessionWith([user("hello")]);
    const index = await openRecallIndex(path);
    expect(index.indexPath).toBe(`${path}${INDEX_SUFFIX}`);
    expect(existsSync(index.indexPath)).toBe(true);
    expect(statSync(index.indexPath).mode & 0o777).toBe(0o600);
  });

  it("reports the build's progress in bytes, ending at the file size, with the reason", async () => {
    const { path } = await sessionWith([user("hello"), assistant("hi")]);
    const progress: RecallProgress[] = [];
    await openRecallIndex(path, { onProgress: (p) => progress.push(p) });
    const size = statSync(path).size;
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.every((p) => p.bytesTotal === size && p.reason === "no index yet" && p.sessionPath === path)).toBe(true);
    expect(progress.at(-1)?.bytesRead).toBe(size);
  });

  it("passes over lines that are not entries, as pi does, and counts them", async () => {
    const { path } = await sessionWith([user("before the damage")]);
    appendFileSync(path, "{ not json\n");
    await append(path, [user("after the damage")]);
    const index = await openRecallIndex(path);
    expect(index.lastUpdate?.skippedLines).toBe(1);
    expect((await index.search("damage", { limit: 5 })).length).toBe(2);
  });

  it("lets the later of two entries with the same id win", async () => {
    const { path, ids: [first] } = await sessionWith([user("root")]);
    const line = (text: string) => `${JSON.stringify({ type: "message", id: "dup00001", parentId: first, timestamp: new Date().toISOString(), message: user(text) })}\n`;
    appendFileSync(path, line("original wording"));
    appendFileSync(path, line("replacement wording"));
    const index = await openRecallIndex(path);
    expect(await index.search("original")).toEqual([]);
    expect(ids(await index.search("replacement"))).toEqual(["dup00001"]);
  });

  it("throws TRANSCRIPT_NOT_FOUND for a session file that does not exist", async () => {
    const error = await openRecallIndex(join(tempDir(), "missing.jsonl")).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCodes.TRANSCRIPT_NOT_FOUND });
  });

  it("throws TRANSCRIPT_INVALID naming the line for a file that is not a session", async () => {
    const path = join(tempDir(), "notes.jsonl");
    writeFileSync(path, '{"hello":"world"}\n');
    const error = await openRecallIndex(path).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCodes.TRANSCRIPT_INVALID, message: expect.stringContaining("line 1 should be the session header") });
  });
});

describe("RecallIndex.update: incremental", () => {
  it("reads only the bytes appended since the last update and indexes their entries", async () => {
    const { path } = await sessionWith([user("first topic: caching")]);
    const index = await openRecallIndex(path);
    const before = statSync(path).size;
    const added = await append(path, [user("second topic: sharding"), assistant("sharding plan ready")]);
    const update = await index.update();
    expect(update).toMatchObject({ rebuilt: false, reason: null, entriesRead: 2, indexed: 2, bytesRead: statSync(path).size - before, saved: true });
    expect(index.indexedBytes).toBe(statSync(path).size);
    expect(ids(await index.search("sharding", { limit: 5 })).sort()).toEqual([...added].sort());
  });

  it("reads nothing and writes nothing when nothing was appended", async () => {
    const { path } = await sessionWith([user("hello")]);
    const index = await openRecallIndex(path);
    expect(await index.update()).toMatchObject({ rebuilt: false, entriesRead: 0, bytesRead: 0, saved: false });
  });

  it("continues a reopened index from its stored offset, without rebuilding", async () => {
    const { path } = await sessionWith([user("alpha release notes")]);
    await openRecallIndex(path);
    const before = statSync(path).size;
    await append(path, [user("beta release notes")]);
    const progress: RecallProgress[] = [];
    const index = await openRecallIndex(path, { onProgress: (p) => progress.push(p) });
    expect(progress).toEqual([]);
    expect(index.lastUpdate).toMatchObject({ rebuilt: false, entriesRead: 1, bytesRead: statSync(path).size - before });
    expect((await index.search("release", { limit: 5 })).length).toBe(2);
  });

  it("leaves an unfinished last line for a later update", async () => {
    const { path } = await sessionWith([user("hello")]);
    const index = await openRecallIndex(path);
    const size = statSync(path).size;
    const line = JSON.stringify({ type: "message", id: "late0001", parentId: index.leafId, timestamp: new Date().toISOString(), message: user("unfinished business") });
    appendFileSync(path, line.slice(0, 20));
    expect(await index.update()).toMatchObject({ entriesRead: 0, bytesRead: 0 });
    expect(index.indexedBytes).toBe(size);
    appendFileSync(path, `${line.slice(20)}\n`);
    expect(await index.update()).toMatchObject({ rebuilt: false, entriesRead: 1 });
    expect(ids(await index.search("unfinished"))).toEqual(["late0001"]);
  });

  it("keeps the index file unwritten until saveAfterBytes were indexed, and close() writes it", async () => {
    const { path } = await sessionWith([user("hello")]);
    const index = await openRecallIndex(path, { saveAfterBytes: 1_000_000 });
    const saved = readFileSync(index.indexPath, "utf8");
    await append(path, [user("not saved yet")]);
    expect(await index.update()).toMatchObject({ entriesRead: 1, saved: false });
    expect(readFileSync(index.indexPath, "utf8")).toBe(saved);
    expect(await index.close()).toBeNull();
    const reopened = await openRecallIndex(path);
    expect(reopened.lastUpdate).toMatchObject({ rebuilt: false, entriesRead: 0 });
  });

  it("keeps working in memory and reports why when the index file cannot be written", async () => {
    const { path } = await sessionWith([user("persistence trouble")]);
    const index = await openRecallIndex(path, { indexPath: join(path, "cannot", "be", "here.json") });
    expect(index.lastUpdate?.saved).toBe(false);
    expect(index.lastUpdate?.saveError).toContain("could not write");
    expect((await index.search("persistence")).length).toBe(1);
  });

  it("serialises concurrent updates so each appended entry is indexed once", async () => {
    const { path } = await sessionWith([user("start")]);
    const index = await openRecallIndex(path);
    await append(path, [user("parallel one"), user("parallel two")]);
    const updates = await Promise.all([index.update(), index.update(), index.update()]);
    expect(updates.map((u) => u.entriesRead)).toEqual([2, 0, 0]);
  });
});

describe("RecallIndex: stale and corrupt indexes are rebuilt", () => {
  it("rebuilds when the transcript is shorter than what was indexed", async () => {
    const { path } = await sessionWith([user("keep this"), user("drop this later")]);
    await openRecallIndex(path);
    const lines = readFileSync(path, "utf8").split("\n");
    writeFileSync(path, `${lines.slice(0, 2).join("\n")}\n`);
    const index = await openRecallIndex(path);
    expect(index.lastUpdate).toMatchObject({ rebuilt: true, reason: expect.stringContaining("shorter") });
    expect(await index.search("drop")).toEqual([]);
    expect((await index.search("keep")).length).toBe(1);
  });

  it("rebuilds when the last indexed line was rewritten, even at the same length", async () => {
    const { path } = await sessionWith([user("original marker")]);
    await openRecallIndex(path);
    writeFileSync(path, readFileSync(path, "utf8").replace("original", "modified"));
    const index = await openRecallIndex(path);
    expect(index.lastUpdate).toMatchObject({ rebuilt: true, reason: expect.stringContaining("last indexed line") });
    expect((await index.search("modified")).length).toBe(1);
  });

  it("rebuilds when the header changed (another session in the same file)", async () => {
    const { path } = await sessionWith([user("hello")]);
    await openRecallIndex(path);
    writeFileSync(path, readFileSync(path, "utf8").replace("0194f3a2-0000-7000-8000-000000000001", "0194f3a2-0000-7000-8000-000000000002"));
    const index = await openRecallIndex(path);
    expect(index.lastUpdate).toMatchObject({ rebuilt: true, reason: expect.stringContaining("header") });
    expect(index.sessionId).toBe("0194f3a2-0000-7000-8000-000000000002");
  });

  it("notices a rewrite on update() of an index that is open", async () => {
    const { path } = await sessionWith([user("first version")]);
    const index = await openRecallIndex(path);
    writeFileSync(path, readFileSync(path, "utf8").replace("first", "other"));
    expect(await index.update()).toMatchObject({ rebuilt: true });
    expect(ids(await index.search("other"))).toHaveLength(1);
  });

  it.each([
    ["not JSON", "{ truncated", "not JSON"],
    ["JSON of another shape", '{"format":"something-else"}', "not a recall index"],
    ["fields of the wrong type", null, "wrong type"],
    ["a scorer state that does not load", "state", "corrupt"],
  ])("rebuilds without failing when the index file is %s", async (_case, content, reason) => {
    const { path } = await sessionWith([user("resilient search")]);
    const built = await openRecallIndex(path);
    const file = JSON.parse(readFileSync(built.indexPath, "utf8")) as Record<string, unknown>;
    if (content === null) writeFileSync(built.indexPath, JSON.stringify({ ...file, entries: "nope" }));
    else if (content === "state") writeFileSync(built.indexPath, JSON.stringify({ ...file, state: { garbage: true } }));
    else writeFileSync(built.indexPath, content);
    const progress: RecallProgress[] = [];
    const index = await openRecallIndex(path, { onProgress: (p) => progress.push(p) });
    expect(index.lastUpdate).toMatchObject({ rebuilt: true, reason: expect.stringContaining(reason) });
    expect(progress[0]?.reason).toContain(reason);
    expect((await index.search("resilient")).length).toBe(1);
  });

  it("rebuilds an index whose format version is another", async () => {
    const { path } = await sessionWith([user("versioned")]);
    const built = await openRecallIndex(path);
    const file = JSON.parse(readFileSync(built.indexPath, "utf8")) as Record<string, unknown>;
    writeFileSync(built.indexPath, JSON.stringify({ ...file, formatVersion: 999 }));
    const index = await openRecallIndex(path);
    expect(index.lastUpdate).toMatchObject({ rebuilt: true, reason: expect.stringContaining("format version 999") });
  });
});

describe("RecallIndex: branches", () => {
  /** root -> "use postgres" branch, then a second branch from the root: "use sqlite" (the leaf). */
  async function twoBranches() {
    const { path, ids: [root, reply] } = await sessionWith([user("which database for the queue service"), assistant("two options")]);
    const [postgres] = await append(path, [user("use postgres with advisory locks")]);
    const [sqlite] = await append(path, [user("use sqlite in WAL mode")], reply);
    return { path, root: root as string, postgres: postgres as string, sqlite: sqlite as string };
  }

  it("searches only the current branch: the one ending at the last entry", async () => {
    const { path, sqlite } = await twoBranches();
    const index = await openRecallIndex(path);
    expect(await index.search("postgres")).toEqual([]);
    expect(ids(await index.search("sqlite"))).toEqual([sqlite]);
  });

  it("searches the branch of the leaf given", async () => {
    const { path, postgres } = await twoBranches();
    const index = await openRecallIndex(path);
    expect(ids(await index.search("postgres", { leafId: postgres }))).toEqual([postgres]);
    expect(await index.search("sqlite", { leafId: postgres })).toEqual([]);
  });

  it("finds shared ancestors from either branch", async () => {
    const { path, root, postgres } = await twoBranches();
    const index = await openRecallIndex(path);
    expect(ids(await index.search("queue"))).toEqual([root]);
    expect(ids(await index.search("queue", { leafId: postgres }))).toEqual([root]);
  });

  it("throws INPUT_INVALID for a leaf id the session does not have", async () => {
    const { path } = await twoBranches();
    const index = await openRecallIndex(path);
    await expect(index.search("queue", { leafId: "nope1234" })).rejects.toMatchObject({ code: ErrorCodes.INPUT_INVALID });
  });

  it("returns nothing for the empty branch (leafId null)", async () => {
    const { path } = await twoBranches();
    const index = await openRecallIndex(path);
    expect(await index.search("queue", { leafId: null })).toEqual([]);
  });
});

describe("RecallIndex.get", () => {
  it("returns the whole entry by id: its text, role, parent, line and the entry as stored", async () => {
    const long = `begin ${"lorem ipsum ".repeat(200)}end`;
    const { path, ids: [first, second] } = await sessionWith([user("short"), assistant(long)]);
    const index = await openRecallIndex(path);
    const entry = await index.get(second as string);
    expect(entry).toMatchObject({ entryId: second, parentId: first, role: "assistant", text: long, line: 3, onBranch: true });
    expect(entry?.entry).toMatchObject({ type: "message", id: second, message: { role: "assistant" } });
  });

  it("says whether the entry is on the current branch", async () => {
    const { path, ids: [, reply] } = await sessionWith([user("root"), assistant("reply")]);
    const [other] = await append(path, [user("other branch")]);
    await append(path, [user("current branch")], reply);
    const index = await openRecallIndex(path);
    expect((await index.get(other as string))?.onBranch).toBe(false);
    expect((await index.get(other as string, { leafId: other as string }))?.onBranch).toBe(true);
  });

  it("returns undefined for an id the session does not have", async () => {
    const { path } = await sessionWith([user("hello")]);
    const index = await openRecallIndex(path);
    expect(await index.get("nope1234")).toBeUndefined();
  });

  it("returns an entry with no searchable text with role ''", async () => {
    const { path } = await sessionWith([user("hello")]);
    const [change] = await appendEntries(path, [{ type: "thinking_level_change", thinkingLevel: "high" }]);
    const index = await openRecallIndex(path);
    expect(await index.get(change?.id as string)).toMatchObject({ role: "", text: "", entry: { type: "thinking_level_change" } });
  });

  it("fails with TRANSCRIPT_INVALID, not a wrong entry, when the file changed under an index that does not update itself", async () => {
    const { path, ids: [first] } = await sessionWith([user("aaaa"), user("bbbb")]);
    const index = await openRecallIndex(path, { autoUpdate: false });
    writeFileSync(path, readFileSync(path, "utf8").replace(first as string, "zzzzzzzz"));
    await expect(index.get(first as string)).rejects.toMatchObject({ code: ErrorCodes.TRANSCRIPT_INVALID });
  });
});

describe("RecallIndex: one scorer per index", () => {
  it("refuses a scorer instance that already serves another index", async () => {
    const scorer = bm25Scorer();
    const { path } = await sessionWith([user("hello")]);
    await openRecallIndex(path, { scorer, indexPath: join(tempDir(), "a.json") });
    await expect(openRecallIndex(path, { scorer, indexPath: join(tempDir(), "b.json") })).rejects.toMatchObject({ code: ErrorCodes.INPUT_INVALID });
  });
});

describe("RecallIndex: a session file still being created", () => {
  it("indexes a header and entries that arrive after blank lines and an unfinished header", async () => {
    const path = join(tempDir(), "growing.jsonl");
    writeFileSync(path, '\n{"type":"session","version":3,"id":"grow');
    const index = await openRecallIndex(path);
    expect(index.sessionId).toBeNull();
    appendFileSync(path, 'ing","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}\n');
    await index.update();
    expect(index.sessionId).toBe("growing");
    appendFileSync(path, `${JSON.stringify({ type: "message", id: "e0000001", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: user("growing pains") })}\n`);
    expect(await index.update()).toMatchObject({ rebuilt: false, entriesRead: 1 });
    const reopened = await openRecallIndex(path);
    expect(reopened.lastUpdate).toMatchObject({ rebuilt: false, entriesRead: 0 });
    expect(ids(await reopened.search("pains"))).toEqual(["e0000001"]);
  });
});
