import { describe, expect, it } from "vitest";
import { elidedNames, namesLine } from "./elided-names.js";

describe("elidedNames", () => {
  it.each([
    ["a path", "then read src/shrink/head-and-tail.ts again", "src/shrink/head-and-tail.ts"],
    ["a file name", "wrote package.json", "package.json"],
    ["a dotted name", "if member.name.endswith('x'):", "member.name.endswith"],
    ["a snake_case name", "def test_corrupted_nested_zip(self):", "test_corrupted_nested_zip"],
    ["a camelCase name", "calls shrinkToBudget first", "shrinkToBudget"],
    ["a PascalCase name", "a MessageFacts object", "MessageFacts"],
    ["a long flag", "git log --oneline", "--oneline"],
    ["an error code", "failed with ENOENT and TS2345", "ENOENT"],
  ])("finds %s", (_kind, text, name) => {
    expect(elidedNames(text, "")).toContain(name);
  });

  it("leaves out plain words, short names and what the kept part shows", () => {
    expect(elidedNames("the quick brown fox, e.g. a_b and fooBar", "fooBar")).toEqual([]);
  });

  it("lists each name once, in order of first appearance", () => {
    expect(elidedNames("nested.zip then valid.txt then nested.zip", "")).toEqual(["nested.zip", "valid.txt"]);
  });
});

describe("namesLine", () => {
  it("lists the names that fit, skipping one too long for what is left", () => {
    const line = namesLine(["alpha_one", "a_very_long_name_that_does_not_fit_here", "beta_two"], 50);
    expect(line).toBe("[names in the removed part: alpha_one, beta_two]");
    expect(line.length).toBeLessThanOrEqual(50);
  });

  it("is empty when no name fits", () => {
    expect(namesLine(["alpha_one"], 20)).toBe("");
  });
});
