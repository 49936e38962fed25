import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ErrorCodes } from "@compaction/core";
import { rejection } from "@compaction/core/testing";
import { appendEntries } from "./append.js";
import { loadBoundary } from "./boundary-load.js";
import { findMostRecentSession } from "./session-file.js";
import { sessionParent } from "./session-parent.js";

const dir = mkdtempSync(join(tmpdir(), "compaction-header-read-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HEADER = { type: "session", version: 3, id: "header-read", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/work/app" };
const MESSAGE = '{"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}';
const user = { type: "message" as const, message: { role: "user" as const, content: "next", timestamp: 2 } };

let files = 0;
function session(text: string): string {
  const path = join(dir, `s${++files}.jsonl`);
  writeFileSync(path, text);
  return path;
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

// Every reader of a session's first line (the boundary load, the append path, the fork's parent
// lookup) goes through readHeader: the same lines are refused, with the same message.
describe("the header line, as each reader sees it", () => {
  const refused: Array<[string, string]> = [
    ["not JSON", "garbage"],
    ["an entry, not a header (a file that lost its first line)", MESSAGE],
    ["an array", "[1,2]"],
    ["a header with no id", JSON.stringify({ ...HEADER, id: undefined })],
    ["a header whose version is a string", JSON.stringify({ ...HEADER, version: "3" })],
    ["a header whose version is 0", JSON.stringify({ ...HEADER, version: 0 })],
  ];
  it.each(refused)("refuses %s with one message, naming the file and the line, and leaves the file as it was", async (_, first) => {
    const path = session(`${first}\n${MESSAGE}\n`);
    const before = readFileSync(path);
    const load = thrown(() => loadBoundary(path)) as Error & { code: string };
    const parent = thrown(() => sessionParent(path)) as Error & { code: string };
    const append = await rejection(appendEntries(path, [user]));
    for (const error of [load, parent, append]) {
      expect(error.code).toBe(ErrorCodes.TRANSCRIPT_INVALID);
      expect(error.message).toContain(`${path} is not a session file`);
      expect(error.message).toContain("at line 1");
    }
    expect(parent.message).toBe(load.message);
    expect(append.message).toBe(load.message);
    expect(readFileSync(path)).toEqual(before);
  });

  it("accepts a header after blank lines, with a byte-order mark and CRLF line ends, in every reader", async () => {
    const path = session(`\uFEFF${JSON.stringify({ ...HEADER, parentSession: "parent.jsonl" })}\r\n${MESSAGE}\r\n`);
    expect(loadBoundary(path).header.id).toBe("header-read");
    expect(sessionParent(path)).toBe(join(dir, "parent.jsonl"));
    await expect(appendEntries(path, [user])).resolves.toHaveLength(1);
  });

  it("says an empty file is empty where a session is needed, and finds no parent in it", async () => {
    const path = session("\n\n");
    expect(thrown(() => loadBoundary(path))).toMatchObject({ code: ErrorCodes.TRANSCRIPT_INVALID, message: expect.stringContaining("(the file is empty)") });
    expect(sessionParent(path)).toBeUndefined();
    expect((await rejection(appendEntries(path, [user]))).message).toContain("(the file is empty)");
  });

  it("finds the newest session in a folder, passing over files whose first line is not a header", async () => {
    const folder = mkdtempSync(join(dir, "folder-"));
    const good = join(folder, "good.jsonl");
    writeFileSync(good, `${JSON.stringify(HEADER)}\n${MESSAGE}\n`);
    writeFileSync(join(folder, "bad-version.jsonl"), `${JSON.stringify({ ...HEADER, version: "3" })}\n`);
    expect(await findMostRecentSession(folder)).toBe(good);
  });
});
