/** Small plugins for tests: a fixed cut and a fixed base summary. */
import { type CompactionPlugin, type SummaryDraft, STAGE_STRATEGY } from "@compaction/core";

/** Cuts so that messages from `index` on are kept; a function is asked again on every run. */
export function cutAt(index: number | (() => number)): CompactionPlugin {
  return {
    name: "test-cut",
    apply(compactor) {
      compactor.hooks.selectCut.tap("test-cut", () => ({ firstKeptIndex: typeof index === "number" ? index : index() }));
    },
  };
}

/** Writes `text` as the base summary at STAGE_STRATEGY with the given draft kind. */
export function baseSummary(text: string, kind: SummaryDraft["kind"] = "summary"): CompactionPlugin {
  return {
    name: "test-summary",
    apply(compactor) {
      compactor.hooks.summarize.tap({ name: "test-summary", stage: STAGE_STRATEGY }, (draft) => ({ ...draft, text, kind }));
    },
  };
}

/** Writes the summary with the compactor's summarizer (the extractive one by default). */
export function summarizerSummary(maxTokens = 2000): CompactionPlugin {
  return {
    name: "test-summarizer",
    apply(compactor) {
      compactor.hooks.summarize.tapPromise({ name: "test-summarizer", stage: STAGE_STRATEGY }, async (draft, run) => ({
        ...draft,
        text: await run.summarize(run.historyMessages(), { maxTokens }),
      }));
    },
  };
}

/** The part of a summary from the last-exchange heading on, or "" when it has none. */
export function sectionOf(summary: string | null, heading: string): string {
  if (summary === null) return "";
  const at = summary.indexOf(heading);
  return at < 0 ? "" : summary.slice(at);
}

