import { describe, expect, it } from "vitest";
import { degradationRisk, riskAdvice } from "./degradation.js";

describe("degradationRisk", () => {
  it.each([
    [0, "low"],
    [2, "low"],
    [3, "medium"],
    [4, "medium"],
    [5, "high"],
    [9, "high"],
  ])("is %i compactions -> %s", (count, risk) => {
    expect(degradationRisk(count)).toBe(risk);
  });
});

describe("riskAdvice", () => {
  it("suggests exporting and importing into a fresh session at high risk", () => {
    expect(riskAdvice("high")).toMatch(/compaction context export .* compaction context import/);
  });

  it("suggests a fresh start soon at medium risk", () => {
    expect(riskAdvice("medium")).toMatch(/consider a fresh start soon \(compaction context export, then context import\)/);
  });

  it("has nothing to say at low risk", () => {
    expect(riskAdvice("low")).toBeNull();
  });
});
