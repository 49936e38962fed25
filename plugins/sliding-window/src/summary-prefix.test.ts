import { describe, expect, it } from "vitest";
import { withSummaryPrefix, withoutSummaryPrefix } from "./summary-prefix.js";

describe("withSummaryPrefix", () => {
  it.each([
    ["one line", "Previously:", "Previously: one line"],
    ["## Goal\n- fix the build", "Previously:", "Previously:\n\n## Goal\n- fix the build"],
    ["  padded  ", "Earlier:", "Earlier: padded"],
  ])("puts the prefix before %j", (summary, prefix, expected) => {
    expect(withSummaryPrefix(summary, prefix)).toBe(expected);
  });

  it("leaves an empty summary empty, so the core can refuse it", () => {
    expect(withSummaryPrefix("", "Previously:")).toBe("");
    expect(withSummaryPrefix(" \n ", "Previously:")).toBe("");
  });
});

describe("withoutSummaryPrefix", () => {
  it.each([
    ["Previously: one line", "one line"],
    ["Previously:\n\n## Goal\n- x", "## Goal\n- x"],
    ["## Goal\n- x", "## Goal\n- x"],
    ["previously: lower case is not the prefix", "previously: lower case is not the prefix"],
  ])("reads %j back as %j", (text, expected) => {
    expect(withoutSummaryPrefix(text, "Previously:")).toBe(expected);
  });

  it("undoes withSummaryPrefix for any summary that starts with non-space text", () => {
    for (const summary of ["a", "## Goal\n- fix", "Previously: nested"]) {
      expect(withoutSummaryPrefix(withSummaryPrefix(summary, "Previously:"), "Previously:")).toBe(summary);
    }
  });
});
