/**
 * @compaction/core — the engine: the Compactor and its hooks (four for a run, one at send time), the plugin API and stages,
 * cut rules, shrinking, message adapters, token counting, `selectMessages`, configuration, the
 * summarizer contract and the summary's layout, errors and the compaction event. No strategy,
 * no file writes, no locks: every summarizer (the extractive one too) is a plugin, and the
 * transcript store, the agent loop and the model-summarizer machinery are packages of their own
 * (@compaction/transcript, @compaction/context-manager, @compaction/model-summarizer).
 */

// The engine: the Compactor, its hooks, one run, the plugin API and the published stages.
export {
  type AutoCompactSettings,
  Compactor,
  type CompactorHooks,
  type CompactorOptions,
  DEFAULT_AUTO_COMPACT_THRESHOLD,
} from "./compactor/compactor.js";
export { CompactionRun, type CompactInput, isEmptyDraft, type SummaryDraft, type SummarizeOptions } from "./compactor/run.js";
export { type CompactionResult, type CompactionStatus, untouchedResult } from "./compactor/result.js";
export type { RequestShaping, ShapedRequest, ShapeRequestInput } from "./compactor/shape-request.js";
export { RequestShaper, type RequestShaperEngine } from "./compactor/request-shaper.js";
export { cacheBreakpoints, markCacheBreakpoints, MAX_MESSAGE_BREAKPOINTS } from "./compactor/cache-breakpoints.js";
export { autoCompactTokens, COMPACTED_SHARE, compactedTargetTokens, MIN_KEPT_SHARE, OVERFLOW_COMPACTED_SHARE, USABLE_SHARE, usableWindow } from "./compactor/usable-window.js";
export {
  DEFAULT_RESERVE_SHARE,
  DEFAULT_RESERVE_TOKENS,
  defaultReserveTokens,
  MAX_RESERVE_SHARE,
  MODEL_RESERVE_SHARE,
  replyReserveTokens,
  type ReserveSetting,
  type ReserveSource,
} from "./compactor/reply-reserve.js";
export type { CompactionPlugin, PluginFactory, Preset, PresetEntry } from "./compactor/plugin.js";
export {
  STAGE_AUGMENT,
  STAGE_FALLBACK,
  STAGE_PERSIST,
  STAGE_PREPARE,
  STAGE_PRUNE,
  STAGE_REPORT,
  STAGE_STRATEGY,
} from "./compactor/stages.js";
export {
  SPLIT_TURN_HEADING,
  SPLIT_TURN_SEPARATOR,
  summarizeCut,
  type SummarizeCutOptions,
  summarizeInChunks,
  summaryLengths,
  type SummaryLengths,
  type SummaryLengthsInput,
  summaryRoom,
  summaryRoomLeft,
} from "./compactor/summarize-cut.js";

// Shrinking: how the core brings any context under a budget when cutting alone cannot.
export {
  NAMES_SHARE,
  shrinkToBudget,
  type ShrinkOptions,
  type ShrinkResult,
  type ShrunkMessage,
} from "./shrink/shrink-to-budget.js";
export { SHRINK_MARKER_PATTERN, shrinkMarker, type ShrinkMarkerInfo } from "./shrink/head-and-tail.js";
export { keepNewestRequest, latestCutIndex, maySplitNewestTurn, MIN_SUMMARY_ROOM, type NewestRequestRule } from "./compactor/fit-budget.js";
export { CARRIED_REQUEST_HEADING, carryRequest } from "./compactor/carry-request.js";
export { summaryHasContent } from "./summarizer/has-content.js";

// Errors and the compaction event.
export {
  CompactionError,
  type CompactionErrorDetails,
  describeError,
  type ErrorCode,
  ErrorCodes,
  isCompactionError,
} from "./errors.js";
export { type CompactionEvent, type CompactionTrigger, createCompactionEvent, type CreateEventInput } from "./event.js";

// Messages: the adapter contract and the pi, OpenAI Chat Completions, OpenAI Responses and Anthropic adapters.
export {
  type AdapterOptions,
  type CreateSummaryOptions,
  FactsCache,
  type MessageAdapter,
  type MessageFacts,
  type MessageKind,
  type ToolCallInfo,
} from "./messages/adapter.js";
/** For adapters written outside the core: `mapText` over string-or-parts content. */
export { mapArgumentStrings, mapTextContent, withoutBlocks } from "./messages/message-fields.js";
export {
  createPiAdapter,
  PI_NOTE_CUSTOM_TYPE,
  type PiAssistantMessage,
  type PiBashExecutionMessage,
  type PiBranchSummaryMessage,
  type PiCompactionSummaryMessage,
  type PiCustomMessage,
  type PiImageContent,
  type PiMessage,
  type PiTextContent,
  type PiThinkingContent,
  type PiToolCall,
  type PiToolResultMessage,
  type PiUsage,
  type PiUserMessage,
} from "./messages/pi-adapter.js";
export {
  createOpenAIAdapter,
  OPENAI_NOTE_NAME,
  OPENAI_SUMMARY_NAME,
  type OpenAIAssistantMessage,
  type OpenAIChatMessage,
  type OpenAIFunctionMessage,
  type OpenAIImagePart,
  type OpenAIOtherPart,
  type OpenAIRefusalPart,
  type OpenAISystemMessage,
  type OpenAITextPart,
  type OpenAIToolCall,
  type OpenAIToolMessage,
  type OpenAIUserContentPart,
  type OpenAIUserMessage,
} from "./messages/openai-adapter.js";
export {
  type AnthropicCompactionBlock,
  type AnthropicContentBlock,
  type AnthropicMCPToolResultBlock,
  type AnthropicMCPToolUseBlock,
  type AnthropicServerToolResultBlock,
  type AnthropicServerToolUseBlock,
  type AnthropicImageBlock,
  type AnthropicMessage,
  type AnthropicRedactedThinkingBlock,
  type AnthropicTextBlock,
  type AnthropicThinkingBlock,
  type AnthropicToolResultBlock,
  type AnthropicToolUseBlock,
  type AnthropicUsage,
  createAnthropicAdapter,
} from "./messages/anthropic-adapter.js";
export {
  createResponsesAdapter,
  RESPONSES_NOTE_PREFIX,
  type ResponsesCustomToolCallItem,
  type ResponsesCustomToolCallOutputItem,
  type ResponsesFunctionCallItem,
  type ResponsesFunctionCallOutputItem,
  type ResponsesInputText,
  type ResponsesItem,
  type ResponsesMessageItem,
  type ResponsesOtherItem,
  type ResponsesReasoningItem,
} from "./messages/responses-adapter.js";
/** Readers of Responses item parts, shared with the Codex importer of @compaction/transcript. */
export {
  mapResponsesContent,
  readResponsesContent,
  readResponsesOutput,
  type ResponsesContentReading,
  type ResponsesOutputReading,
  responsesReasoningTexts,
} from "./messages/responses-items.js";
// The words around a summary sent as an ordinary user message (for adapters of other formats).
export { unwrapSummary, wrapSummary } from "./messages/message-fields.js";

// Tokens.
export { DEFAULT_ENCODING, IMAGE_TOKENS, type TokenCounter } from "./tokens/token-counter.js";
export { forEachLineSegment } from "./tokens/line-segments.js";
export {
  createTiktokenCounter,
  tiktokenEncodingNames,
  type TiktokenCounterOptions,
} from "./tokens/tiktoken-counter.js";
export { createEstimateCounter, estimateStringTokens } from "./tokens/estimate-counter.js";
export { type TokenCountStore, withCountStore } from "./tokens/count-store.js";
export { type EncoderImageStore, startEncoderWithImage, type StartedEncoder } from "./tokens/encoder-image.js";
export {
  budgetRatioOf,
  checkAnchor,
  type ContextAnchor,
  type ContextBase,
  type ContextTokens,
  type ContextTokensBase,
  countedBudget,
  MessageTokenCounter,
  type MessageTokenCounterOptions,
  messageTokenText,
  providerRatio,
} from "./tokens/message-tokens.js";
export {
  type Calibration,
  calibrate,
  calibrationFrom,
  type CalibrationOptions,
  type CalibrationSample,
  CalibrationSampler,
  type CalibrationSource,
  isExactModel,
  modelEncoding,
  NO_CALIBRATION,
  providerMeasure,
  readRecordedCalibration,
  type RecordedCalibration,
  recordedCalibration,
  withRecorded,
} from "./tokens/calibration.js";

// Cut rules and message selection.
export type { CheckedCut, Cut } from "./cut/cut.js";
export { checkCut, type CheckCutOptions } from "./cut/check-cut.js";
export { findCutPoint, type FindCutPointOptions } from "./cut/find-cut-point.js";
export { type MessageView, sumTokens, toolCallOwners, type ToolPairs, toolPairs } from "./cut/message-view.js";
export { findTurnStartIndex, isCutPoint, lastUserIndex, turnStartIndices } from "./cut/turns.js";
export { alwaysKept, type AlwaysKept, keptRoom, preservedBefore, safeCuts } from "./cut/structure.js";
export { type MessageSelection, selectMessages, type SelectionOverflow } from "./select-messages.js";
export { formatCount } from "./format-count.js";
export { counterLabel, mentionsCountedTokens, warningsMeasureNote } from "./warnings-measure.js";

// Summarizers: the contract and the summary's vocabulary (its layout, sections and fitting), shared
// by the summarizer plugins (@compaction/plugin-summarizer-extractive and the model summarizers)
// and the plugins that read or add to a summary. The core ships no summarizer of its own.
export { EXTRACTIVE_SUMMARIZER_PACKAGE, missingSummarizer, type SummarizeRequest, type Summarizer, summarizerMissing } from "./summarizer/summarizer.js";
export {
  DEFAULT_SECTION_LIMITS,
  EARLIER_SUMMARY_HEADING,
  emptyState,
  type ExtraSection,
  FOCUS_TITLE,
  HISTORY_LAYOUT,
  type LayoutEntry,
  NOTHING_KEPT_TITLE,
  PENDING_PREFIX,
  readSummary,
  RESPOND_PREFIX,
  type SectionLimits,
  SLOT_IDS,
  type SlotId,
  type SummaryState,
  TURN_PREFIX_TITLES,
} from "./summarizer/layout.js";
export {
  type ItemStyle,
  parseSections,
  type ParsedMarkdown,
  type RawSection,
  renderItem,
  type SummaryBlock,
  type SummaryItem,
} from "./summarizer/sections.js";
export { fitToBudget } from "./summarizer/fit.js";
export { PATH_FIELDS, readToolCall, type ToolCallKind, type ToolCallReading } from "./summarizer/tool-calls.js";
export { declaredNames } from "./summarizer/code-names.js";
export { namesIn } from "./shrink/elided-names.js";

// Session state: the document's shape (extracted by @compaction/plugin-summarizer-extractive, its
// document form in @compaction/transcript).
export {
  type LastExchange,
  SESSION_STATE_FORMAT,
  SESSION_STATE_VERSION,
  type SessionState,
  type SessionStateSource,
  type ToolUsage,
} from "./state/session-state.js";

// Configuration: finding and validating `.compactionrc`, name resolution, createCompactor.
export { compactionSchema, compactionSchemaPath } from "./config/schema.js";
export { ConfigError, type ConfigErrorDetails, type ConfigProblem } from "./config/config-error.js";
export { CONFIG_MODULE_NAME, loadConfig, type LoadConfigOptions } from "./config/load-config.js";
export { type ConfigWarning, DEFAULT_TRUST_HINT, isCodeConfigFile } from "./config/project-trust.js";
export { checkHostOptions, configWarnings, type HostCompactionOptions, type HostOptionsCheck } from "./config/host-options.js";
export {
  type BackgroundEvent,
  type BackgroundHost,
  backgroundCheck,
  type ClaimAnswer,
  describeBackgroundEvent,
  type HeldContext,
  startPreparation,
  type TakenPreparation,
  takePreparation,
  waitFor,
} from "./host/background-check.js";
export { type BackgroundStep, HostLoop, type HostLoopOptions, type LoopRequest, RETRY_GROWTH_SHARE, whatCannotShrink } from "./host/host-loop.js";
export {
  type BackgroundMode,
  type BackgroundOptions,
  backgroundFor,
  checkBackgroundOptions,
  DEFAULT_CACHE_TTL_MS,
  DEFAULT_EXPECTED_MS,
  DEFAULT_WAIT_MS,
  type DroppedPreparation,
  OUTGROWN_SHARE,
  Preparation,
  type PrepareInput,
  type PrepareReason,
  PREPARE_SHARE,
  prefixChange,
} from "./host/background.js";
export { CompactorCache, type CompactorCacheKey, type CompactorCacheOptions } from "./config/compactor-cache.js";
export {
  BUILTIN_PLUGINS,
  BUILTIN_PRESETS,
  resolvePlugin,
  resolvePreset,
  type LoadedPlugin,
  type LoadedPreset,
  type ModuleKind,
  type PresetDefinition,
  type ResolveContext,
} from "./config/resolve-module.js";
export { BUILTIN_SUMMARIZERS, createCompactor, type CreateCompactorOptions } from "./config/create-compactor.js";
export type { AppliedPlugin, GivenOption } from "./config/resolve-plugins.js";
export type {
  AdapterName,
  AgentConfig,
  AppliedConfig,
  AutoCompactConfig,
  CompactionConfig,
  PluginEntryConfig,
  PluginOptionsConfig,
  ResolvedConfig,
  SettingSource,
  SummarizerConfig,
  TokenCounterName,
  TokenizerConfig,
} from "./config/types.js";
export { createOptionsValidator, optionsValidatorSource, type OptionsValidatorOptions } from "./config/plugin-options.js";

// Helpers shared with the other @compaction packages and plugin authors: readable values,
// JSON pointers and "did you mean" suggestions for error messages, frozen plain data.
export { describeSchemaErrors, type DescribeSchemaErrorsOptions, describeValue, type SchemaProblem } from "./config/schema-problems.js";
export { escapePointerSegment, pointer, showPointer } from "./config/pointer.js";
export { didYouMean, suggest } from "./config/suggest.js";
export { deepFreeze } from "./config/plain-data.js";
export { clip, collapseWhitespace, ELLIPSIS, isHighSurrogate, isLowSurrogate } from "./summarizer/text.js";
