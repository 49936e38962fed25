import { describe, expect, it } from "vitest";
import { summaryLengths } from "./summarize-cut.js";

const base = { maxTokens: 400, turnPrefixMaxTokens: 200, separatorTokens: 10 };

describe("summaryLengths", () => {
  it("gives the configured lengths when they fit", () => {
    expect(summaryLengths({ ...base, isSplitTurn: true, available: 610 })).toEqual({ history: 400, turnPrefix: 200, total: 610, shortened: false });
    expect(summaryLengths({ ...base, isSplitTurn: false, available: 400 })).toEqual({ history: 400, turnPrefix: 200, total: 400, shortened: false });
  });

  it("shortens the history summary to what is left when the turn is whole", () => {
    expect(summaryLengths({ ...base, isSplitTurn: false, available: 150 })).toEqual({ history: 150, turnPrefix: 200, total: 150, shortened: true });
  });

  it("shortens both parts of a split turn's summary in proportion", () => {
    expect(summaryLengths({ ...base, isSplitTurn: true, available: 310 })).toEqual({ history: 200, turnPrefix: 100, total: 310, shortened: true });
  });

  it.each([
    [false, 0],
    [true, 11],
  ])("finds no room when split=%s and %i tokens are left", (isSplitTurn, available) => {
    expect(summaryLengths({ ...base, isSplitTurn, available })).toBeUndefined();
  });
});
