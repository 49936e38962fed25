import { fact } from "@compaction/core/testing";
import { describe, expect, it } from "vitest";
import { evictedNames, formatEvictionNote, isoTimestamp, namesInNote, timestampRange } from "./eviction-note.js";

const facts = (timestamp?: number) => fact("user", timestamp === undefined ? {} : { timestamp });

describe("formatEvictionNote", () => {
  it("writes the note exactly as specified", () => {
    const note = formatEvictionNote({
      count: 42,
      tokens: 31337,
      firstTimestamp: "2026-01-02T10:00:00.000Z",
      lastTimestamp: "2026-01-02T11:30:00.000Z",
    });
    expect(note).toBe(
      "[Context rolled: 42 messages evicted (31337 tokens). Full transcript available via memory_search. Evicted range: 2026-01-02T10:00:00.000Z to 2026-01-02T11:30:00.000Z]",
    );
  });

  it("names the configured recall tool", () => {
    const note = formatEvictionNote({ count: 1, tokens: 5, firstTimestamp: null, lastTimestamp: null, recallTool: "search_history" });
    expect(note).toBe("[Context rolled: 1 messages evicted (5 tokens). Full transcript available via search_history. Evicted range: unknown to unknown]");
  });

  it("lists the files and declared names before the closing bracket, each part only when it has names", () => {
    const base = { count: 3, tokens: 10, firstTimestamp: null, lastTimestamp: null };
    expect(formatEvictionNote({ ...base, names: { files: ["src/a.ts", "README.md"], declared: ["run()", "Plan"] } })).toBe(
      "[Context rolled: 3 messages evicted (10 tokens). Full transcript available via memory_search. Evicted range: unknown to unknown. Files: src/a.ts, README.md; declared: run(), Plan]",
    );
    expect(formatEvictionNote({ ...base, names: { files: [], declared: ["run()"] } })).toMatch(/unknown to unknown\. declared: run\(\)\]$/);
    expect(formatEvictionNote({ ...base, names: { files: [], declared: [] } })).toBe(formatEvictionNote(base));
  });

  it("says unknown for each missing end of the range", () => {
    expect(formatEvictionNote({ count: 2, tokens: 9, firstTimestamp: null, lastTimestamp: "2026-01-02T00:00:00.000Z" })).toMatch(
      /Evicted range: unknown to 2026-01-02T00:00:00\.000Z\]$/,
    );
  });
});

describe("isoTimestamp", () => {
  it.each([
    [Date.UTC(2026, 0, 2, 3, 4, 5, 6), "2026-01-02T03:04:05.006Z"],
    [0, "1970-01-01T00:00:00.000Z"],
    [undefined, null],
    [Number.NaN, null],
    [Number.POSITIVE_INFINITY, null],
    [9e15, null], // beyond the range a Date can hold
  ])("turns %s into %s", (ms, iso) => {
    expect(isoTimestamp(ms)).toBe(iso);
  });
});

describe("timestampRange", () => {
  it("takes the first and last messages that carry a timestamp, in message order", () => {
    const range = timestampRange([facts(), facts(Date.UTC(2026, 0, 3)), facts(Date.UTC(2026, 0, 1)), facts()]);
    expect(range).toEqual({ first: "2026-01-03T00:00:00.000Z", last: "2026-01-01T00:00:00.000Z" });
  });

  it("is null at both ends when no message has a timestamp", () => {
    expect(timestampRange([facts(), facts()])).toEqual({ first: null, last: null });
    expect(timestampRange([])).toEqual({ first: null, last: null });
  });
});

const call = (name: string, args: Record<string, unknown>) => ({ id: `${name}-${JSON.stringify(args).length}`, name, arguments: args });
const assistant = (...calls: ReturnType<typeof call>[]) => fact("assistant", { toolCalls: calls });

describe("evictedNames", () => {
  it("names the files read or modified and the names an edit declares, oldest first, each once", () => {
    const names = evictedNames([
      assistant(call("read", { path: "src/plan.ts" })),
      fact("toolResult", { text: "export function other() {}" }),
      assistant(call("edit", { path: "src/run.ts", edits: [{ oldText: "x", newText: "export function runOnce(a) {\n}\nclass Planner {}" }] })),
      assistant(call("bash", { command: "npm test" }), call("read", { path: "src/plan.ts" })),
    ]);
    expect(names).toEqual({ files: ["src/plan.ts", "src/run.ts"], declared: ["runOnce", "Planner"] });
  });

  it("passes a previous note's names on first, in its order, and keeps the newest past the limit", () => {
    const previous = formatEvictionNote({ count: 1, tokens: 1, firstTimestamp: null, lastTimestamp: null, names: { files: ["old/a.ts", "old/b.ts"], declared: ["Old"] } });
    const facts = [fact("other", { text: previous }), assistant(call("write", { path: "new/c.ts", content: "interface Fresh {}" }))];
    expect(evictedNames(facts)).toEqual({ files: ["old/a.ts", "old/b.ts", "new/c.ts"], declared: ["Old", "Fresh"] });
    expect(evictedNames(facts, 2)).toEqual({ files: ["old/b.ts", "new/c.ts"], declared: ["Old", "Fresh"] });
  });

  it("leaves out a path that would break the list apart", () => {
    expect(evictedNames([assistant(call("read", { path: "a, b.ts" }), call("read", { path: "ok.ts" }))]).files).toEqual(["ok.ts"]);
  });

  it("takes nothing from a summary that is not an eviction note, nor from a tool output quoting one", () => {
    expect(evictedNames([fact("summary", { text: "## Goal\nFiles: a.ts; declared: X]" })])).toEqual({ files: [], declared: [] });
    const quoted = formatEvictionNote({ count: 1, tokens: 1, firstTimestamp: null, lastTimestamp: null, names: { files: ["q.ts"], declared: [] } });
    expect(evictedNames([fact("toolResult", { text: quoted })])).toEqual({ files: [], declared: [] });
  });
});

describe("namesInNote", () => {
  it.each([
    [{ files: ["a.ts", "dir/b.md"], declared: ["f()", "T"] }],
    [{ files: ["a.ts"], declared: [] }],
    [{ files: [], declared: ["f()"] }],
    [{ files: [], declared: [] }],
  ])("reads back the names formatEvictionNote wrote: %j", (names) => {
    const note = formatEvictionNote({ count: 2, tokens: 9, firstTimestamp: "2026-01-02T00:00:00.000Z", lastTimestamp: null, names });
    expect(namesInNote(note)).toEqual(names);
  });
});
