/** Shared machinery of model summarizers: provider plugins supply one `complete` call. */
export { REDACTED, displayUrl, readApiKey, redactSecrets } from "./api-key.js";
export { chunkConversation, clipToTokens } from "./chunk-conversation.js";
export { type Deadline, createDeadline } from "./deadline.js";
export { ModelCallError, type ModelCallErrorDetails, isRetryableStatus } from "./model-call-error.js";
export { cleanModelOutput, fitModelSummary } from "./model-output.js";
export {
  MIN_CONVERSATION_TOKENS,
  type ModelCompletionRequest,
  type ModelSummarizerOptions,
  createModelSummarizer,
} from "./model-summarizer.js";
export { type PostJsonOptions, postJson } from "./post-json.js";
export { type RetryOptions, retryDelay, retryModelCall } from "./retry.js";
export { retryAfterMs } from "./retry-after.js";
export { type SerializeOptions, clipMiddle, serializeConversation, serializeMessage } from "./serialize-conversation.js";
export {
  SUMMARY_SYSTEM_PROMPT,
  type SummaryPrompt,
  type SummaryPromptInput,
  buildSummaryPrompt,
  historyTemplate,
  neutraliseTags,
  turnPrefixTemplate,
} from "./summary-prompt.js";
export { type InstallModelSummarizerOptions, type ModelFallback, installModelSummarizer } from "./install-model-summarizer.js";
export { SUMMARIZER_WARNINGS_STAGE, type SummarizerWarn, relaySummarizerWarnings } from "./warnings.js";
export { withFallback } from "./with-fallback.js";
export {
  defineModelSummarizer,
  joinUrl,
  type ModelProtocol,
  type ModelSummarizerPlugin,
  type ModelSummarizerOptionsSchema,
  type ModelSummarizerPluginOptions,
  type ModelSummarizerSchemaInput,
  modelSummarizerOptionsSchema,
  type ProtocolRequest,
} from "./summarizer-plugin-kit.js";
