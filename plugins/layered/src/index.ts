/**
 * @compaction/plugin-layered — prune old tool outputs, then summarise older messages, then
 * summarise everything but pinned messages and the newest turns that fit, each layer at its own share of
 * the context window.
 */
export {
  FULL_COMPACTION_WARNING,
  FULL_SPLIT_COMPACTION_WARNING,
  layered,
  type LayeredRunState,
  PLUGIN_NAME,
  resolveLayeredOptions,
} from "./layered.js";
export { layered as default } from "./layered.js";
export { checkThresholdOrder, LAYERED_OPTIONS_SCHEMA, type LayeredOptions } from "./options.js";
export { chooseSummaryLayer, type LayeredLayer, shouldPrune } from "./layers.js";
export { type PrunedToolOutputs, pruneToolOutputs, type PruneToolOutputsOptions, toolOutputTokens } from "./prune.js";
export {
  describeCall,
  formatPrunedMarker,
  isPrunedMarker,
  PRUNED_MARKER_PREFIX,
  type PrunedCall,
  type PrunedOutput,
} from "./marker.js";
export { type CutRoom, type FullCut, fullLayerCut, summarizeLayerCut } from "./choose-cut.js";
export {
  ensureRequestPruning,
  type PrunedRequest,
  pruneRequest,
  REQUEST_PRUNING_PLUGIN,
  requestPruning,
  type RequestPruningOptions,
} from "./prune-request.js";
export { ContextPruner, layeredOptionsOf, type PrunedContext, type PruneContextInput } from "./context-pruner.js";
export { signature, TokenMemo } from "./token-memo.js";
