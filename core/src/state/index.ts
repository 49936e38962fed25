/**
 * Session state: export a session's state as a documented JSON document, read it back, and
 * seed a new session with it (`compaction context export` / `compaction context import`).
 */
export {
  type LastExchange,
  SESSION_STATE_FORMAT,
  SESSION_STATE_VERSION,
  type SessionState,
  type SessionStateSource,
  type ToolUsage,
} from "./session-state.js";
export { DEFAULT_SUMMARY_MAX_TOKENS, extractSessionState, type ExtractSessionStateOptions } from "./extract-session-state.js";
export { parseSessionState } from "./parse-session-state.js";
export { renderSessionSeed, SESSION_SEED_TITLE, sessionSeedEntries, type SessionSeedOptions } from "./seed.js";
export { sessionStateSchema, sessionStateSchemaPath } from "./session-state-schema.js";
