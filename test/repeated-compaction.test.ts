/**
 * A long real session fed in as it happened, compacting whenever the context passes the
 * preset's threshold: every preset keeps working compaction after compaction, its summary stays
 * bounded, and old split-turn sections do not pile up.
 */
import { createCompactor, SPLIT_TURN_HEADING } from "@compaction/core";
import { loadPiMessages } from "@compaction/fixtures";
import { describe, expect, it } from "vitest";
import { tmpProject } from "./support/tmp-project.js";

const WINDOW = 40_000;

describe.each(["safeguard", "layered", "sliding-window"])("preset %s over a whole session", (preset) => {
  it("compacts repeatedly with a bounded summary and at most one split-turn section", async () => {
    const cwd = tmpProject({
      ".compactionrc.json": JSON.stringify({ preset, contextWindow: WINDOW, reserveTokens: 4_000, tokenizer: { counter: "estimate" } }),
    });
    const compactor = await createCompactor({ cwd });
    const session = loadPiMessages("pi-large-session.jsonl");
    let context: unknown[] = [];
    let compactions = 0;
    for (const message of session) {
      context.push(message);
      if (compactor.tokens.total(context) <= compactor.autoCompact.threshold * WINDOW) continue;
      const result = await compactor.compact({ messages: context, trigger: "auto" });
      if (result.status !== "compacted") continue;
      compactions += 1;
      context = [...result.messages];
      const summary = result.summary ?? "";
      expect(summary.split(SPLIT_TURN_HEADING).length - 1).toBeLessThanOrEqual(1);
      expect(summary.split("## Original Request").length - 1).toBeLessThanOrEqual(1);
      expect(compactor.tokens.counter.count(summary)).toBeLessThanOrEqual(compactor.summaryMaxTokens + 2_500);
    }
    compactor.dispose();
    expect(compactions).toBeGreaterThanOrEqual(3);
    expect(compactor.tokens.total(context)).toBeLessThanOrEqual(WINDOW);
  });
});
