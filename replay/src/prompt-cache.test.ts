import { describe, expect, it } from "vitest";
import { ANTHROPIC_PRICES, billedTokens, OPENAI_PRICES, PromptCacheMeter } from "./prompt-cache.js";

/** Messages as strings whose length is their token count. */
const meter = () => new PromptCacheMeter<string>((m) => m.length);

describe("PromptCacheMeter", () => {
  it("reads the longest prefix of messages equal to the previous request's from the cache", () => {
    const m = meter();
    expect(m.record(["aaaa", "bb"])).toMatchObject({ tokens: 6, cachedMessages: 0, cachedTokens: 0, firstChanged: 0 });
    expect(m.record(["aaaa", "bb", "ccc"])).toMatchObject({ tokens: 9, cachedMessages: 2, cachedTokens: 6, firstChanged: 2 });
    // A message changed early (a prune, a compaction): only what comes before it is cached.
    expect(m.record(["aaaa", "XX", "ccc", "d"])).toMatchObject({ tokens: 10, cachedMessages: 1, cachedTokens: 4, firstChanged: 1 });
    expect(m.record(["aaaa", "XX", "ccc", "d"])).toMatchObject({ cachedMessages: 4, firstChanged: null });
  });

  it("compares messages by content, so a rebuilt copy still hits", () => {
    const m = new PromptCacheMeter<{ text: string }>((x) => x.text.length);
    m.record([{ text: "hello" }]);
    expect(m.record([{ text: "hello" }, { text: "you" }]).cachedTokens).toBe(5);
  });

  it("counts a miss when less than half of the previous request is read back, and the cold first request, but not a large append", () => {
    const m = meter();
    m.record(["a".repeat(100)]); // cold: a miss
    m.record(["a".repeat(100), "b".repeat(1000)]); // a large append: mostly uncached, not a miss
    m.record(["x".repeat(10), "b".repeat(1000)]); // the head changed: a miss
    const summary = m.summary();
    expect(summary.requests).toBe(3);
    expect(summary.misses).toBe(2);
    expect(summary.mostlyUncached).toBe(3);
  });

  it("sums the input, the share read from the cache, the bill at each provider's prices and the largest request", () => {
    const m = meter();
    m.record(["aaaa"]);
    m.record(["aaaa", "bbbbbb"]);
    const summary = m.summary();
    expect(summary.inputTokens).toBe(14);
    expect(summary.cachedTokens).toBe(4);
    expect(summary.hitShare).toBeCloseTo(4 / 14);
    expect(summary.largestRequest).toBe(10);
    // Anthropic: 10 uncached written at 1.25x, 4 read at 0.1x; OpenAI: 10 at 1x, 4 at 0.1x.
    expect(summary.billed).toEqual({ anthropic: Math.round(10 * 1.25 + 4 * 0.1), openai: Math.round(10 + 4 * 0.1) });
  });

  it("prices cached and uncached input as the providers do", () => {
    expect(billedTokens(1000, 900, ANTHROPIC_PRICES)).toBeCloseTo(900 * 0.1 + 100 * 1.25);
    expect(billedTokens(1000, 900, OPENAI_PRICES)).toBeCloseTo(900 * 0.1 + 100);
  });
});
