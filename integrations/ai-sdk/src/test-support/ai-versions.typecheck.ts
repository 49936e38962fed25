/**
 * Checked by `npm run typecheck` (tsc), not run: compactionPrepareStep is accepted where ai 6 and ai 7 take a prepareStep, and compactModelMessages' result where they take messages, with no casts.
 */
import { generateText as generateText6, type ModelMessage as ModelMessage6, streamText as streamText6, ToolLoopAgent as ToolLoopAgent6 } from "ai";
import { generateText as generateText7, type ModelMessage as ModelMessage7, streamText as streamText7, ToolLoopAgent as ToolLoopAgent7 } from "ai7";
import { compactModelMessages } from "../compact-model-messages.js";
import { compactionPrepareStep } from "../prepare-step.js";

/** Type-checked by `tsc`, never called: the calls would need a model. */
export async function typesOnly(messages6: ModelMessage6[], messages7: ModelMessage7[]): Promise<void> {
  await generateText6({ model: "m", messages: await compactModelMessages(messages6), prepareStep: compactionPrepareStep() });
  streamText6({ model: "m", messages: messages6, prepareStep: compactionPrepareStep() });
  new ToolLoopAgent6({ model: "m", prepareStep: compactionPrepareStep() });
  await generateText7({ model: "m", messages: await compactModelMessages(messages7), prepareStep: compactionPrepareStep() });
  streamText7({ model: "m", messages: messages7, prepareStep: compactionPrepareStep() });
  new ToolLoopAgent7({ model: "m", prepareStep: compactionPrepareStep() });
}
