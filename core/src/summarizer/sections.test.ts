import { describe, expect, it } from "vitest";
import { parseItemLine, parseSections, renderBlocks, renderItem, unwrapCode } from "./sections.js";

describe("parseSections", () => {
  it("splits at ## and ### headings and keeps text before the first heading as preamble", () => {
    const parsed = parseSections("intro line\n\n## Goal\n- a\n### Sub\n- b\n## Next\n");
    expect(parsed.preamble).toEqual(["intro line"]);
    expect(parsed.sections.map((s) => [s.level, s.title, s.lines])).toEqual([
      [2, "Goal", ["- a"]],
      [3, "Sub", ["- b"]],
      [2, "Next", []],
    ]);
  });

  it("does not treat # or #### lines as section headings", () => {
    const parsed = parseSections("## A\n# top\n#### deep\n");
    expect(parsed.sections).toHaveLength(1);
    expect(parsed.sections[0]?.lines).toEqual(["# top", "#### deep"]);
  });
});

describe("parseItemLine", () => {
  const cases: [string, string | undefined, boolean | undefined][] = [
    ["- plain", "plain", undefined],
    ["* star", "star", undefined],
    ["3. numbered", "numbered", undefined],
    ["- [x] checked", "checked", true],
    ["- [ ] open", "open", false],
    ["bare text", "bare text", undefined],
    ["- (none)", undefined, undefined],
    ["---", undefined, undefined],
    ["   ", undefined, undefined],
  ];
  it.each(cases)("%j -> %j", (line, text, checked) => {
    const item = parseItemLine(line);
    expect(item?.text).toBe(text);
    expect(item?.checked).toBe(checked);
  });
});

describe("renderItem", () => {
  it("writes each style so parseItemLine reads the same text back", () => {
    for (const style of ["bullet", "done", "todo", "numbered", "code"] as const) {
      const line = renderItem(style, "src/a.ts", 4);
      expect(unwrapCode(parseItemLine(line)?.text ?? "")).toBe("src/a.ts");
    }
  });

  it("does not wrap code containing a backtick in backticks", () => {
    expect(renderItem("code", "echo `date`", 0)).toBe("- echo `date`");
  });

  it("never writes a plain line that reads back as a heading", () => {
    expect(renderItem("text", "## Task do X", 0)).toBe("Task do X");
  });
});

describe("renderBlocks", () => {
  it("puts a blank line before each ## heading and leaves out empty optional blocks", () => {
    const text = renderBlocks([
      { heading: "## A", style: "bullet", items: [{ text: "x", rank: 0 }], optional: false },
      { heading: "### B", style: "todo", items: [], optional: false },
      { heading: "## Extra", style: "verbatim", items: [], optional: true },
      { heading: "## C", style: "numbered", items: [{ text: "y", rank: 0 }, { text: "z", rank: 1 }], optional: false },
    ]);
    expect(text).toBe("## A\n- x\n### B\n\n## C\n1. y\n2. z");
  });
});
