import { describe, expect, it } from "vitest";
import { formatUsageLine, usagePercent, usageTone } from "./usage-line.js";

describe("formatUsageLine", () => {
  it("draws ten cells, the percentage and both token counts", () => {
    expect(formatUsageLine(6240, 8000)).toBe("[████████░░] 78% context (6,240 / 8,000 tokens)");
  });

  it.each([
    [0, 8000, "[░░░░░░░░░░] 0% context (0 / 8,000 tokens)"],
    [400, 8000, "[█░░░░░░░░░] 5% context (400 / 8,000 tokens)"],
    [8000, 8000, "[██████████] 100% context (8,000 / 8,000 tokens)"],
    [9000, 8000, "[██████████] 113% context (9,000 / 8,000 tokens)"],
  ])("rounds %i of %i to the nearest cell and keeps the bar within its width", (used, window, line) => {
    expect(formatUsageLine(used, window)).toBe(line);
  });

  it("draws as many cells as width asks", () => {
    expect(formatUsageLine(50, 100, { width: 4 })).toBe("[██░░] 50% context (50 / 100 tokens)");
  });

  it("hands the filled and empty parts to paint with their tone", () => {
    const line = formatUsageLine(7500, 10_000, { paint: (text, tone) => `<${tone}>${text}</${tone}>` });
    expect(line).toBe("[<medium>████████</medium><empty>░░</empty>] 75% context (7,500 / 10,000 tokens)");
  });
});

describe("usageTone", () => {
  it.each([
    [0.69, "low"],
    [0.7, "medium"],
    [0.89, "medium"],
    [0.9, "high"],
    [1.2, "high"],
  ])("is %s -> %s", (ratio, tone) => {
    expect(usageTone(ratio)).toBe(tone);
  });
});

describe("usagePercent", () => {
  it("is 0 for a window that is not positive", () => {
    expect(usagePercent(100, 0)).toBe(0);
  });
});
