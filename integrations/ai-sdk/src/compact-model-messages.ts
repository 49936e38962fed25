/**
 * `compactModelMessages(messages, options)`: one call for a chat route, between
 * `convertToModelMessages(uiMessages)` and `streamText({ messages })`.
 *
 * A route keeps no state between requests, so the function keeps it for the route, per options
 * object: the same object passed again (one defined once, at module scope) finds its compaction
 * memory, which recognises the conversation's earlier compaction and, with background compaction,
 * the one it prepared after an earlier request, put in place now without waiting for a summary.
 * An options object seen for the first time has no later request to carry a preparation to, so
 * that call compacts as a one-off (at the threshold, from the messages alone) and keeps nothing;
 * so does every call whose background compaction is off (`background: false`, or the extractive
 * summarizer under `auto`), where the same messages give the same result.
 */
import type { ModelMessage } from "ai";
import { ModelMessageCompaction } from "./model-message-compaction.js";
import type { AiSdkCompactionOptions } from "./options.js";

/** What each options object passed before has: its memory, or `one-off` when background compaction is off for it. */
const memories = new WeakMap<AiSdkCompactionOptions, ModelMessageCompaction | "one-off" | "seen">();

/**
 * The messages to send: `messages` as they are while they fit under the preset's threshold, else
 * compacted by the agent's preset from `.compactionrc`. Pass the same options object on every
 * request (see the file's comment) for background compaction between requests. A long-lived
 * process can also keep one `new ModelMessageCompaction(options)` and call its `compact(messages)`.
 */
export async function compactModelMessages<M extends object = ModelMessage>(
  messages: readonly M[],
  options: AiSdkCompactionOptions = {},
): Promise<M[]> {
  const known = memories.get(options);
  if (known instanceof ModelMessageCompaction) return (await known.compact(messages as unknown as ModelMessage[])) as unknown as M[];
  if (known === "seen" && options.background !== false) {
    const memory = new ModelMessageCompaction(options);
    if (await memory.prepares()) {
      memories.set(options, memory);
      return (await memory.compact(messages as unknown as ModelMessage[])) as unknown as M[];
    }
    await memory.dispose();
    memories.set(options, "one-off");
  } else if (known === undefined) {
    memories.set(options, "seen");
  }
  return oneOff(messages, options);
}

/** One compaction from `messages` alone, in the foreground; nothing is kept. */
async function oneOff<M extends object>(messages: readonly M[], options: AiSdkCompactionOptions): Promise<M[]> {
  const compaction = new ModelMessageCompaction({ ...options, background: false });
  try {
    return (await compaction.compact(messages as unknown as ModelMessage[])) as unknown as M[];
  } finally {
    await compaction.dispose();
  }
}
