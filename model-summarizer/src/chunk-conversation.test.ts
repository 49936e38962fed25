import { describe, expect, it } from "vitest";
import { createEstimateCounter } from "@compaction/core";
import { chunkConversation, clipToTokens } from "./chunk-conversation.js";

const counter = createEstimateCounter();
const entry = (n: number, tokens: number) => `[User]: ${String(n).padStart(3, "0")} ${"w".repeat(tokens * 4 - 13)}`;

describe("chunkConversation", () => {
  it("keeps a conversation that fits in one chunk", () => {
    const entries = [entry(1, 10), entry(2, 10)];
    expect(chunkConversation(entries, 1000, counter)).toEqual([entries.join("\n\n")]);
  });

  it("splits a longer one into chunks within the room, in order, losing no entry", () => {
    const entries = Array.from({ length: 20 }, (_, i) => entry(i, 30));
    const chunks = chunkConversation(entries, 100, counter);
    expect(chunks.length).toBeGreaterThan(5);
    for (const chunk of chunks) expect(counter.count(chunk)).toBeLessThanOrEqual(100);
    expect(chunks.join("\n\n")).toBe(entries.join("\n\n"));
  });

  it("clips an entry larger than the room in the middle and gives it a chunk of its own", () => {
    const big = `[Tool result] bash: BEGIN ${"x".repeat(4000)} FINISH`;
    const chunks = chunkConversation([entry(1, 10), big, entry(2, 10)], 200, counter);
    expect(chunks).toHaveLength(3);
    expect(chunks[1]?.startsWith("[Tool result] bash: BEGIN")).toBe(true);
    expect(chunks[1]?.endsWith("FINISH")).toBe(true);
    expect(counter.count(chunks[1] ?? "")).toBeLessThanOrEqual(200);
  });
});

describe("clipToTokens", () => {
  it("returns the longest middle-clipped text within the limit", () => {
    const text = "y".repeat(2000);
    const clipped = clipToTokens(text, 100, counter);
    expect(counter.count(clipped)).toBeLessThanOrEqual(100);
    expect(counter.count(clipped)).toBeGreaterThanOrEqual(99);
  });
});
