import { describe, it, expect } from "vitest";
import { ErrorCodes } from "../errors.js";
import { createEstimateCounter, estimateStringTokens } from "./estimate-counter.js";

describe("estimateStringTokens", () => {
  const cases: [string, number][] = [
    ["", 0],
    ["a", 1],
    ["abcd", 1],
    ["abcde", 2],
    ["x".repeat(4000), 1000],
  ];
  for (const [text, tokens] of cases) {
    it(`estimates ${text.length} characters as ${tokens} tokens (ceil of length / 4)`, () => {
      expect(estimateStringTokens(text)).toBe(tokens);
    });
  }
});

describe("createEstimateCounter", () => {
  it("names itself estimate:chars/4", () => {
    expect(createEstimateCounter().name).toBe("estimate:chars/4");
  });

  it("counts with the same rule as estimateStringTokens", () => {
    const text = "hello world, this is nineteen-ish";
    expect(createEstimateCounter().count(text)).toBe(Math.ceil(text.length / 4));
  });

  it("throws INPUT_INVALID when counting after dispose", () => {
    const counter = createEstimateCounter();
    counter.dispose();
    expect(() => counter.count("x")).toThrowError(expect.objectContaining({ code: ErrorCodes.INPUT_INVALID }));
  });
});
