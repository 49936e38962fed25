/**
 * The last step of the `context` event: what pi sends is brought under the budget by the core's
 * shrinking (`shrinkToBudget`: largest tool outputs to head and tail, then the newest turn's
 * other messages, the newest user message last). A pi session file records a compaction only as
 * a summary and the unchanged messages it keeps, so a kept tool output too large for the window
 * stays whole in the file and is shrunk here, in every request, the same way each time (the
 * provider's prompt cache stays warm).
 */
import type { Compactor, PiMessage } from "@compaction/core";
import { shrinkToBudget } from "@compaction/core";

export interface ShapeRequestInput {
  /** The model's context window, in tokens. */
  readonly contextWindow: number;
  /** The system prompt sent with the messages (it takes room from the messages). */
  readonly systemPrompt?: string;
}

/**
 * The messages to send, within the context window less the compactor's reserve for the reply
 * and the system prompt; the same array when they already fit.
 */
export function shapeRequest(compactor: Compactor<PiMessage>, messages: readonly PiMessage[], input: ShapeRequestInput): readonly PiMessage[] {
  const system = input.systemPrompt ? compactor.tokens.counter.count(input.systemPrompt) : 0;
  const budget = Math.max(1, input.contextWindow - compactor.reserveTokens - system);
  const recallTool = compactor.provides("memory_search") ? "memory_search" : undefined;
  return shrinkToBudget(messages, compactor.tokens, { budget, recallTool }).messages;
}
