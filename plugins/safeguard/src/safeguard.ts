/**
 * safeguard: a summary of what is older than `keepRecentTokens`, the rest kept verbatim. The
 * summary updates the previous one, keeps the cumulative file lists and the failed tool calls,
 * and is written in chunks when the history is long. If the summarizer fails or times out, the
 * compaction fails and the history is left exactly as it was.
 */
import {
  type CompactionPlugin,
  type CompactionRun,
  type Compactor,
  SPLIT_TURN_SEPARATOR,
  STAGE_STRATEGY,
  createOptionsValidator,
} from "@compaction/core";
import { SAFEGUARD_OPTIONS_SCHEMA, type SafeguardOptions, type SafeguardOptionsInput } from "./options.js";
import { selectCut } from "./select-cut.js";
import { type SummarySizes, writeSummary } from "./write-summary.js";

export const PLUGIN_NAME = "safeguard";

const validate = createOptionsValidator<SafeguardOptions>(PLUGIN_NAME, SAFEGUARD_OPTIONS_SCHEMA, {
  generated: new URL("./options-validator.generated.cjs", import.meta.url), // written by the build
});

/**
 * Creates the safeguard plugin. It proposes a cut (selectCut, stage STRATEGY) and writes the
 * summary of any cut while the summary draft is still empty (summarize, stage STRATEGY); it
 * never overwrites another plugin's summary or note. Throws COMPACTION_PLUGIN_OPTIONS_INVALID
 * for bad options.
 */
export function safeguard(options?: SafeguardOptionsInput): CompactionPlugin {
  const settings = validate(options);
  return {
    name: PLUGIN_NAME,
    options: settings as unknown as Readonly<Record<string, unknown>>,
    apply(compactor: Compactor<unknown>) {
      const sizesOf = (run: CompactionRun<unknown>) => summarySizes(run, settings, compactor);
      compactor.hooks.selectCut.tap({ name: PLUGIN_NAME, stage: STAGE_STRATEGY }, (run) =>
        selectCut(run, settings, sizesOf(run)),
      );
      compactor.hooks.summarize.tapPromise({ name: PLUGIN_NAME, stage: STAGE_STRATEGY }, async (draft, run) => {
        if (draft.kind !== "summary" || draft.text.trim() !== "") return draft;
        const text = await writeSummary(run, {
          plugin: PLUGIN_NAME,
          sizes: sizesOf(run),
          chunkTokens: settings.chunkTokens,
          timeoutMs: settings.timeoutMs,
          counter: compactor.tokens.counter,
        });
        return { text, kind: "summary" };
      });
    },
  };
}

/** The run's summary lengths: safeguard's options, else the compactor's summaryMaxTokens. */
function summarySizes(run: CompactionRun<unknown>, settings: SafeguardOptions, compactor: Compactor<unknown>): SummarySizes {
  const maxTokens = settings.summaryMaxTokens ?? run.summaryMaxTokens;
  return {
    maxTokens,
    turnPrefixMaxTokens: settings.turnPrefixMaxTokens ?? Math.max(1, Math.floor(maxTokens / 2)),
    separatorTokens: compactor.tokens.counter.count(SPLIT_TURN_SEPARATOR),
  };
}
