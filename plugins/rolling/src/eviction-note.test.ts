import { fact } from "@compaction/core/testing";
import { describe, expect, it } from "vitest";
import { formatEvictionNote, isoTimestamp, timestampRange } from "./eviction-note.js";

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
