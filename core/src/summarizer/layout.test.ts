import { describe, expect, it } from "vitest";
import { EARLIER_SUMMARY_HEADING, readSummary } from "./layout.js";

describe("readSummary", () => {
  it("folds a split turn's summary into the history, so split-turn blocks do not pile up", () => {
    const previous = [
      "## Goal",
      "- fix the parser",
      "",
      "## Next Steps",
      "1. run the tests",
      "",
      "---",
      "",
      "**Turn Context (split turn):**",
      "",
      "## Original Request",
      "deploy to staging",
      "",
      "## Early Progress",
      "- built the image",
      "",
      "## Context for Suffix",
      "- the deploy script is scripts/deploy.sh",
    ].join("\n");
    const state = readSummary(previous);
    expect(state.slots.goal).toEqual(["fix the parser", "deploy to staging"]);
    expect(state.slots.done).toEqual(["built the image", "the deploy script is scripts/deploy.sh"]);
    expect(state.slots.nextSteps).toEqual(["run the tests"]);
    expect(state.extras).toEqual([]);
  });

  it("reads our own sections into their lists", () => {
    const state = readSummary(
      [
        "## Goal",
        "- Port the selector",
        "## Constraints & Preferences",
        "- Never use chalk directly",
        "## Progress",
        "### Done",
        "- [x] Read theme.ts",
        "### In Progress",
        "- [ ] Port user-message-selector.ts",
        "## Key Decisions",
        "- Use Text instead of raw strings",
        "## Files",
        "### Read",
        "- `docs/theme.md`",
        "### Modified",
        "- `src/a.ts`",
        "## Commands & Tool Calls",
        "- `npm run check`",
        "### Failed",
        "- bash(npm test): exit 1",
        "## Identifiers",
        "- `#123`",
        "## Next Steps",
        "1. Run the tests",
      ].join("\n"),
    );
    expect(state.slots).toEqual({
      goal: ["Port the selector"],
      currentTask: [],
      plan: [],
      constraints: ["Never use chalk directly"],
      done: ["Read theme.ts"],
      inProgress: ["Port user-message-selector.ts"],
      decisions: ["Use Text instead of raw strings"],
      filesRead: ["docs/theme.md"],
      filesModified: ["src/a.ts"],
      commands: ["npm run check"],
      failed: ["bash(npm test): exit 1"],
      identifiers: ["#123"],
      nextSteps: ["Run the tests"],
    });
    expect(state.extras).toEqual([]);
  });

  it("reads pi's model-written format: checkboxes decide done or in progress, unknown sections are kept verbatim", () => {
    const state = readSummary(
      "## Goal\nShip it\n\n## Progress\n### Done\n- [x] A\n\n### In Progress\n- [x] B\n- [ ] C\n\n### Blocked\n- waiting on CI\n\n## Critical Context\n- keep **this**\n  - nested\n",
    );
    expect(state.slots.goal).toEqual(["Ship it"]);
    expect(state.slots.done).toEqual(["A", "B"]);
    expect(state.slots.inProgress).toEqual(["C"]);
    expect(state.extras).toEqual([
      { heading: "### Blocked", parent: "Progress", lines: ["- waiting on CI"] },
      { heading: "## Critical Context", lines: ["- keep **this**", "  - nested"] },
    ]);
  });

  it("reads pi's <read-files> and <modified-files> lists as files", () => {
    const state = readSummary("## Goal\n- g\n\n<read-files>\na.ts\nb.ts\n</read-files>\n\n<modified-files>\nc.ts\n</modified-files>");
    expect([state.slots.filesRead, state.slots.filesModified, state.slots.goal]).toEqual([["a.ts", "b.ts"], ["c.ts"], ["g"]]);
  });

  it("keeps the ### subsections of an unknown section inside it", () => {
    const state = readSummary("## Notes\nline\n### Sub\nmore");
    expect(state.extras).toEqual([{ heading: "## Notes", lines: ["line", "### Sub", "more"] }]);
  });

  it("keeps text before any heading under Earlier Summary", () => {
    const state = readSummary("The user wants X.\nWe did Y.");
    expect(state.extras).toEqual([{ heading: EARLIER_SUMMARY_HEADING, lines: ["The user wants X.", "We did Y."] }]);
  });

  it("does not carry over a previous Focus", () => {
    const state = readSummary("## Focus\nthe parser\n## Goal\n- g");
    expect(state.extras).toEqual([]);
    expect(state.slots.goal).toEqual(["g"]);
  });

  it("accepts heading spellings models use", () => {
    const state = readSummary("## Constraints and Preferences\n- c\n## Decisions\n- d");
    expect([state.slots.constraints, state.slots.decisions]).toEqual([["c"], ["d"]]);
  });
});
