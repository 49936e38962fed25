/**
 * Auto-compaction for any agent loop: `createContextManager` counts tokens as messages are
 * appended, compacts above the configured threshold, recovers from overflow errors, shows a
 * usage line and warns when repeated compactions degrade the context.
 */
export {
  type ContextCompactOptions,
  type ContextDegradation,
  ContextManager,
  type ContextManagerInit,
  type ContextUsage,
  CLAIM_HOLDER_POLL_MS,
  MIN_MESSAGES_TO_COMPACT,
  type PreparedStatus,
  type ContextSendOptions,
  type RequestOptions,
} from "./context-manager.js";
export { type ContextManagerOptions, createContextManager } from "./create-context-manager.js";
export type {
  BackgroundEvent,
  CompactionEndEvent,
  CompactionReason,
  CompactionStartEvent,
  ContextErrorEvent,
  ContextManagerEvents,
  ContextWarningEvent,
  ContextWarningKind,
} from "./events.js";
export { ContextSize } from "./context-size.js";
export {
  forwardThreadEvents,
  type ThreadBackgroundEvent,
  type ThreadCompactionEndEvent,
  type ThreadCompactionStartEvent,
  type ThreadEvent,
  type ThreadWarningEvent,
} from "./thread-events.js";
export { CompactionSupersededError, isCompactionSuperseded } from "./entry-context-store.js";
export { CONTEXT_OVERFLOW_PATTERNS, isContextOverflowError, NOT_OVERFLOW_PATTERNS } from "./overflow.js";
export {
  DEGRADATION_HARD_AT,
  DEGRADATION_SOFT_AT,
  type DegradationRisk,
  degradationRisk,
  riskAdvice,
} from "./degradation.js";
export {
  formatTokenCount,
  formatUsageLine,
  USAGE_LINE_MIN_RATIO,
  type UsageLineOptions,
  type UsageTone,
  usagePercent,
  usageTone,
} from "./usage-line.js";
