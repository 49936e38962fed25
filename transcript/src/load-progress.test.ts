/**
 * Progress reports of the loaders (readSession, loadBoundary, importClaudeCode,
 * importCodexRollout) on generated files of a few MiB, and the throttle behind them.
 */
import { statSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { tmpSessionDir } from "./test-support/pi-sessions.js";
import { loadBoundary } from "./boundary-load.js";
import { importClaudeCode } from "./claude-code-import.js";
import { importCodexRollout } from "./codex-import.js";
import { PROGRESS_STEP, ProgressReporter } from "./load-progress.js";
import { readSession } from "./parse.js";
import type { LoadProgress } from "./types.js";

const tmp = tmpSessionDir();
afterAll(() => tmp.cleanup());

const MIB = 1 << 20;
const T = "2026-01-01T00:00:01.000Z";
/** About 2 KB of text per line, with multi-byte characters. */
const text = (i: number) => `line ${i}: ${"Grüße aus dem Log — ".repeat(100)}`;

/** A version 3 pi session of about `mib` MiB, one chain; `compactAt` entries before the end, a compaction. */
function piSession(name: string, mib: number, options: { compactAt?: number; version?: number } = {}): string {
  const lines = [JSON.stringify({ type: "session", version: options.version ?? 3, id: "s1", timestamp: T, cwd: "/p" })];
  const ids: string[] = [];
  let bytes = 0;
  for (let i = 0; bytes < mib * MIB; i++) {
    const id = `e${i}`;
    const message =
      i % 2 === 0
        ? { role: "user", content: text(i), timestamp: i }
        : { role: "assistant", content: [{ type: "text", text: text(i) }], provider: "anthropic", model: "claude", timestamp: i };
    const line = JSON.stringify({ type: "message", id, parentId: ids[ids.length - 1] ?? null, timestamp: T, message });
    lines.push(line);
    ids.push(id);
    bytes += line.length + 1;
  }
  if (options.compactAt !== undefined) {
    const at = lines.length - options.compactAt;
    const parentId = ids[at - 2] as string;
    const compaction = { type: "compaction", id: "c1", parentId, timestamp: T, summary: "sum", firstKeptEntryId: ids[at - 4], tokensBefore: 9 };
    const thinking = { type: "thinking_level_change", id: "t1", parentId: "c1", timestamp: T, thinkingLevel: "high" };
    const next = JSON.parse(lines[at] as string) as Record<string, unknown>;
    lines.splice(at, 1, JSON.stringify(compaction), JSON.stringify(thinking), JSON.stringify({ ...next, parentId: "t1" }));
  }
  return tmp.file(name, `${lines.join("\n")}\n`);
}

function claudeCodeTranscript(name: string, mib: number): string {
  const lines: string[] = [];
  let bytes = 0;
  for (let i = 0; bytes < mib * MIB; i++) {
    const type = i % 2 === 0 ? "user" : "assistant";
    const message = type === "user" ? { role: "user", content: text(i) } : { id: `msg_${i}`, role: "assistant", content: [{ type: "text", text: text(i) }] };
    const line = JSON.stringify({ type, uuid: `u${i}`, sessionId: "cc", timestamp: T, message });
    lines.push(line);
    bytes += line.length + 1;
  }
  return tmp.file(name, `${lines.join("\n")}\n`);
}

function codexRollout(name: string, mib: number): string {
  const lines = [JSON.stringify({ timestamp: T, type: "session_meta", payload: { id: "cx", cwd: "/p", cli_version: "0.50.0" } })];
  let bytes = 0;
  for (let i = 0; bytes < mib * MIB; i++) {
    const role = i % 2 === 0 ? "user" : "assistant";
    const content = [{ type: role === "user" ? "input_text" : "output_text", text: text(i) }];
    const line = JSON.stringify({ timestamp: T, type: "response_item", payload: { type: "message", role, content } });
    lines.push(line);
    bytes += line.length + 1;
  }
  return tmp.file(name, `${lines.join("\n")}\n`);
}

/** Runs `load` with a progress callback and returns what it reported, and the result. */
function recorded<R>(load: (onProgress: (progress: LoadProgress) => void) => R): { reports: LoadProgress[]; result: R } {
  const reports: LoadProgress[] = [];
  const result = load((progress) => reports.push(progress));
  return { reports, result };
}

/** What every load's reports must satisfy for a file of `size` bytes. */
function expectWellFormed(reports: readonly LoadProgress[], size: number): void {
  expect(reports.length).toBeGreaterThan(0);
  expect(reports.every((r) => r.totalBytes === size)).toBe(true);
  const read = reports.map((r) => r.bytesRead);
  expect(read.filter((n, i) => i > 0 && n <= (read[i - 1] as number))).toEqual([]);
  expect(reports[reports.length - 1]).toEqual({ bytesRead: size, totalBytes: size });
  expect(reports.length).toBeLessThanOrEqual(Math.floor(size / MIB) + 2);
}

const pi = piSession("pi.jsonl", 3.5);
const piCompacted = piSession("pi-compacted.jsonl", 3.5, { compactAt: 20 });
const piVersion2 = piSession("pi-v2.jsonl", 3.5, { version: 2 });
const claude = claudeCodeTranscript("claude.jsonl", 3.5);
const codex = codexRollout("codex.jsonl", 3.5);

describe("progress of a load", () => {
  const cases: { name: string; path: string; load: (path: string, onProgress?: (progress: LoadProgress) => void) => unknown }[] = [
    { name: "readSession", path: pi, load: (path, onProgress) => readSession(path, onProgress === undefined ? {} : { onProgress }) },
    { name: "loadBoundary reading to the root", path: pi, load: (path, onProgress) => loadBoundary(path, onProgress === undefined ? {} : { onProgress }) },
    {
      name: "loadBoundary with 4 KiB blocks",
      path: pi,
      load: (path, onProgress) => loadBoundary(path, { chunkSize: 4096, ...(onProgress === undefined ? {} : { onProgress }) }),
    },
    {
      name: "loadBoundary of a version 2 file (read whole)",
      path: piVersion2,
      load: (path, onProgress) => loadBoundary(path, onProgress === undefined ? {} : { onProgress }),
    },
    { name: "importClaudeCode", path: claude, load: (path, onProgress) => importClaudeCode(path, onProgress === undefined ? {} : { onProgress }) },
    { name: "importCodexRollout", path: codex, load: (path, onProgress) => importCodexRollout(path, onProgress === undefined ? {} : { onProgress }) },
  ];

  for (const { name, path, load } of cases) {
    it(`${name}: increasing reports at most one per MiB, the last one at the file size`, () => {
      const size = statSync(path).size;
      expect(size).toBeGreaterThan(3 * MIB);
      const { reports } = recorded((onProgress) => load(path, onProgress));
      expectWellFormed(reports, size);
      // A report in the middle, not only the final one.
      expect(reports.length).toBeGreaterThanOrEqual(2);
    });

    it(`${name}: gives the same result with and without a progress callback`, () => {
      expect(recorded((onProgress) => load(path, onProgress)).result).toStrictEqual(load(path));
    });
  }

  it("loadBoundary stopping at a compaction near the end reports a little, then the end", () => {
    const size = statSync(piCompacted).size;
    const { reports, result } = recorded((onProgress) => loadBoundary(piCompacted, { onProgress }));
    expect(result.fullRead).toBe(false);
    expect(result.compaction?.id).toBe("c1");
    expect(result.bytesRead).toBeLessThan(MIB + 8192);
    expectWellFormed(reports, size);
    expect(reports.slice(0, -1).every((r) => r.bytesRead <= result.bytesRead)).toBe(true);
  });

  it("loadBoundary stopping at a compaction gives the same result with and without a progress callback", () => {
    expect(loadBoundary(piCompacted, { chunkSize: 4096, onProgress: () => {} })).toStrictEqual(loadBoundary(piCompacted, { chunkSize: 4096 }));
  });
});

describe("ProgressReporter", () => {
  it("reports once per step passed, never the total before done, and the total once", () => {
    const reports: number[] = [];
    const reporter = new ProgressReporter(10 * PROGRESS_STEP, (p) => reports.push(p.bytesRead));
    for (let read = 0; read <= 10 * PROGRESS_STEP; read += PROGRESS_STEP / 16) reporter.update(read);
    reporter.done();
    reporter.done();
    expect(reports).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((n) => n * PROGRESS_STEP));
  });

  it("ignores counts that go back or stay within a step of the last report", () => {
    const reports: number[] = [];
    const reporter = new ProgressReporter(100, (p) => reports.push(p.bytesRead), 10);
    for (const read of [12, 5, 15, 21, 22, 30, 99]) reporter.update(read);
    expect(reports).toEqual([12, 22, 99]);
  });

  it("reports an empty file's end as 0 of 0", () => {
    const reports: LoadProgress[] = [];
    new ProgressReporter(0, (p) => reports.push(p)).done();
    expect(reports).toEqual([{ bytesRead: 0, totalBytes: 0 }]);
  });
});
