import { closeSync, openSync } from "node:fs";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { readLeadingLines } from "./leading-lines.js";
import { tmpSessionDir } from "./test-support/pi-sessions.js";

const dir = tmpSessionDir();
afterAll(() => dir.cleanup());

function read(text: string, options: { count?: number; maxBytes?: number } = {}) {
  const path = dir.file(`lines-${Math.random().toString(36).slice(2)}.jsonl`, text);
  const fd = openSync(path, "r");
  try {
    return readLeadingLines(fd, Buffer.byteLength(text), options);
  } finally {
    closeSync(fd);
  }
}

/** What the reader must return: the first `count` non-blank lines, BOM and CR removed, as a plain split finds them. */
function expected(text: string, count: number): { text: string; line: number; terminated: boolean }[] {
  const parts = text.split("\n");
  const out: { text: string; line: number; terminated: boolean }[] = [];
  parts.forEach((part, index) => {
    const terminated = index < parts.length - 1;
    if (!terminated && part === "") return;
    let cleaned = part.endsWith("\r") ? part.slice(0, -1) : part;
    if (index === 0 && cleaned.charCodeAt(0) === 0xfeff) cleaned = cleaned.slice(1);
    if (cleaned.trim() !== "" && out.length < count) out.push({ text: cleaned, line: index + 1, terminated });
  });
  return out;
}

describe("readLeadingLines", () => {
  it("returns the first non-blank lines a plain split finds, for any text and count", () => {
    const line = fc.oneof(
      fc.constantFrom("", " ", "\r", '{"type":"session","id":"x"}', "\uFEFF{}", "héllo wörld €𝄞"),
      fc.string({ unit: "grapheme", maxLength: 40 }).map((s) => s.replaceAll("\n", " ")),
      fc.nat({ max: 20_000 }).map((n) => "x".repeat(n)),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.boolean(), fc.integer({ min: 1, max: 5 }), (lines, finalNewline, count) => {
        const text = lines.join("\n") + (finalNewline && lines.length > 0 ? "\n" : "");
        const got = read(text, { count }).lines.map(({ text, line, terminated }) => ({ text, line, terminated }));
        expect(got).toEqual(expected(text, count));
      }),
      { numRuns: 150 },
    );
  });

  it("ends each line's byte range just past its line break", () => {
    const text = '\n{"a":1}\r\n\n{"b":"€"}\n';
    const { lines } = read(text, { count: 2 });
    expect(lines.map((line) => line.end)).toEqual([Buffer.byteLength('\n{"a":1}\r\n'), Buffer.byteLength(text)]);
  });

  it("reads a small header without reading the rest of a large file", () => {
    const text = `{"type":"session","id":"s"}\n${"y".repeat(1_000_000)}\n`;
    const { lines, bytesRead } = read(text);
    expect(lines[0]?.text).toBe('{"type":"session","id":"s"}');
    expect(bytesRead).toBeLessThanOrEqual(4096);
  });

  it("leaves out a line that maxBytes cuts", () => {
    const text = `first\n${"z".repeat(10_000)}\nthird\n`;
    expect(read(text, { count: 3, maxBytes: 5000 }).lines.map((line) => line.text)).toEqual(["first"]);
  });
});
