/**
 * A minimal strategy for testing what other plugins do around a compaction (a summarizer, say):
 * keep the newest `keepRecentTokens`, summarise the rest with the compactor's summarizer.
 */
import { findCutPoint } from "../cut/find-cut-point.js";
import type { CompactionPlugin } from "../compactor/plugin.js";
import { STAGE_STRATEGY } from "../compactor/stages.js";
import { summarizeCut } from "../compactor/summarize-cut.js";

export function keepRecent(keepRecentTokens: number, options: { readonly summaryMaxTokens?: number } = {}): CompactionPlugin {
  const maxTokens = options.summaryMaxTokens ?? 1000;
  return {
    name: "keep-recent",
    apply(compactor) {
      compactor.hooks.selectCut.tap({ name: "keep-recent", stage: STAGE_STRATEGY }, (run) => findCutPoint(run.view, { keepRecentTokens }));
      compactor.hooks.summarize.tapPromise({ name: "keep-recent", stage: STAGE_STRATEGY }, async (draft, run) => ({
        ...draft,
        text: await summarizeCut(run, { maxTokens }),
      }));
    },
  };
}
