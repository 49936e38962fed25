import { readFileSync, statSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { ErrorCodes } from "@compaction/core";
import { tmpSessionDir } from "./test-support/pi-sessions.js";
import { describeJsonError, parseSession, readSession } from "./parse.js";
import { thrown } from "./test-support/thrown.js";

const tmp = tmpSessionDir();
afterAll(() => tmp.cleanup());

const HEADER = '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}';
const entry = (id: string, parentId: string | null, text = id) =>
  JSON.stringify({ type: "message", id, parentId, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: text, timestamp: 1 } });
const E1 = entry("a1", null);
const E2 = entry("a2", "a1");
const E3 = entry("a3", "a2");


describe("parseSession", () => {
  it("returns the header, the entries with their line numbers, and the version found", () => {
    const parsed = parseSession([HEADER, E1, E2, ""].join("\n"));
    expect(parsed.header.id).toBe("s1");
    expect(parsed.version).toBe(3);
    expect(parsed.entries.map((e) => e.id)).toEqual(["a1", "a2"]);
    expect(parsed.lines).toEqual([2, 3]);
    expect(parsed.skipped).toEqual([]);
    expect(parsed.incompleteTail).toBe(false);
  });

  it("takes a header without a version as version 1", () => {
    const header = '{"type":"session","id":"s1","timestamp":"2026-01-01T00:00:00.000Z"}';
    expect(parseSession(`${header}\n{"type":"message","message":{"role":"user","content":"x","timestamp":1}}\n`).version).toBe(1);
  });

  it("fails on a corrupt line in the middle, naming the file, the line and what was found", () => {
    const error = thrown(() => parseSession([HEADER, E1, '{"type":"mess', E3, ""].join("\n"), { file: "s.jsonl" }));
    expect(error.code).toBe(ErrorCodes.TRANSCRIPT_CORRUPT);
    expect(error.message).toBe('s.jsonl:3: expected a JSON object per line, found `{"type":"mess` (unterminated string)');
    expect(error.line).toBe(3);
    expect(error.file).toBe("s.jsonl");
    expect(error.found).toBe('{"type":"mess');
    expect(error.hint).toMatch(/skipCorrupt.*--skip-corrupt.*not changed/);
  });

  it("skips each corrupt line with skipCorrupt and reports its line, text and reason", () => {
    const parsed = parseSession([HEADER, E1, "not json", E2, "[1,2]", '{"id":"x"}', E3, ""].join("\n"), { skipCorrupt: true });
    expect(parsed.entries.map((e) => e.id)).toEqual(["a1", "a2", "a3"]);
    expect(parsed.skipped).toEqual([
      { line: 3, text: "not json", reason: "unexpected token 'o'" },
      { line: 5, text: "[1,2]", reason: "an array, not an object" },
      { line: 6, text: '{"id":"x"}', reason: "no string `type`" },
    ]);
  });

  it("quotes at most 80 characters of a bad line", () => {
    const bad = `{"type":"message","note":"${"x".repeat(200)}`;
    const parsed = parseSession([HEADER, bad, ""].join("\n"), { skipCorrupt: true });
    expect(parsed.skipped[0]?.text).toBe(bad.slice(0, 80));
    const error = thrown(() => parseSession([HEADER, bad, ""].join("\n")));
    expect(error.found).toHaveLength(80);
    expect(error.message).toContain("…`");
  });

  it("loads a file whose last line was cut short, reporting it as an incomplete tail", () => {
    const parsed = parseSession([HEADER, E1, E2, '{"type":"message","id":"a3","par'].join("\n"));
    expect(parsed.entries.map((e) => e.id)).toEqual(["a1", "a2"]);
    expect(parsed.incompleteTail).toBe(true);
    expect(parsed.skipped).toHaveLength(1);
    expect(parsed.skipped[0]?.line).toBe(4);
    expect(parsed.skipped[0]?.reason).toMatch(/^incomplete last line/);
  });

  it("treats a cut-short line that is followed by a line break as corrupt, not as an incomplete tail", () => {
    const error = thrown(() => parseSession([HEADER, E1, '{"type":"message","id":"a3","par', ""].join("\n")));
    expect(error.line).toBe(3);
  });

  it("accepts a last line without a line break when it is a whole entry", () => {
    const parsed = parseSession([HEADER, E1, E2].join("\n"));
    expect(parsed.entries.map((e) => e.id)).toEqual(["a1", "a2"]);
    expect(parsed.incompleteTail).toBe(false);
  });

  it("reads CRLF files the same as LF files", () => {
    const lf = parseSession([HEADER, E1, E2, ""].join("\n"));
    const crlf = parseSession([HEADER, E1, E2, ""].join("\r\n"));
    expect(crlf.entries).toEqual(lf.entries);
    expect(crlf.lines).toEqual(lf.lines);
  });

  it("quotes a corrupt CRLF line without its carriage return", () => {
    const parsed = parseSession([HEADER, "oops", E1, ""].join("\r\n"), { skipCorrupt: true });
    expect(parsed.skipped[0]?.text).toBe("oops");
  });

  it("ignores blank lines but counts them in line numbers", () => {
    const parsed = parseSession(["", HEADER, "", "  ", E1, "", E2, "", ""].join("\n"));
    expect(parsed.entries.map((e) => e.id)).toEqual(["a1", "a2"]);
    expect(parsed.lines).toEqual([5, 7]);
  });

  it("reads a header that starts with a byte-order mark", () => {
    expect(parseSession(`\uFEFF${HEADER}\n${E1}\n`).header.id).toBe("s1");
  });

  it("rejects an empty file as not a session file", () => {
    for (const text of ["", "\n\n", "  \r\n"]) {
      const error = thrown(() => parseSession(text, { file: "empty.jsonl" }));
      expect(error.code).toBe(ErrorCodes.TRANSCRIPT_INVALID);
      expect(error.message).toMatch(/^empty\.jsonl is not a session file: .*\(the file is empty\)$/);
    }
  });

  it("rejects a first line that is not a session header, quoting it", () => {
    const error = thrown(() => parseSession(`${E1}\n`, { file: "x.jsonl" }));
    expect(error.code).toBe(ErrorCodes.TRANSCRIPT_INVALID);
    expect(error.line).toBe(1);
    expect(error.message).toContain('`type` is "message", not "session"');
  });

  it("rejects a header without a string id", () => {
    const error = thrown(() => parseSession('{"type":"session","version":3}\n'));
    expect(error.message).toContain("the header has no string `id`");
  });

  it("rejects a first line that is not JSON", () => {
    const error = thrown(() => parseSession("hello\n"));
    expect(error.code).toBe(ErrorCodes.TRANSCRIPT_INVALID);
    expect(error.found).toBe("hello");
  });

  it("requires an id on version 3 entries", () => {
    const error = thrown(() => parseSession(`${HEADER}\n{"type":"message","parentId":null,"message":{"role":"user","content":"x"}}\n`));
    expect(error.code).toBe(ErrorCodes.TRANSCRIPT_CORRUPT);
    expect(error.message).toContain("no string `id` (version 3 entries have one)");
  });

  it("rejects a message entry without a message object", () => {
    const error = thrown(() => parseSession(`${HEADER}\n{"type":"message","id":"m","parentId":null}\n`));
    expect(error.message).toContain("a `message` entry without a `message` object");
  });

  it("rejects a second session header", () => {
    const error = thrown(() => parseSession(`${HEADER}\n${E1}\n${HEADER}\n`));
    expect(error.line).toBe(3);
    expect(error.message).toContain("a second `session` header");
  });
});

describe("readSession", () => {
  it("names the file in errors", () => {
    const path = tmp.file("corrupt.jsonl", [HEADER, E1, "{", ""].join("\n"));
    expect(() => readSession(path)).toThrow(`${path}:3: expected a JSON object per line`);
  });

  it("fails with the path when the file cannot be read", () => {
    const error = thrown(() => readSession(`${tmp.dir}/missing.jsonl`));
    expect(error.code).toBe(ErrorCodes.TRANSCRIPT_INVALID);
    expect(error.message).toContain("missing.jsonl");
  });

  it("never changes the file it reads, even an old version it migrates", () => {
    const v1 = '{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00.000Z"}\n{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"hookMessage","content":"x","timestamp":1}}\n{"type":"message","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"cut';
    const path = tmp.file("v1.jsonl", v1);
    const before = statSync(path).mtimeMs;
    const parsed = readSession(path, { skipCorrupt: true });
    expect(parsed.entries).toHaveLength(1);
    expect(readFileSync(path, "utf8")).toBe(v1);
    expect(statSync(path).mtimeMs).toBe(before);
  });
});

describe("describeJsonError", () => {
  it("keeps the reason and drops engine positions", () => {
    const reason = (text: string) => {
      try {
        JSON.parse(text);
      } catch (error) {
        return describeJsonError(error);
      }
      return "";
    };
    expect(reason('{"a":"x')).toBe("unterminated string");
    expect(reason("")).toBe("unexpected end of JSON input");
    expect(reason('{"a":1} x')).toBe("unexpected non-whitespace character after JSON");
  });
});
