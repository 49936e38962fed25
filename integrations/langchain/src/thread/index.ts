/**
 * @compaction/langchain/thread: a LangChain v1 agent's threads kept in session stores
 * (`EntryStore`: SQLite, Postgres, a pi file, memory), one per `thread_id`, with compactions
 * recorded in them and `memory_search` over everything they hold. Needs
 * `@compaction/context-manager` and `@compaction/plugin-recall` installed beside
 * `@compaction/langchain` (optional peer dependencies: the main entry does not).
 */
export { COMPACTION_HISTORY_MIDDLEWARE_NAME, type CompactionHistory, compactionHistory, type CompactionHistoryOptions, THREADS_REMEMBERED } from "./compaction-history.js";
export { fromPiMessages, LANGCHAIN_DETAILS_KEY, toPiMessage } from "./pi-messages.js";
export type { ThreadBackgroundEvent, ThreadCompactionEndEvent, ThreadCompactionStartEvent, ThreadEvent, ThreadWarningEvent } from "@compaction/context-manager";
