/**
 * @compaction/transcript — the transcript store: pi-coding-agent session JSONL (read, migrate,
 * tree, boundary load, locked appends, branching), read-only imports of Claude Code and Codex
 * CLI transcripts, format detection, pi's compaction entry, and the session-state document
 * (schema, export, import).
 */
export {
  type BranchSummaryEntry,
  type CompactionEntry,
  CURRENT_SESSION_VERSION,
  type CustomMessageEntry,
  type LoadProgress,
  type MessageEntry,
  type OtherEntry,
  type RawSessionEntry,
  type SessionEntry,
  type SessionHeader,
  type SkippedLine,
} from "./types.js";
export { type LineVerdict, parseEntryLine, type ParsedSession, type ParseSessionOptions, parseSession, type ReadSessionOptions, readSession } from "./parse.js";
export { migrateEntries, v1EntryId } from "./migrate.js";
export { SessionTree, type SessionTreeOptions } from "./tree.js";
export {
  type BuildContextOptions,
  buildContext,
  compactionSummaryMessage,
  entryMessage,
  type SessionContext,
  type SessionModel,
} from "./context.js";
export { type BoundaryLoad, type LoadBoundaryOptions, loadBoundary } from "./boundary-load.js";
export { type AnchoredContext, compactionAnchor } from "./compaction-anchor.js";
export { isTranscriptError, TranscriptError, type TranscriptErrorDetails } from "./transcript-error.js";
export { type AppendCompactionOptions, appendCompaction, appendEntries, type AppendOptions, type SetAsideTail } from "./append.js";
export { assignEntryFields, type AssignEntryFieldsOptions, type NewEntry } from "./new-entries.js";
export { type SessionLockOptions, withSessionLock } from "./session-lock.js";
export { type UpgradedSession, upgradeSession } from "./upgrade.js";
export {
  type CreatedSession,
  type CreateSessionOptions,
  createSession,
  createSessionId,
  findMostRecentSession,
  PI_AGENT_DIR_ENV,
  resolveSession,
  type ResolveSessionOptions,
  SESSIONS_DIR_ENV,
  sessionDirForCwd,
  sessionFileName,
  sessionsBaseDir,
  type SessionsDirOptions,
} from "./session-file.js";
export { type BranchedSession, type BranchSessionOptions, branchSession } from "./branch.js";
export { sessionParent } from "./session-parent.js";
export { detectTranscriptFormat, TRANSCRIPT_ADAPTERS, type TranscriptFormat } from "./detect-format.js";
export { AUTO_COMPACT_CUSTOM_TYPE, type AutoCompactSetting, autoCompactEntry, sessionAutoCompact } from "./session-settings.js";
export {
  type ClaudeCodeHistory,
  type ClaudeCodeImport,
  type HistoryStart,
  type ImportOptions,
  importClaudeCode,
  importClaudeCodeHistory,
  type RecordedCompaction,
} from "./claude-code-import.js";
export { type CodexRolloutImport, type IgnoredFigure, importCodexRollout } from "./codex-import.js";
export { type PiCompaction, type PiCompactionPlan, planPiCompaction, withAppended } from "./pi-compaction-plan.js";
export { appendPiCompaction, compactPiBranch, type PiBranchCompaction, type PiBranchMessages } from "./compact-pi-session.js";
export { parseSessionState } from "./state/parse-session-state.js";
export { renderSessionSeed, SESSION_SEED_TITLE, sessionSeedEntries, type SessionSeedOptions } from "./state/seed.js";
export { sessionStateSchema, sessionStateSchemaPath } from "./state/session-state-schema.js";
export {
  agentIdOfSessionKey,
  isSqliteFile,
  listOpenClawAgents,
  listOpenClawSessions,
  OPENCLAW_DATABASE_NAME,
  OPENCLAW_STATE_DIR_ENV,
  openClawAgentDatabase,
  type OpenClawLocation,
  type OpenClawSession,
  type OpenClawSessionInfo,
  type OpenClawSessionSelector,
  openClawStateDir,
  parseOpenClawSession,
  readOpenClawSession,
} from "./openclaw-sessions.js";
export { OPENCLAW_SESSION_TABLES_SQL } from "./openclaw-schema.js";
export type { BranchRead, CompactionWrite, EntryHit, EntrySearchOptions, EntryStore } from "./store/entry-store.js";
export { MemoryEntryStore, type MemoryEntryStoreOptions, readBranch } from "./store/memory-entry-store.js";
export { isDatabaseLocation, parseStoreLocation, redactLocation, type StoreLocation } from "./store/store-location.js";
export { openEntryStore } from "./store/open-entry-store.js";
export { entrySearchText, messageSearchText } from "./store/entry-search-text.js";
export { closedStoreError, compactionEntry, type NewSessionFields, newSessionHeader } from "./store/store-checks.js";
export { createPiFileStore, openPiFileStore, PiFileStore, type PiFileStoreOptions } from "./store/pi-file-store.js";
export {
  openSqliteStore,
  parseSqliteLocation,
  SQLITE_LOCATION_PREFIX,
  SqliteStore,
  type SqliteStoreOptions,
  sqliteLocation,
} from "./store/sqlite-store.js";
export { SQLITE_SCHEMA_VERSION } from "./store/sqlite-schema.js";
export {
  checkClaimRenewal,
  checkClaimRequest,
  checkClaimToken,
  claimRefusal,
  claimState,
  claimStatus,
  DEFAULT_CLAIM_LEASE_MS,
  MAX_CLAIM_LEASE_MS,
  type PreparationClaim,
  type PreparationClaimOutcome,
  type PreparationClaimRequest,
  type PreparationClaims,
  type PreparationClaimState,
  type PreparationClaimStatus,
} from "./store/preparation-claims.js";
