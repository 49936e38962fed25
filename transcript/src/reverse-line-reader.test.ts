import { closeSync, openSync } from "node:fs";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { tmpSessionDir } from "./test-support/pi-sessions.js";
import { ReverseLineReader, lineNumbersAt } from "./reverse-line-reader.js";

const tmp = tmpSessionDir();
afterAll(() => tmp.cleanup());

function readBackwards(text: string, chunkSize: number, start = 0): { text: string; start: number; terminated: boolean }[] {
  const path = tmp.file(`r-${Math.random().toString(36).slice(2)}.txt`, text);
  const fd = openSync(path, "r");
  try {
    const reader = new ReverseLineReader(fd, start, Buffer.byteLength(text), chunkSize);
    const out = [];
    for (let line = reader.next(); line !== undefined; line = reader.next()) {
      out.push({ text: line.bytes.toString("utf8"), start: line.start, terminated: line.terminated });
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

describe("ReverseLineReader", () => {
  it("returns lines last to first with their byte offsets", () => {
    expect(readBackwards("ab\ncd\nef\n", 4)).toEqual([
      { text: "ef", start: 6, terminated: true },
      { text: "cd", start: 3, terminated: true },
      { text: "ab", start: 0, terminated: true },
    ]);
  });

  it("marks a last line without a line break as not terminated", () => {
    expect(readBackwards("ab\ncd", 2)[0]).toEqual({ text: "cd", start: 3, terminated: false });
  });

  it("returns blank lines as empty lines and keeps a carriage return", () => {
    expect(readBackwards("a\r\n\nb\n", 3).map((l) => l.text)).toEqual(["b", "", "a\r"]);
  });

  it("reads only the given byte range", () => {
    expect(readBackwards("header\nx\ny\n", 2, 7).map((l) => l.text)).toEqual(["y", "x"]);
  });

  it("returns nothing for an empty range", () => {
    expect(readBackwards("header\n", 3, 7)).toEqual([]);
  });

  it("decodes multi-byte characters cut by block boundaries, for every block size", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "grapheme", maxLength: 12 }).map((s) => s.replace(/\n/g, "")), { minLength: 1, maxLength: 8 }), fc.integer({ min: 1, max: 9 }), (lines, chunk) => {
        const text = `${lines.join("\n")}\n`;
        expect(readBackwards(text, chunk).map((l) => l.text)).toEqual([...lines].reverse());
      }),
    );
  });

  it("assembles a line much longer than the block size", () => {
    const long = "€".repeat(100_000);
    const lines = readBackwards(`a\n${long}\nb\n`, 1000);
    expect(lines.map((l) => l.text)).toEqual(["b", long, "a"]);
    expect(lines[1]?.start).toBe(2);
  });

  it("returns lines ending exactly at, just before and just after block boundaries", () => {
    // Lines of 8 bytes with their line break; blocks are taken from the end of the range.
    const lines = Array.from({ length: 12 }, (_, i) => `line-${String(i).padStart(2, "0")}`);
    for (const chunk of [7, 8, 9, 16, 24]) {
      expect({ chunk, lines: readBackwards(`${lines.join("\n")}\n`, chunk).map((l) => l.text) }).toEqual({ chunk, lines: [...lines].reverse() });
    }
  });

  it("assembles lines one byte shorter than, as long as, and longer than a block, for several blocks in a row", () => {
    const chunk = 64;
    const lines = [chunk - 1, chunk, chunk + 1, 2 * chunk, 3 * chunk + 5, 1, 0, chunk - 1].map((n, i) => String.fromCharCode(97 + i).repeat(n));
    const read = readBackwards(`${lines.join("\n")}\n`, chunk);
    expect(read.map((l) => l.text)).toEqual([...lines].reverse());
    const starts = lines.map((_, i) => lines.slice(0, i).reduce((sum, line) => sum + line.length + 1, 0));
    expect(read.map((l) => l.start)).toEqual([...starts].reverse());
  });

  it("decodes lines longer than a block whose multi-byte characters straddle every block boundary", () => {
    // "€" is 3 bytes and "𝄞" 4: with blocks of 4, 5 or 7 bytes almost every boundary cuts a character.
    const lines = ["€".repeat(41), "a𝄞".repeat(17), "ü", "𝄞€ü".repeat(9)];
    for (const chunk of [4, 5, 7]) {
      expect({ chunk, lines: readBackwards(`${lines.join("\n")}\n`, chunk).map((l) => l.text) }).toEqual({ chunk, lines: [...lines].reverse() });
    }
  });

  it("reads every block into one reused buffer", () => {
    // 1000 lines of 64 bytes with their line break, blocks of 8 KiB: no line spans two blocks, so
    // every line is a view of the block buffer, except the first of each block (its line break
    // before it is only met in the previous block, so it is assembled).
    const chunk = 8192;
    const text = Array.from({ length: 1000 }, (_, i) => `${`entry ${i} `.padEnd(63, "x")}\n`).join("");
    const path = tmp.file("reuse.txt", text);
    const fd = openSync(path, "r");
    const buffers = new Set<ArrayBufferLike>();
    let count = 0;
    let bytesRead = 0;
    try {
      const reader = new ReverseLineReader(fd, 0, text.length, chunk);
      for (let line = reader.next(); line !== undefined; line = reader.next()) {
        count++;
        if ((text.length - line.start) % chunk !== 0) buffers.add(line.bytes.buffer);
      }
      bytesRead = reader.bytesRead;
    } finally {
      closeSync(fd);
    }
    expect({ count, bytesRead, buffers: buffers.size }).toEqual({ count: 1000, bytesRead: 64_000, buffers: 1 });
  });

  it("reports the bytes read after each block to onRead", () => {
    const path = tmp.file("on-read.txt", "0123456789\nabcdefghij\n");
    const fd = openSync(path, "r");
    const reads: number[] = [];
    try {
      const reader = new ReverseLineReader(fd, 0, 22, 8, (n) => reads.push(n));
      while (reader.next() !== undefined);
    } finally {
      closeSync(fd);
    }
    expect(reads).toEqual([8, 16, 22]);
  });

  it("counts bytes read", () => {
    const path = tmp.file("count.txt", "0123456789\n");
    const fd = openSync(path, "r");
    const reader = new ReverseLineReader(fd, 0, 11, 4);
    reader.next();
    closeSync(fd);
    expect(reader.bytesRead).toBe(11);
  });
});

describe("lineNumbersAt", () => {
  it("gives the 1-based line number of each line start", () => {
    const path = tmp.file("numbers.txt", "a\nbb\n\nccc\nd\n");
    const fd = openSync(path, "r");
    const { lines } = lineNumbersAt(fd, [10, 0, 6, 2], 3);
    closeSync(fd);
    expect([...lines.entries()].sort((a, b) => a[0] - b[0])).toEqual([
      [0, 1],
      [2, 2],
      [6, 4],
      [10, 5],
    ]);
  });
});
