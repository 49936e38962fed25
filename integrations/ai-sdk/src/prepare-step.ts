/**
 * `compactionPrepareStep(options)`: the function to pass as `prepareStep` to `generateText`,
 * `streamText` or a `ToolLoopAgent`, so every step's prompt stays inside the context window.
 */
import type { ModelMessage } from "ai";
import { type CompactContext, ModelMessageCompaction, type StepUsage } from "./model-message-compaction.js";
import type { AiSdkCompactionOptions } from "./options.js";

/** What the function reads of prepareStep's argument (ai 6 and ai 7 both pass these). */
export interface PrepareStepInput<M> {
  readonly messages: M[];
  readonly steps: readonly StepUsage[];
  readonly stepNumber: number;
}

/** What it returns: the messages to send, when they differ from those given. */
export interface PrepareStepOutput<M> {
  messages?: M[];
}

/**
 * A `prepareStep` function that compacts the step's messages by the agent's preset from
 * `.compactionrc` when they pass its threshold. It keeps its earlier compaction and extends it
 * (in ai 6, which gives every step the whole history, and in ai 7, which carries returned messages
 * forward), so a summary is written only when the prompt passes the threshold again, by updating
 * the one there; the same history gives the same messages, so prompt caches stay warm.
 *
 * `M` is the `ModelMessage` of the `ai` version in use (6 or 7); it is inferred where the function
 * is passed.
 */
export function compactionPrepareStep<M extends object = ModelMessage>(
  options: AiSdkCompactionOptions = {},
): (input: PrepareStepInput<M>) => Promise<PrepareStepOutput<M>> {
  return prepareStepOf<M>(new ModelMessageCompaction(options));
}

/** The `prepareStep` function over `compaction` (whose owner disposes it when done). */
export function prepareStepOf<M extends object = ModelMessage>(compaction: ModelMessageCompaction): (input: PrepareStepInput<M>) => Promise<PrepareStepOutput<M>> {
  return async ({ messages, steps, stepNumber }) => {
    const context: CompactContext = { steps, stepNumber };
    const prepared = await compaction.compact(messages as unknown as ModelMessage[], context);
    const unchanged = prepared.length === messages.length && prepared.every((message, index) => message === (messages[index] as unknown));
    return unchanged ? {} : { messages: prepared as unknown as M[] };
  };
}
