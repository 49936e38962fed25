import { describe, expect, it } from "vitest";
import { SPLIT_TURN_HEADING } from "../compactor/summarize-cut.js";
import { summaryHasContent } from "./has-content.js";

describe("summaryHasContent", () => {
  it.each([
    ["blank", "  \n\n "],
    ["headings only", "## Goal\n\n## Progress\n### Done\n"],
    ["headings, a rule and the split-turn label", `## Goal\n\n---\n\n${SPLIT_TURN_HEADING}\n\n## Progress`],
    ["an empty quote", "## Goal\n>\n"],
  ])("has nothing in it: %s", (_name, text) => {
    expect(summaryHasContent(text)).toBe(false);
  });

  it.each([
    ["a sentence", "Fixed the build."],
    ["a heading with a bullet", "## Goal\n- fix the build"],
    ["a quoted request", "## Goal\n> **User:** RE [...truncated]"],
  ])("has something in it: %s", (_name, text) => {
    expect(summaryHasContent(text)).toBe(true);
  });
});
