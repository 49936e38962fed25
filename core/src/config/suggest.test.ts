import { describe, expect, it } from "vitest";
import { didYouMean, suggest } from "./suggest.js";

describe("suggest", () => {
  it.each([
    ["contextWindw", "contextWindow"],
    ["contextwindow", "contextWindow"],
    ["rollin", "rolling"],
    ["last-turn-injecton", "last-turn-injection"],
  ])("suggests the near candidate for %s", (input, expected) => {
    expect(suggest(input, ["preset", "contextWindow", "rolling", "last-turn-injection"])).toBe(expected);
  });

  it("suggests nothing when the nearest candidate is too far", () => {
    expect(suggest("zzzzzz", ["preset", "contextWindow"])).toBeUndefined();
  });

  it("allows more edits for longer names (a third of the length)", () => {
    expect(suggest("lastturninjectn", ["last-turn-injection"])).toBe("last-turn-injection");
    expect(suggest("ab", ["xyzw"])).toBeUndefined();
  });

  it("suggests nothing for an exact match or an empty list", () => {
    expect(suggest("preset", ["preset"])).toBeUndefined();
    expect(suggest("preset", [])).toBeUndefined();
  });

  it("phrases a suggestion as a question, or says nothing", () => {
    expect(didYouMean("rollin", ["rolling"])).toBe("Did you mean 'rolling'?");
    expect(didYouMean("zzzzzz", ["rolling"])).toBe("");
  });
});
