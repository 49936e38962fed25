/**
 * @compaction/replay — replay a recorded session through a compaction preset as a host runs it,
 * and measure it: what the requests cost with the provider's prompt cache, and (continuity) what
 * the agent needed next that the context still held. The benchmarks and `compaction compare` use it.
 */
export {
  ANTHROPIC_PRICES,
  billedTokens,
  CACHE_PRICES,
  type CachePrices,
  type CacheSummary,
  MOSTLY_UNCACHED_BELOW,
  OPENAI_PRICES,
  PromptCacheMeter,
  type RequestCost,
} from "./prompt-cache.js";
export { isModelCall, type ModelCall, type ReplayHost, type ReplayOptions, type ReplayPolicy, type ReplayResult, replaySession, withoutUsage } from "./replay.js";
export {
  CLEAR_TOOL_USES_DEFAULTS,
  clearToolUsesPolicy,
  type ClearToolUsesOptions,
  contextManagerPolicy,
  type ContextManagerPolicyOptions,
  noCompactionPolicy,
} from "./policies.js";
export {
  chooseCutPoints,
  ContinuityProbe,
  type ContinuityOptions,
  type ContinuityRecorder,
  type ContinuityScore,
  type ContinuityTotals,
  type CutPoint,
  DEFAULT_CUT_POINTS,
  DEFAULT_LOOKAHEAD,
  LONG_MEMORY_TAIL,
  neededFromMemory,
  type NeededOptions,
  scoreContext,
  sumScores,
} from "./continuity.js";
export { commandsOf, contextText, identifiersOf, messageIdentifiers, type MessageWords, wordsOf } from "./continuity-identifiers.js";
export { HeldCalls } from "./held-calls.js";
export { HeldSummarizer, type Mode, type ModelGate, replayTimed, type TimedCell, type TimedResult, TtlCacheMeter } from "./timed-replay.js";
