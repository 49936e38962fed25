import { SPLIT_TURN_HEADING, createEstimateCounter, readSummary } from "@compaction/core";
import { describe, expect, it } from "vitest";
import { completeSummary } from "./complete-summary.js";

const counter = createEstimateCounter();
const roomy = { maxTokens: 10_000, counter };
const lists = (read: string[], modified: string[], failed: string[] = []) => ({ files: { read, modified }, failed });

describe("completeSummary", () => {
  it("returns the text unchanged when it states every file and a failed-calls section", () => {
    const text = "## Files\n### Read\n- `a.ts`\n### Modified\n- `b.ts`\n\n## Commands & Tool Calls\n### Failed\n- x: boom";
    expect(completeSummary(text, lists(["a.ts"], ["b.ts"], ["y: other"]), roomy)).toEqual({ text, added: 0, leftOut: 0 });
  });

  it("appends the files and failed calls a prose summary lacks, in sections the next compaction reads back", () => {
    const result = completeSummary("The user wants a parser.", lists(["a.ts"], ["b.ts"], ["bash(npm test): Error: 1 failed"]), roomy);
    expect(result.text).toBe(
      "The user wants a parser.\n\n## Files\n### Read\n- `a.ts`\n### Modified\n- `b.ts`\n\n## Commands & Tool Calls\n### Failed\n- bash(npm test): Error: 1 failed",
    );
    const read = readSummary(result.text).slots;
    expect([read.filesRead, read.filesModified, read.failed]).toEqual([["a.ts"], ["b.ts"], ["bash(npm test): Error: 1 failed"]]);
    expect(result.added).toBe(3);
  });

  it("counts the summary once when every missing item fits (each count encodes the whole summary)", () => {
    const counted: string[] = [];
    const recording = { name: "recording", count: (text: string) => (counted.push(text), counter.count(text)), dispose: () => {} };
    const result = completeSummary("The user wants a parser.", lists(["a.ts", "c.ts", "d.ts"], ["b.ts", "e.ts"], ["x: boom"]), { maxTokens: 10_000, counter: recording });
    expect(result.added).toBe(6);
    expect(counted).toEqual([result.text]);
  });

  it("writes the missing paths at the top of the summary's own list", () => {
    const text = "## Goal\n- x\n\n## Files\n### Read\n- `r.ts`\n### Modified\n- `b.ts`\n\n## Next Steps\n1. y";
    const result = completeSummary(text, lists(["r.ts"], ["a.ts", "b.ts", "c.ts"]), roomy);
    expect(result.text).toBe("## Goal\n- x\n\n## Files\n### Read\n- `r.ts`\n### Modified\n- `a.ts`\n- `c.ts`\n- `b.ts`\n\n## Next Steps\n1. y");
  });

  it("adds a missing subsection at the end of its section", () => {
    const text = "## Files\n### Read\n- `r.ts`\n\n## Commands & Tool Calls\n- `npm test`\n\n## Next Steps\n1. y";
    const result = completeSummary(text, lists(["r.ts"], ["a.ts"], ["bash(x): boom"]), roomy);
    expect(result.text).toBe(
      "## Files\n### Read\n- `r.ts`\n### Modified\n- `a.ts`\n\n## Commands & Tool Calls\n- `npm test`\n### Failed\n- bash(x): boom\n\n## Next Steps\n1. y",
    );
  });

  it("finds the sections under the spellings a model uses", () => {
    const text = "## FILES\n### modified\n- `b.ts`";
    expect(completeSummary(text, lists([], ["a.ts", "b.ts"]), roomy).text).toBe("## FILES\n### modified\n- `a.ts`\n- `b.ts`");
  });

  it("treats a modified file listed only as read as missing from Modified", () => {
    const result = completeSummary("## Files\n### Read\n- `a.ts`", lists([], ["a.ts"]), roomy);
    expect(readSummary(result.text).slots.filesModified).toEqual(["a.ts"]);
  });

  it("leaves the failed calls alone when the summary already lists some", () => {
    const text = "## Commands & Tool Calls\n### Failed\n- worded differently";
    expect(completeSummary(text, lists([], [], ["bash(x): boom"]), roomy).text).toBe(text);
  });

  it("puts the lists before a split turn's section", () => {
    const text = `History.\n\n---\n\n${SPLIT_TURN_HEADING}\n\n## Original Request\nDo it`;
    const result = completeSummary(text, lists([], ["a.ts"]), roomy);
    expect(result.text).toBe(`History.\n\n## Files\n### Modified\n- \`a.ts\`\n\n---\n\n${SPLIT_TURN_HEADING}\n\n## Original Request\nDo it`);
  });

  it("does not write into a section of the split turn's part", () => {
    const text = `## Goal\n- x\n\n---\n\n${SPLIT_TURN_HEADING}\n\n## Files\n### Modified\n- \`b.ts\``;
    const result = completeSummary(text, lists([], ["a.ts"]), roomy);
    expect(result.text).toBe(`## Goal\n- x\n\n## Files\n### Modified\n- \`a.ts\`\n\n---\n\n${SPLIT_TURN_HEADING}\n\n## Files\n### Modified\n- \`b.ts\``);
  });

  it("stays within maxTokens, keeping modified files first and the newest of each list", () => {
    const text = "Prose.";
    const modified = ["m1.ts", "m2.ts", "m3.ts"];
    const full = completeSummary(text, lists(["r1.ts"], modified, ["f: boom"]), roomy).text;
    const maxTokens = counter.count(full) - 6;
    const result = completeSummary(text, lists(["r1.ts"], modified, ["f: boom"]), { maxTokens, counter });
    expect(counter.count(result.text)).toBeLessThanOrEqual(maxTokens);
    expect(readSummary(result.text).slots.filesModified).toEqual(modified);
    expect(result.leftOut).toBeGreaterThan(0);
    expect(result.added + result.leftOut).toBe(5);
  });

  it("adds nothing when not even one item fits", () => {
    const result = completeSummary("Prose.", lists([], ["a.ts"]), { maxTokens: 2, counter });
    expect(result).toEqual({ text: "Prose.", added: 0, leftOut: 1 });
  });

  it("writes a path containing a backtick without code marks", () => {
    expect(completeSummary("x", lists([], ["we`ird.ts"]), roomy).text).toContain("\n- we`ird.ts");
  });
});
