/** `@compaction/core/testing`: helpers for testing plugins against every message format. */
export { builders, FORMATS, words, type Builders, type CallSpec, type Format, type ResultSpec } from "./builders.js";
export { answers, calls, fact } from "./facts.js";
export { freePort } from "./free-port.js";
export { type HeldModelServer, type HeldModelServerOptions, heldSummaryText, startHeldModelServer } from "./held-model-server.js";
export { chatCompletion, type RecordedRequest, readRequest } from "./http-requests.js";
export { type ModelServer, type Reply, startModelServer } from "./model-server.js";
export { keepRecent } from "./keep-recent.js";
export { type RecordedDraft, recordDrafts } from "./record-drafts.js";
export { rejection } from "./rejection.js";
export { makeProject, type ProjectFiles, removeProjects } from "./tmp-project.js";
export { failingSummarizer, listingSummarizer } from "./summarizer.js";
