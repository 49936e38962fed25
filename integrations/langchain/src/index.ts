/**
 * @compaction/langchain — LangChain.js v1 integration: `createLangChainAdapter()` (a
 * MessageAdapter for `@langchain/core` messages) and `compactionMiddleware(options)` for
 * `createAgent({ middleware })`, compacting by the agent's preset from `.compactionrc`.
 */
export {
  createLangChainAdapter,
  LANGCHAIN_NOTE_SOURCE,
  LANGCHAIN_OWN_SUMMARY_SOURCE,
  LANGCHAIN_SUMMARY_SOURCE,
  withContent,
} from "./langchain-adapter.js";
export { COMPACTION_MIDDLEWARE_NAME, compactionMiddleware } from "./compaction-middleware.js";
export {
  type BackgroundCompactionEvent,
  type CompactionEndEvent,
  type CompactionStartEvent,
  type CompactionWarningEvent,
  type LangChainCompactionEvent,
  type LangChainCompactionOptions,
} from "./options.js";
