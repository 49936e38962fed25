import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { ErrorCodes } from "@compaction/core";
import { branchSession } from "./branch.js";
import { readSession } from "./parse.js";
import { rejection } from "@compaction/core/testing";

const PI_LARGE = fileURLToPath(new URL("../../../shared/fixtures/real/pi-large-session.jsonl", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "compaction-branch-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let count = 0;

const HEADER = '{"type":"session","version":3,"id":"source-id","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/app"}';
const T = '"timestamp":"2026-01-01T00:00:01.000Z"';
// Hand-formatted lines (spaces, key order, escapes) that JSON.stringify would not reproduce.
const LINES = {
  a: `{"type":"message", "id":"aaaa0001","parentId":null,${T},"message":{"role":"user","content":"caf\\u00e9 \u{1F389}","timestamp":1}}`,
  b: `{ "id":"bbbb0002","type":"message","parentId":"aaaa0001",${T},"message":{"role":"assistant","content":[{"type":"text","text":"yes"}],"timestamp":2} }`,
  c: `{"type":"message","id":"cccc0003","parentId":"bbbb0002",${T},"message":{"role":"user","content":"left branch","timestamp":3}}`,
  d: `{"type":"message","id":"dddd0004","parentId":"bbbb0002",${T},"message":{"role":"user","content":"right branch","timestamp":4}}`,
  e: `{"type":"message","id":"eeee0005","parentId":"dddd0004",${T},"message":{"role":"assistant","content":[],"timestamp":5}}`,
};

function source(lines: readonly string[], name = `source${++count}.jsonl`): string {
  const path = join(dir, name);
  writeFileSync(path, `${[HEADER, ...lines].join("\n")}\n`);
  return path;
}


describe("branchSession", () => {
  it("copies the lines of the branch byte for byte behind a new header", async () => {
    const path = source([LINES.a, LINES.b, LINES.c, LINES.d, LINES.e]);
    const branched = await branchSession(path, { atEntryId: "eeee0005" });
    const lines = readFileSync(branched.path, "utf8").split("\n");
    expect(lines.slice(1)).toEqual([LINES.a, LINES.b, LINES.d, LINES.e, ""]);
    expect(readFileSync(branched.path).subarray(Buffer.byteLength(lines[0] as string) + 1)).toEqual(
      Buffer.from([LINES.a, LINES.b, LINES.d, LINES.e, ""].join("\n"), "utf8"),
    );
  });

  it("copies only the entry and its ancestors, not other branches before it in the file (as pi)", async () => {
    const path = source([LINES.a, LINES.b, LINES.c, LINES.d, LINES.e]);
    const branched = await branchSession(path, { atEntryId: "dddd0004" });
    expect(branched.copiedEntryIds).toEqual(["aaaa0001", "bbbb0002", "dddd0004"]);
    expect(readSession(branched.path).entries.map((e) => e.id)).toEqual(["aaaa0001", "bbbb0002", "dddd0004"]);
  });

  it("writes a header with a new id, the source's cwd and version, and parentSession = the source path", async () => {
    const path = source([LINES.a, LINES.b]);
    const branched = await branchSession(path);
    const header = readSession(branched.path).header;
    expect(header).toEqual(branched.header);
    expect(header).toMatchObject({ type: "session", version: 3, cwd: "/work/app", parentSession: path });
    expect(header.id).not.toBe("source-id");
    expect(dirname(branched.path)).toBe(dir);
    expect(branched.path).toMatch(new RegExp(`_${header.id}\\.jsonl$`));
  });

  it("branches at the last entry when no entry is named", async () => {
    const path = source([LINES.a, LINES.b, LINES.c, LINES.d]);
    expect((await branchSession(path)).copiedEntryIds).toEqual(["aaaa0001", "bbbb0002", "dddd0004"]);
  });

  it("accepts a unique start of an entry id", async () => {
    const path = source([LINES.a, LINES.b, LINES.c]);
    expect((await branchSession(path, { atEntryId: "bbbb" })).atEntryId).toBe("bbbb0002");
  });

  it("refuses an unknown entry id, naming similar ids", async () => {
    const path = source([LINES.a, LINES.b, LINES.c]);
    const error = await rejection(branchSession(path, { atEntryId: "cccc0033" }));
    expect(error.code).toBe(ErrorCodes.TRANSCRIPT_INVALID);
    expect(error.message).toContain("`cccc0003`");
  });

  it("writes pi's labels for copied entries again after them, and leaves out labels of other entries", async () => {
    const label = (id: string, parentId: string, targetId: string, text: string) =>
      JSON.stringify({ type: "label", id, parentId, timestamp: "2026-01-01T00:00:09.000Z", targetId, label: text });
    const path = source([
      LINES.a,
      label("1abe0001", "aaaa0001", "aaaa0001", "start"),
      LINES.b,
      LINES.c,
      label("1abe0002", "cccc0003", "cccc0003", "left"),
      LINES.d,
      label("1abe0003", "dddd0004", "bbbb0002", "answer"),
      label("1abe0004", "1abe0003", "aaaa0001", "begin"),
    ]);
    const branched = await branchSession(path, { atEntryId: "dddd0004" });
    const entries = readSession(branched.path).entries;
    expect(entries.map((e) => e.id).slice(0, 3)).toEqual(["aaaa0001", "bbbb0002", "dddd0004"]);
    const labels = entries.slice(3) as unknown as { id: string; parentId: string; targetId: string; label: string }[];
    expect(labels.map((e) => [e.targetId, e.label])).toEqual([
      ["aaaa0001", "begin"],
      ["bbbb0002", "answer"],
    ]);
    expect(labels.map((e) => e.parentId)).toEqual(["dddd0004", labels[0]?.id]);
    expect(branched.labelEntryIds).toEqual(labels.map((e) => e.id));
  });

  it("refuses a version 1 file, whose entries have no ids", async () => {
    const path = join(dir, "v1.jsonl");
    copyFileSync(PI_LARGE, path);
    const error = await rejection(branchSession(path));
    expect(error.code).toBe(ErrorCodes.TRANSCRIPT_INVALID);
    expect(error.message).toContain("version 1");
  });

  it("does not replace a file at the new path", async () => {
    const path = source([LINES.a]);
    const target = join(dir, "taken.jsonl");
    writeFileSync(target, "keep\n");
    expect((await rejection(branchSession(path, { newPath: target }))).code).toBe(ErrorCodes.INPUT_INVALID);
    expect(readFileSync(target, "utf8")).toBe("keep\n");
  });

  it("leaves the source file unchanged", async () => {
    const path = source([LINES.a, LINES.b, LINES.c]);
    const before = readFileSync(path);
    await branchSession(path, { atEntryId: "bbbb0002" });
    expect(readFileSync(path)).toEqual(before);
  });
});
