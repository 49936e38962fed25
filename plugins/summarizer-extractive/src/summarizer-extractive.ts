/**
 * The summarizer-extractive plugin: installs the extractive summarizer (no model, no network, no
 * API key) as the compactor's summarizer, unless another summarizer is already installed.
 */
import { type CompactionPlugin, createOptionsValidator } from "@compaction/core";
import { createExtractiveSummarizer } from "./extractive.js";
import { SUMMARIZER_EXTRACTIVE_OPTIONS_SCHEMA, type SummarizerExtractiveOptions } from "./options.js";

export const PLUGIN_NAME = "summarizer-extractive";

const validateOptions = createOptionsValidator<SummarizerExtractiveOptions>(PLUGIN_NAME, SUMMARIZER_EXTRACTIVE_OPTIONS_SCHEMA, {
  generated: new URL("./options-validator.generated.cjs", import.meta.url), // written by the build
});

/**
 * Creates the plugin. Its `apply` sets `compactor.summarizer` only when the compactor has none:
 * every built-in preset lists this plugin so a preset works with no model and no key, and a
 * model summarizer plugin (applied before it, from the config's own `plugins`, or after it)
 * still wins. Throws COMPACTION_PLUGIN_OPTIONS_INVALID for bad options.
 */
export function summarizerExtractive(options?: Partial<SummarizerExtractiveOptions>): CompactionPlugin {
  const resolved = validateOptions(options);
  const summarizer = createExtractiveSummarizer(resolved);
  return {
    name: PLUGIN_NAME,
    options: resolved as unknown as Readonly<Record<string, unknown>>,
    apply(compactor) {
      if (!compactor.hasSummarizer) compactor.summarizer = summarizer;
    },
  };
}
