/**
 * @compaction/ai-sdk: compaction for the AI SDK (`ai` 6 and 7). A `ModelMessage` adapter, a
 * `prepareStep` for generateText / streamText / ToolLoopAgent, and one call for chat routes.
 */
export { type AiSdkAdapterOptions, COMPACTION_PROVIDER_KEY, createAiSdkAdapter } from "./ai-sdk-adapter.js";
export { compactionPrepareStep, type PrepareStepInput, type PrepareStepOutput } from "./prepare-step.js";
export { compactModelMessages } from "./compact-model-messages.js";
export { type CompactContext, ModelMessageCompaction, type StepUsage } from "./model-message-compaction.js";
export type {
  AiSdkCompactionEvent,
  AiSdkCompactionOptions,
  BackgroundCompactionEvent,
  CompactionEndEvent,
  CompactionStartEvent,
  CompactionWarningEvent,
} from "./options.js";
