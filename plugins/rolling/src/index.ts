/**
 * @compaction/plugin-rolling — evict, don't summarise: drop the oldest messages until the
 * context is under a share of the window, leave one note pointing at the recall tool, and fall
 * back to a safeguard summary when the agent has no recall.
 */
import { rolling } from "./rolling.js";

export { PLUGIN_NAME, rolling } from "./rolling.js";
export { rollingEvict, type RollingEviction, type RollingEvictInput } from "./rolling-evict.js";
export { planEviction, type EvictionPlan, type EvictionPlanOptions } from "./plan-eviction.js";
export { evictedNames, type EvictedNames, formatEvictionNote, isoTimestamp, namesInNote, NOTE_NAMES_SHARE, NOTE_NAMES_LIMIT, noteNameLimits, type NoteNameLimits, timestampRange, type EvictionNoteFacts } from "./eviction-note.js";
export { ROLLING_OPTIONS_SCHEMA, type RecallSetting, type RollingOptions, type RollingOptionsInput } from "./options.js";

export default rolling;
