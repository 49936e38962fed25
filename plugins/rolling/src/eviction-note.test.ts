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

  it("with room for them, names the commands run and the other files the messages named, newest kept", () => {
    const facts = [
      assistant(call("bash", { command: "find src -name '*.ts'" })),
      fact("toolResult", { text: "./core/bash-executor.ts\n./core/session-manager.ts\n./modes/interactive/theme.json" }),
      fact("assistant", { text: "The new layout: src/modes/interactive/components holds the views; see src/cli.ts. Also onSelect/onCancel." }),
      assistant(call("bash", { command: "git log --oneline -5" }), call("read", { path: "src/main.ts" })),
    ];
    const names = evictedNames(facts, { commands: 12, namesChars: 1_000 });
    expect(names.files).toEqual(["src/main.ts"]);
    expect(names.ran).toEqual(["find src -name '*.ts'", "git log --oneline -5"]);
    // Files and folders (three names or more, with a slash) each once; words joined by a slash are not.
    expect(names.mentioned).toEqual(["./core/bash-executor.ts", "./core/session-manager.ts", "./modes/interactive/theme.json", "src/modes/interactive/components/", "src/cli.ts"]);
    // Within the room, the newest first, and none past the first that does not fit.
    expect(evictedNames(facts, { namesChars: 30 }).mentioned).toEqual(["src/cli.ts"]);
    expect(evictedNames(facts, { namesChars: 58 }).mentioned).toEqual(["src/modes/interactive/components/", "src/cli.ts"]);
    // Without room, the note stays as it was.
    expect(evictedNames(facts)).toEqual({ files: ["src/main.ts"], declared: [] });
  });

  it("passes a previous note's commands and other files on, the newer ones kept when the room is full", () => {
    const previous = formatEvictionNote({
      count: 1,
      tokens: 1,
      firstTimestamp: null,
      lastTimestamp: null,
      names: { files: [], declared: [], ran: ["npm test"], mentioned: ["old/x.ts", "old/y.ts"] },
    });
    const facts = [fact("other", { text: previous }), fact("assistant", { text: "Next: new/z.ts" }), assistant(call("bash", { command: "npm run build" }))];
    expect(evictedNames(facts, { commands: 12, namesChars: 1_000 })).toEqual({ files: [], declared: [], ran: ["npm test", "npm run build"], mentioned: ["old/x.ts", "old/y.ts", "new/z.ts"] });
    expect(evictedNames(facts, { commands: 1, namesChars: 33 })).toEqual({ files: [], declared: [], ran: ["npm run build"], mentioned: ["old/y.ts", "new/z.ts"] });
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
    [{ files: ["a.ts"], declared: [], ran: ["git log --oneline"], mentioned: ["src/c.ts", "src/views/"] }],
    [{ files: [], declared: ["f()"], mentioned: ["src/c.ts"] }],
    [{ files: [], declared: [], ran: ["npm test"] }],
  ])("reads back the names formatEvictionNote wrote: %j", (names) => {
    const note = formatEvictionNote({ count: 2, tokens: 9, firstTimestamp: "2026-01-02T00:00:00.000Z", lastTimestamp: null, names });
    expect(namesInNote(note)).toEqual(names);
  });
});
