import { describe, expect, it } from "vitest";
import { createEstimateCounter } from "@compaction/core";
import { cleanModelOutput, fitModelSummary } from "./model-output.js";

const counter = createEstimateCounter();

describe("cleanModelOutput", () => {
  it("removes a leading reasoning block", () => {
    expect(cleanModelOutput("<think>\nlet me see\n</think>\n\n## Goal\n- x")).toBe("## Goal\n- x");
  });

  it("unwraps a code fence around the whole answer", () => {
    expect(cleanModelOutput("```markdown\n## Goal\n- x\n```\n")).toBe("## Goal\n- x");
  });

  it("unwraps <summary> tags around the whole answer", () => {
    expect(cleanModelOutput("<summary>\n## Goal\n- x\n</summary>")).toBe("## Goal\n- x");
  });

  it("drops a one-line lead-in before the first heading, and keeps other text before it", () => {
    expect(cleanModelOutput("Here is the updated summary:\n\n## Goal\n- x")).toBe("## Goal\n- x");
    expect(cleanModelOutput("The user works on the parser.\n\n## Goal\n- x")).toBe("The user works on the parser.\n\n## Goal\n- x");
  });

  it("keeps code fences inside the summary", () => {
    const text = "## Goal\n- x\n\n```ts\nconst a = 1;\n```";
    expect(cleanModelOutput(text)).toBe(text);
  });
});

describe("fitModelSummary", () => {
  it("returns a summary that fits unchanged", () => {
    const text = "Intro\n\n## Goal\n-   x\n\n\n## Next Steps\n1. y";
    expect(fitModelSummary(text, 1000, counter)).toBe(text);
  });

  it("drops the last lines of the longest section first and keeps every heading", () => {
    const done = Array.from({ length: 40 }, (_, i) => `- [x] finished step number ${i}`).join("\n");
    const text = `## Goal\n- ship it\n\n## Progress\n### Done\n${done}\n\n## Next Steps\n1. release`;
    const fitted = fitModelSummary(text, 150, counter);
    expect(counter.count(fitted)).toBeLessThanOrEqual(150);
    for (const heading of ["## Goal", "## Progress", "### Done", "## Next Steps"]) expect(fitted).toContain(heading);
    expect(fitted).toContain("- ship it");
    expect(fitted).toContain("1. release");
    expect(fitted).toContain("finished step number 0");
    expect(fitted).not.toContain("finished step number 39");
  });
});
