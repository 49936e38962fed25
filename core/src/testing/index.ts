/** `@compaction/core/testing`: helpers for testing plugins against every message format. */
export { builders, FORMATS, words, type Builders, type CallSpec, type Format, type ResultSpec } from "./builders.js";
export { CLAUDE_FIXTURES, FIXTURES_DIR, loadClaudeMessages, loadPiMessages, PI_FIXTURES } from "./fixtures.js";
