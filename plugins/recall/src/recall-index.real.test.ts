/**
 * The real pi sessions (version 1 files: no ids on disk). The index reads them like readSession
 * (ids `l` + line number, a linear parent chain) and keeps its file in a temporary folder: the
 * fixtures are read-only.
 */
import { appendFileSync, copyFileSync, chmodSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readSession, upgradeSession } from "@compaction/transcript";
import { FIXTURES_DIR } from "@compaction/fixtures";
import { describe, expect, it } from "vitest";
import { openRecallIndex } from "./recall-index.js";
import { tempDir } from "./test-support/sessions.js";

const LARGE = join(FIXTURES_DIR, "pi-large-session.jsonl");
const BEFORE_COMPACTION = join(FIXTURES_DIR, "pi-before-compaction.jsonl");

async function openFixture(path: string) {
  return openRecallIndex(path, { indexPath: join(tempDir(), "index.json") });
}

/** A writable copy of a fixture. */
function copyOf(path: string): string {
  const copy = join(tempDir(), "session.jsonl");
  copyFileSync(path, copy);
  chmodSync(copy, 0o644);
  return copy;
}

describe("recall on pi-large-session.jsonl (version 1)", () => {
  it("knows every entry readSession reads, under the same ids, and the same leaf", async () => {
    const index = await openFixture(LARGE);
    const parsed = readSession(LARGE);
    expect(index.entryCount).toBe(parsed.entries.length);
    expect(index.leafId).toBe(parsed.entries.at(-1)?.id);
    expect(index.sessionId).toBe(parsed.header.id);
  });

  it("finds the user's first request by the file it names", async () => {
    const index = await openFixture(LARGE);
    const hits = await index.search("port user-message-selector", { limit: 10 });
    const request = hits.find((hit) => hit.role === "user");
    expect(request?.entryId).toBe("l00000005");
    expect(request?.snippet).toContain("we still need to port over user-message-selector.ts");
  });

  // Was a search for "theme.md": the 41 entries that contain that path now rank first (issue 13),
  // and the document's own text does not name its file.
  it("finds the theme documentation the agent read early on", async () => {
    const index = await openFixture(LARGE);
    const hits = await index.search("coding agent themes", { limit: 5 });
    const read = hits.find((hit) => hit.entryId === "l00000007");
    expect(read?.role).toBe("toolResult");
    expect(read?.snippet).toMatch(/\btheme/i);
  });

  it("returns a whole entry by its line-number id with the text readSession's entry has", async () => {
    const index = await openFixture(LARGE);
    const entry = await index.get("l00000005");
    const expected = readSession(LARGE).entries.find((e) => e.id === "l00000005");
    expect(entry?.entry).toEqual(expected);
    expect(entry?.parentId).toBe("l00000004");
    expect(entry?.text).toMatch(/^read packages\/coding-agent\/docs\/theme\.md in full/);
  });

  it("continues the id chain when lines are appended to a version 1 file", async () => {
    const copy = copyOf(LARGE);
    const index = await openFixture(copy);
    const lastLine = readFileSync(copy, "utf8").trimEnd().split("\n").length;
    appendFileSync(copy, `${JSON.stringify({ type: "message", timestamp: "2025-11-21T03:00:00.000Z", message: { role: "user", content: "appended zeppelin question", timestamp: 1 } })}\n`);
    expect(await index.update()).toMatchObject({ rebuilt: false, entriesRead: 1 });
    const [hit] = await index.search("zeppelin");
    const newId = `l${String(lastLine + 1).padStart(8, "0")}`;
    expect(hit?.entryId).toBe(newId);
    expect((await index.get(newId))?.parentId).toBe(`l${String(lastLine).padStart(8, "0")}`);
    expect(readSession(copy).entries.at(-1)?.id).toBe(newId);
  });

  it("rebuilds after upgradeSession rewrote the file as version 3, keeping the entry ids", async () => {
    const copy = copyOf(LARGE);
    const before = await openFixture(copy);
    const idsBefore = (await before.search("user-message-selector", { limit: 5 })).map((hit) => hit.entryId);
    await upgradeSession(copy);
    const after = await openRecallIndex(copy, { indexPath: before.indexPath });
    expect(after.lastUpdate?.rebuilt).toBe(true);
    expect((await after.search("user-message-selector", { limit: 5 })).map((hit) => hit.entryId)).toEqual(idsBefore);
  });
});

describe("recall on pi-before-compaction.jsonl (version 1, with compactions)", () => {
  it("finds pi's compaction summaries, which leave the context at the next compaction", async () => {
    const index = await openFixture(BEFORE_COMPACTION);
    const hits = await index.search("context checkpoint", { limit: 2 });
    expect(hits.map((hit) => [hit.entryId, hit.role]).sort()).toEqual([
      ["l00000360", "compaction"],
      ["l00000629", "compaction"],
    ]);
  });

  it("finds a message the first compaction summarised, long before the current context", async () => {
    const index = await openFixture(BEFORE_COMPACTION);
    const firstUser = readSession(BEFORE_COMPACTION).entries.find((e) => e.type === "message" && e.message.role === "user");
    const entry = await index.get(firstUser?.id as string);
    const words = entry?.text.split(/\s+/).filter((w) => /^[a-z]{6,}$/i.test(w)).slice(0, 4).join(" ") ?? "";
    expect(words.split(" ").length).toBe(4);
    const hits = await index.search(words, { limit: 10 });
    expect(hits.map((hit) => hit.entryId)).toContain(firstUser?.id);
  });
});
