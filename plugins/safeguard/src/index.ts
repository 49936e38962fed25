/**
 * @compaction/plugin-safeguard: a summary you can trust, or no change at all. Summarises what
 * is older than `keepRecentTokens` and keeps the rest verbatim; a failed or late summary
 * leaves the history exactly as it was.
 */
import { safeguard } from "./safeguard.js";

export { PLUGIN_NAME, safeguard } from "./safeguard.js";
export { SAFEGUARD_OPTIONS_SCHEMA, type SafeguardOptions, type SafeguardOptionsInput } from "./options.js";
export { SAFEGUARD_LAYER, chooseCut, type ChooseCutOptions } from "./choose-cut.js";
export { collectFileLists, fileListsOfSummary, fileOperationOf, type FileLists, type FileOperation } from "./file-lists.js";
export { collectFailedCalls, failedCallLine } from "./failed-calls.js";
export {
  completeSummary,
  listsTokens,
  type CompleteSummaryOptions,
  type CompletedSummary,
  type RequiredLists,
} from "./complete-summary.js";
export { guardSummary, type SummaryGuardOptions } from "./guard-summary.js";
export default safeguard;
