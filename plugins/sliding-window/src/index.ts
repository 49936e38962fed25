/**
 * @compaction/plugin-sliding-window: keep the system prompt and the newest messages that fit a
 * share of the context window (at least the last user message), and summarise the middle into
 * one message that begins `Previously:`.
 */
export { PLUGIN_NAME, resolveSlidingWindowOptions, slidingWindow, slidingWindow as default } from "./sliding-window.js";
export { SLIDING_WINDOW_OPTIONS_SCHEMA, type SlidingWindowInput, type SlidingWindowOptions } from "./options.js";
export { compactsSomething, keepTokensFor, selectWindowCut, type WindowCut } from "./select-cut.js";
export { withSummaryPrefix, withoutSummaryPrefix } from "./summary-prefix.js";
