/**
 * @compaction/plugin-summarizer-extractive: the summarizer that needs no model, no network and no
 * API key. It builds a structured markdown summary from the messages alone, deterministically;
 * it is what every built-in preset summarises with, and what a model summarizer falls back to.
 */
import { summarizerExtractive } from "./summarizer-extractive.js";

export { PLUGIN_NAME, summarizerExtractive } from "./summarizer-extractive.js";
export { createExtractiveSummarizer, EXTRACTIVE_DEFAULT_LIMITS, type ExtractiveSummarizerOptions } from "./extractive.js";
export { DEFAULT_SUMMARY_MAX_TOKENS, extractSessionState, type ExtractSessionStateOptions } from "./extract-session-state.js";
export { SUMMARIZER_EXTRACTIVE_OPTIONS_SCHEMA, type SummarizerExtractiveOptions } from "./options.js";

export default summarizerExtractive;
