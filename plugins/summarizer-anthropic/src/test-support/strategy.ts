/** A minimal strategy for end-to-end tests: keep the newest tokens, summarise the rest with the compactor's summarizer. */
import { type CompactionPlugin, STAGE_STRATEGY, findCutPoint, summarizeCut } from "@compaction/core";

export function keepRecent(keepRecentTokens: number): CompactionPlugin {
  return {
    name: "keep-recent",
    apply(compactor) {
      compactor.hooks.selectCut.tap({ name: "keep-recent", stage: STAGE_STRATEGY }, (run) => findCutPoint(run.view, { keepRecentTokens }));
      compactor.hooks.summarize.tapPromise({ name: "keep-recent", stage: STAGE_STRATEGY }, async (draft, run) => ({
        ...draft,
        text: await summarizeCut(run, { maxTokens: 1000 }),
      }));
    },
  };
}
