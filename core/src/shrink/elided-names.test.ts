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

  it("skips a blob (a run of name characters longer than 256) whole, and finds the names around it", () => {
    // A 2 MB run (base64, a minified line) once took the path pattern quadratic time: minutes.
    const text = `see src/before.ts ${"L".repeat(2_000_000)} then ${"a/".repeat(1_000_000)} and ENOENT in src/after.ts`;
    expect(elidedNames(text, "")).toEqual(["src/before.ts", "ENOENT", "src/after.ts"]);
  });

  it("finds a path after slashes and a name after a dollar sign, as in the text", () => {
    expect(elidedNames("mounted //server/share/data.csv from $HOME/projects/app", "")).toEqual(["/server/share/data.csv", "HOME/projects/app"]);
  });

  it("looks only between from and to, leaving out a run either end cuts", () => {
    const text = "head src/head.ts | middle src/mid.ts and src/cut.ts | tail src/tail.ts";
    const from = text.indexOf("middle");
    const to = text.indexOf("src/cut.ts") + 5;
    expect(elidedNames(text, "", from, to)).toEqual(["src/mid.ts"]);
    expect(elidedNames(text, "", from)).toEqual(["src/mid.ts", "src/cut.ts", "src/tail.ts"]);
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
