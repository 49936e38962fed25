/**
 * What a model-summarizer plugin does in `apply`: make its summarizer the compactor's, wrapped
 * with the extractive fallback when configured, its warnings going into the asking run's warnings.
 */
import { type Compactor, type Summarizer } from "@compaction/core";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import { type SummarizerWarn, relaySummarizerWarnings } from "./warnings.js";
import { withFallback } from "./with-fallback.js";

/** What happens when the model fails: `none` rejects (nothing changes), `extractive` writes an extractive summary. */
export type ModelFallback = "none" | "extractive";

export interface InstallModelSummarizerOptions {
  /** The plugin installing the summarizer: its tap and its warnings carry this name. */
  readonly plugin: string;
  /** Builds the summarizer; `warn` adds a warning to the run that asked for the summary. */
  readonly create: (warn: SummarizerWarn) => Summarizer;
  /**
   * `none` (default): a failure rejects, so the compaction fails and the history is left as it
   * was. `extractive`: the extractive summarizer writes the summary instead, with a warning.
   */
  readonly fallback?: ModelFallback;
}

/** Sets `compactor.summarizer` and returns it. Call it from a plugin's `apply`. */
export function installModelSummarizer(compactor: Compactor<any>, options: InstallModelSummarizerOptions): Summarizer {
  const warn = relaySummarizerWarnings(compactor, options.plugin);
  const model = options.create(warn);
  compactor.summarizer = options.fallback === "extractive" ? withFallback(model, createExtractiveSummarizer(), warn) : model;
  return compactor.summarizer;
}
