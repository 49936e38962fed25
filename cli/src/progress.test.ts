import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import type { CliIo } from "./io.js";
import { PROGRESS_MIN_BYTES, progressLine, progressText } from "./progress.js";

function io(isTTY: boolean, env: Record<string, string> = {}): CliIo & { written: () => string } {
  let text = "";
  return {
    stdout: { write: () => true },
    stderr: { write: (chunk: string) => (text += chunk), isTTY },
    stdin: Readable.from([]),
    env,
    cwd: "/",
    written: () => text,
  };
}

const BIG = PROGRESS_MIN_BYTES * 4;

describe("progressLine", () => {
  it("draws percent and MiB on one line, redrawn in place, on a terminal", () => {
    const tty = io(true);
    let time = 0;
    const line = progressLine(tty, "Reading s.jsonl", BIG, { now: () => (time += 1000) });
    line.onProgress?.({ bytesRead: BIG / 4, totalBytes: BIG });
    line.onProgress?.({ bytesRead: BIG, totalBytes: BIG });
    expect(tty.written()).toBe("\r\u001b[2KReading s.jsonl  25% (16.0 / 64.0 MiB)\r\u001b[2KReading s.jsonl 100% (64.0 / 64.0 MiB)");
  });

  it("redraws at most every 100 ms, but always draws the end", () => {
    const tty = io(true);
    const line = progressLine(tty, "Reading", BIG, { now: () => 5_000 });
    for (let i = 1; i < 10; i++) line.onProgress?.({ bytesRead: i, totalBytes: BIG });
    line.onProgress?.({ bytesRead: BIG, totalBytes: BIG });
    expect(tty.written().split("\r\u001b[2K").filter((part) => part !== "")).toHaveLength(2);
  });

  it("clears its line when done, and writes nothing on done when it never drew", () => {
    const tty = io(true);
    const line = progressLine(tty, "Reading", BIG, { now: () => 1_000 });
    line.done();
    expect(tty.written()).toBe("");
    line.onProgress?.({ bytesRead: 1, totalBytes: BIG });
    line.done();
    expect(tty.written().endsWith("\r\u001b[2K")).toBe(true);
  });

  it("takes a lower threshold for slower work", () => {
    const tty = io(true);
    const line = progressLine(tty, "Indexing", 1024, { minBytes: 1000, now: () => 1_000 });
    line.onProgress?.({ bytesRead: 1024, totalBytes: 1024 });
    expect(tty.written()).toContain("Indexing 100%");
  });

  it.each([
    ["stderr is not a terminal", io(false), BIG],
    ["COMPACTION_NO_PROGRESS is set", io(true, { COMPACTION_NO_PROGRESS: "1" }), BIG],
    ["the file is small", io(true), PROGRESS_MIN_BYTES - 1],
  ])("is silent when %s", (_why, stream, total) => {
    const line = progressLine(stream, "Reading", total);
    expect(line.onProgress).toBeUndefined();
    line.done();
    expect(stream.written()).toBe("");
  });
});

describe("progressText", () => {
  it("caps the percent at 100 and shows an empty total as done", () => {
    expect(progressText("x", { bytesRead: 10, totalBytes: 5 })).toContain("100%");
    expect(progressText("x", { bytesRead: 0, totalBytes: 0 })).toContain("100%");
  });
});
