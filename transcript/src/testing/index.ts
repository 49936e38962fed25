/** Helpers for tests of code built on the transcript store (`@compaction/transcript/testing`). */
export { type OpenClawTestSession, writeOpenClawDatabase } from "./openclaw-database.js";
