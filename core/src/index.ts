/**
 * @compaction/core — the engine: four hooks, message adapters, token counting, cut rules,
 * the extractive summarizer and configuration.
 */
export * from "./errors.js";
export * from "./event.js";
export * from "./messages/index.js";
export * from "./tokens/index.js";
export * from "./select-messages.js";
export * from "./cut/index.js";
export * from "./summarizer/index.js";
export * from "./config/index.js";
export * from "./transcript/index.js";
export * from "./state/index.js";
export * from "./context-manager/index.js";
export {
  type AutoCompactSettings,
  Compactor,
  type CompactorHooks,
  type CompactorOptions,
  DEFAULT_AUTO_COMPACT_THRESHOLD,
} from "./compactor/compactor.js";
export { CompactionRun, type CompactInput, isEmptyDraft, type SummaryDraft, type SummarizeOptions } from "./compactor/run.js";
export type { CompactionResult, CompactionStatus } from "./compactor/result.js";
export type { CompactionPlugin, PluginFactory, Preset, PresetEntry } from "./compactor/plugin.js";
export * from "./compactor/stages.js";
export { SPLIT_TURN_HEADING, summarizeCut, summarizeInChunks, summaryRoom, type SummarizeCutOptions } from "./compactor/summarize-cut.js";
