import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ErrorCodes } from "@compaction/core";
import { branchSession } from "./branch.js";
import { sessionParent } from "./session-parent.js";

const dir = mkdtempSync(join(tmpdir(), "compaction-session-parent-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HEADER = { type: "session", version: 3, id: "source-id", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/work/app" };
const MESSAGE = '{"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}';

function file(name: string, firstLine: string): string {
  const path = join(dir, name);
  writeFileSync(path, `${firstLine}\n${MESSAGE}\n`);
  return path;
}

describe("sessionParent", () => {
  it("names the session a branch was made from", async () => {
    const source = file("source.jsonl", JSON.stringify(HEADER));
    const branched = await branchSession(source);
    expect(sessionParent(branched.path)).toBe(source);
  });

  it("is undefined for a session that was not branched, and for an empty file", () => {
    expect(sessionParent(file("plain.jsonl", JSON.stringify(HEADER)))).toBeUndefined();
    expect(sessionParent(file("empty-parent.jsonl", JSON.stringify({ ...HEADER, parentSession: "" })))).toBeUndefined();
    const empty = join(dir, "empty.jsonl");
    writeFileSync(empty, "");
    expect(sessionParent(empty)).toBeUndefined();
  });

  it("resolves a relative parentSession against the file's folder", () => {
    expect(sessionParent(file("relative.jsonl", JSON.stringify({ ...HEADER, parentSession: "../other/source.jsonl" })))).toBe(join(dir, "..", "other", "source.jsonl"));
  });

  it("throws naming the file when its first line is not a pi session header (a Claude Code transcript)", () => {
    const path = file("claude.jsonl", '{"type":"user","uuid":"u1","message":{"role":"user","content":"hi"}}');
    expect(() => sessionParent(path)).toThrow(expect.objectContaining({ code: ErrorCodes.TRANSCRIPT_INVALID, message: expect.stringContaining(path) }));
  });
});
