/**
 * `compactModelMessages(messages, options)`: one call for a chat route, between
 * `convertToModelMessages(uiMessages)` and `streamText({ messages })`.
 */
import type { ModelMessage } from "ai";
import { ModelMessageCompaction } from "./model-message-compaction.js";
import type { AiSdkCompactionOptions } from "./options.js";

/**
 * The messages to send: `messages` as they are while they fit under the preset's threshold,
 * else compacted by the agent's preset from `.compactionrc`. Each call starts from `messages`
 * alone (a chat route keeps no state between requests) and, with the extractive summarizer, the
 * same messages give the same result. For a long-lived process, keep one
 * `new ModelMessageCompaction(options)` and call its `compact(messages)`, which extends its
 * earlier compaction instead.
 */
export async function compactModelMessages<M extends object = ModelMessage>(
  messages: readonly M[],
  options: AiSdkCompactionOptions = {},
): Promise<M[]> {
  const compaction = new ModelMessageCompaction(options);
  try {
    return (await compaction.compact(messages as unknown as ModelMessage[])) as unknown as M[];
  } finally {
    await compaction.dispose();
  }
}
