import { describe, expect, it } from "vitest";
import { counterLabel, mentionsCountedTokens, warningsMeasureNote } from "./warnings-measure.js";

describe("warningsMeasureNote", () => {
  const lowered = "[safeguard] keepRecentTokens (20000) was lowered to 6538 for this run, to leave room for the summary (4000 tokens) in the budget of 10538 tokens.";
  const provider = "[rolling] Evicted as much as allowed, but about 30000 tokens remain (note included, as the provider counts them), over the target of 20000.";

  it("says the figures are our count and gives the provider's ratio", () => {
    expect(warningsMeasureNote([lowered], "tiktoken:o200k_base", 1.2919)).toBe(
      "the token figures in this warning are our o200k count; the provider counts 1.29x that on this session.",
    );
    expect(warningsMeasureNote([lowered, lowered], "estimate", 1.5)).toMatch(/^the token figures in these warnings are our estimate count; the provider counts 1\.50x/);
  });

  it("says nothing without a figure in our count, or when both counts are one", () => {
    expect(warningsMeasureNote([], "tiktoken:o200k_base", 1.3)).toBeNull();
    expect(warningsMeasureNote(["[layered] full compaction: everything but pinned messages and the last turn was summarised"], "tiktoken:o200k_base", 1.3)).toBeNull();
    expect(warningsMeasureNote([provider], "tiktoken:o200k_base", 1.3)).toBeNull();
    expect(warningsMeasureNote([lowered], "tiktoken:o200k_base", 1.004)).toBeNull();
  });

  it("counts only the warnings in our count", () => {
    expect(mentionsCountedTokens(lowered)).toBe(true);
    expect(mentionsCountedTokens(provider)).toBe(false);
    expect(warningsMeasureNote([lowered, provider], "tiktoken:o200k_base", 1.3)).toMatch(/in this warning are/);
    expect(counterLabel("tiktoken:cl100k_base")).toBe("cl100k");
  });
});
