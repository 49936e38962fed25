import { describe, expect, it } from "vitest";
import { colorEnabled, colors, describeAfterMeasure, describeMeasure, formatAge, type TokenMeasure, usageBar } from "./output.js";

const plain = colors(false);

describe("output", () => {
  it("draws the usage bar as in the issue: [████████░░] 78% context (6,240 / 8,000 tokens)", () => {
    expect(usageBar(6240, 8000, plain)).toBe("[████████░░] 78% context (6,240 / 8,000 tokens)");
  });

  it("fills every cell when the context is at or over the window", () => {
    expect(usageBar(9000, 8000, plain)).toBe("[██████████] 113% context (9,000 / 8,000 tokens)");
  });

  it("colours a terminal unless NO_COLOR or --no-color, and a pipe only with FORCE_COLOR", () => {
    const tty = { write: () => true, isTTY: true };
    const pipe = { write: () => true, isTTY: false };
    expect(colorEnabled(tty, {}, true)).toBe(true);
    expect(colorEnabled(tty, { NO_COLOR: "1" }, true)).toBe(false);
    expect(colorEnabled(tty, {}, false)).toBe(false);
    expect(colorEnabled(pipe, {}, true)).toBe(false);
    expect(colorEnabled(pipe, { FORCE_COLOR: "1" }, true)).toBe(true);
    expect(colorEnabled(pipe, { FORCE_COLOR: "0" }, true)).toBe(false);
  });

  it("words the time since an event in its largest whole unit", () => {
    expect([5_000, 60_000, 7_200_000, 3 * 86_400_000].map(formatAge)).toEqual(["5 seconds ago", "1 minute ago", "2 hours ago", "3 days ago"]);
  });
});

describe("describeMeasure", () => {
  const measure = (overrides: Partial<TokenMeasure>): TokenMeasure => ({
    base: "usage",
    counted: 2,
    counter: "tiktoken:o200k_base",
    ratio: 1.25,
    perMessage: 13,
    source: "usage",
    samples: 14,
    model: "anthropic/claude-sonnet-4-5",
    ...overrides,
  });

  it.each<[string, Partial<TokenMeasure>, string]>([
    ["a usage figure and calibrated messages after it", {}, "provider's: usage figure + o200k x1.25 +13/message after it (from 14 usage pairs, anthropic/claude-sonnet-4-5)"],
    ["the compaction's After and messages since", { base: "compaction" }, "provider's: the last compaction's After + o200k x1.25 +13/message on the 2 messages since (from 14 usage pairs, anthropic/claude-sonnet-4-5)"],
    ["a usage figure covering every message, not calibrated", { counted: 0, ratio: null, perMessage: null, source: null, samples: 0, model: null }, "provider's: usage figure of the newest message (nothing after it to count)"],
    ["the compaction's After covering every message", { base: "compaction", counted: 0, ratio: null, perMessage: null, source: null, samples: 0, model: null }, "provider's: the last compaction's After (no messages since)"],
    ["no figure, calibrated from usage pairs", { base: "count", counted: 5 }, "provider's: o200k x1.25 +13/message of every message (from 14 usage pairs, anthropic/claude-sonnet-4-5)"],
    ["no figure and nothing to calibrate from", { base: "count", counted: 5, ratio: 1, perMessage: 0, source: "none", samples: 0, model: null }, "raw o200k count of every message (no usage figure to start from or calibrate with yet)"],
    ["no usage pairs after a usage figure", { ratio: 1, perMessage: 0, source: "none", samples: 0, model: null }, "usage figure + raw o200k count after it (no usage pairs to calibrate from yet)"],
    ["the compaction's After and a message since, measured by the calibration the compaction recorded", { base: "compaction", counted: 1, source: "compaction", samples: 16, model: "anthropic/claude-opus-4-5" }, "provider's: the last compaction's After + o200k x1.25 +13/message on the 1 message since (from 16 usage pairs before the last compaction, anthropic/claude-opus-4-5)"],
    ["a usage figure covering every message, calibrated (compact)", { counted: 0 }, "provider's: usage figure of the newest message (nothing after it to count)"],
    ["the compaction's After covering every message, calibrated", { base: "compaction", counted: 0 }, "provider's: the last compaction's After (no messages since)"],
  ])("%s", (_case, overrides, expected) => {
    expect(describeMeasure(measure(overrides))).toBe(expected);
  });
});

describe("describeAfterMeasure", () => {
  it("names the counter, the run's ratio and what it is", () => {
    expect(describeAfterMeasure("tiktoken:o200k_base", 177_657, 137_498, 914)).toBe("After: o200k x1.29 (Before over our count of the 914 messages before)");
    expect(describeAfterMeasure("estimate", 100, 100, 1)).toBe("After: estimate x1.00 (Before over our count of the 1 message before)");
  });

  it("says After is our count when Before is under it (a provider that counts fewer tokens: the run's ratio is at least 1)", () => {
    expect(describeAfterMeasure("tiktoken:o200k_base", 110_000, 137_498, 914)).toBe("After: o200k x1.00 (Before is under our count of the 914 messages before: After is our count)");
  });
});
