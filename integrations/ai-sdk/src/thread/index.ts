/**
 * @compaction/ai-sdk/thread: an AI SDK conversation kept in a session store (`EntryStore`:
 * SQLite, Postgres, a pi file, memory), with compactions recorded in it and `memory_search` over
 * everything it holds. Needs `@compaction/context-manager` and `@compaction/plugin-recall`
 * installed beside `@compaction/ai-sdk` (optional peer dependencies: the main entry does not).
 */
export { type AppendOptions, CompactionThread, type CompactionThreadOptions, type MemorySearchInput, openCompactionThread } from "./compaction-thread.js";
export { AI_SDK_DETAILS_KEY, fromPiMessages, toPiMessages } from "./pi-messages.js";
export type { ThreadCompactionEndEvent, ThreadCompactionStartEvent, ThreadEvent, ThreadWarningEvent } from "@compaction/context-manager";
