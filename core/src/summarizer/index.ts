/** Summarizers: the Summarizer contract and the extractive summarizer (no model needed). */
export * from "./summarizer.js";
export { createExtractiveSummarizer, type ExtractiveSummarizerOptions } from "./extractive.js";
export {
  EARLIER_SUMMARY_HEADING,
  FOCUS_TITLE,
  HISTORY_LAYOUT,
  PENDING_PREFIX,
  RESPOND_PREFIX,
  TURN_PREFIX_TITLES,
  readSummary,
  type ExtraSection,
  type LayoutEntry,
  type SlotId,
  type SummaryState,
} from "./layout.js";
export { parseSections, type ParsedMarkdown, type RawSection } from "./sections.js";
export { PATH_FIELDS, readToolCall, type ToolCallKind, type ToolCallReading } from "./tool-calls.js";
export * from "./model/index.js";
