/**
 * @compaction/plugin-recall — every message of a session stays findable: a BM25 full-text index
 * of the whole transcript (evicted and summarised messages too) kept beside the session and
 * updated incrementally, searched by the agent through the `memory_search` tool.
 */
import { recall } from "./recall.js";

export { connectRecall, type ConnectRecallOptions, PLUGIN_NAME, recall, type RecallConnection, recallSettings, STAGE_INDEX } from "./recall.js";
export {
  openRecallIndex,
  type OpenRecallIndexOptions,
  type RecallEntry,
  type RecallHit,
  RecallIndex,
  type RecallProgress,
  type RecallSearchOptions,
  type RecallUpdate,
} from "./recall-index.js";
export { openStoreRecallIndex, type OpenStoreRecallIndexOptions, type RecallSource, StoreRecallIndex } from "./store-recall-index.js";
export {
  type AnthropicToolDefinition,
  type MemorySearchDetails,
  type MemorySearchParameters,
  type MemorySearchResult,
  type MemorySearchTool,
  memorySearchDescription,
  memorySearchTool,
  type MemorySearchToolOptions,
  type OpenAIToolDefinition,
  type PiToolDefinition,
  type PiToolResult,
} from "./memory-search-tool.js";
export { type MemorySearchArgs, memorySearchParameters, parseMemorySearchArgs } from "./tool-args.js";
export type { RecallDocument, RecallScorer, ScoredEntry, ScorerSearchOptions } from "./scorer.js";
export { bm25Scorer, type Bm25ScorerOptions } from "./bm25-scorer.js";
export { cosineSimilarity, type EmbedFunction, embeddingScorer, type EmbeddingScorerOptions } from "./embedding-scorer.js";
export { type EntryText, entryText, entryTimestamp, messageText } from "./entry-text.js";
export { INDEX_SUFFIX, indexPathFor } from "./index-file.js";
export { queryWords, snippet } from "./snippet.js";
export { RECALL_DEFAULTS, RECALL_OPTIONS_SCHEMA, type RecallOptions, type RecallOptionsInput } from "./options.js";

export default recall;
