import {
  CompactionError,
  createEstimateCounter,
  ErrorCodes,
  FactsCache,
  type MessageAdapter,
  type MessageFacts,
  MessageTokenCounter,
} from "@compaction/core";
import { timestampRange } from "./eviction-note.js";
import { planEviction } from "./plan-eviction.js";

export interface RollingEvictInput<T> {
  /** The conversation, oldest first. Never mutated. */
  readonly messages: readonly T[];
  /** The context window the target is a share of, in tokens. */
  readonly maxContextTokens: number;
  /** Target = floor(maxContextTokens * targetUtilization). Default 0.8. */
  readonly targetUtilization?: number;
  /** Fewest of the newest messages kept, even when the target is then missed. Default 10. */
  readonly minKeepMessages?: number;
  /** Reads the facts (kind, tool-call ids, pinned, timestamp) of the host's messages. */
  readonly adapter: MessageAdapter<T>;
  /**
   * Tokens of one message. Default: the chars/4 estimate (`createEstimateCounter`) over the
   * message's text, thinking and tool calls, plus a fixed cost per image — cheap, no tiktoken.
   */
  readonly countTokens?: (message: T) => number;
  /** Tokens the caller adds when anything is evicted (an eviction note); the target holds them too. Default 0. */
  readonly noteTokens?: number;
}

export interface RollingEviction<T> {
  /** Messages that stay, in their original order (system and pinned ones from before the cut included). */
  readonly kept: T[];
  /** Evicted messages, oldest first. */
  readonly evicted: T[];
  readonly evictedCount: number;
  readonly evictedTokens: number;
  /** Tokens of `kept` (without any note). */
  readonly keptTokens: number;
  /** ISO time of the oldest evicted message that has a timestamp, or null. */
  readonly firstEvictedTimestamp: string | null;
  /** ISO time of the newest evicted message that has a timestamp, or null. */
  readonly lastEvictedTimestamp: string | null;
  /** floor(maxContextTokens * targetUtilization). */
  readonly targetTokens: number;
  /** False when minKeepMessages, pinned messages or tool pairs keep more than the target. */
  readonly targetMet: boolean;
  /** Index of the first message of the kept suffix (0 when nothing is evicted). */
  readonly firstKeptIndex: number;
  /** Indices (into `messages`) of the evicted messages. */
  readonly evictedIndices: readonly number[];
}

/**
 * Evicts the oldest messages until the rest fits `floor(maxContextTokens * targetUtilization)`:
 * never fewer than `minKeepMessages` of the newest kept, never the system prompt or a pinned
 * message, never a tool call without its results. No model call; pure.
 */
export function rollingEvict<T>(input: RollingEvictInput<T>): RollingEviction<T> {
  const { messages, adapter } = checkInput(input);
  const targetUtilization = input.targetUtilization ?? 0.8;
  const minKeepMessages = input.minKeepMessages ?? 10;
  const cache = new FactsCache(adapter);
  const facts = messages.map((m) => cache.of(m));
  const count = input.countTokens ?? defaultCounter(cache);
  const tokens = messages.map((m, i) => checkedCount(count(m), i));
  const plan = planEviction(
    { facts, tokens },
    {
      targetTokens: Math.floor(input.maxContextTokens * targetUtilization),
      minKeepMessages,
      noteTokens: input.noteTokens ?? 0,
    },
  );
  const evictedSet = new Set(plan.evictedIndices);
  const range = timestampRange(plan.evictedIndices.map((i) => facts[i] as MessageFacts));
  return {
    kept: messages.filter((_, i) => !evictedSet.has(i)),
    evicted: plan.evictedIndices.map((i) => messages[i] as T),
    evictedCount: plan.evictedIndices.length,
    evictedTokens: plan.evictedTokens,
    keptTokens: plan.keptTokens,
    firstEvictedTimestamp: range.first,
    lastEvictedTimestamp: range.last,
    targetTokens: plan.targetTokens,
    targetMet: plan.targetMet,
    firstKeptIndex: plan.firstKeptIndex,
    evictedIndices: plan.evictedIndices,
  };
}

function defaultCounter<T>(cache: FactsCache<T>): (message: T) => number {
  const counter = new MessageTokenCounter(cache, createEstimateCounter());
  return (message) => counter.count(message);
}

function invalid(message: string, hint: string): CompactionError {
  return new CompactionError(ErrorCodes.INPUT_INVALID, message, { hint });
}

function checkInput<T>(input: RollingEvictInput<T>): { messages: readonly T[]; adapter: MessageAdapter<T> } {
  if (!input || !Array.isArray(input.messages)) {
    throw invalid(
      `rollingEvict() needs { messages: [...] }; found ${input ? typeof input.messages : String(input)}.`,
      "Pass the conversation, oldest first, as `messages`.",
    );
  }
  if (typeof input.adapter?.readFacts !== "function") {
    throw invalid(
      "rollingEvict() needs an `adapter` (a MessageAdapter) to read the messages' facts.",
      "Pass createPiAdapter(), createOpenAIAdapter() or createAnthropicAdapter() from @compaction/core.",
    );
  }
  const { maxContextTokens, targetUtilization, minKeepMessages, noteTokens } = input;
  if (typeof maxContextTokens !== "number" || !Number.isFinite(maxContextTokens) || maxContextTokens <= 0) {
    throw invalid(
      `rollingEvict() needs a positive maxContextTokens; found ${String(maxContextTokens)}.`,
      "Pass the model's context window in tokens.",
    );
  }
  if (targetUtilization !== undefined && !(Number.isFinite(targetUtilization) && targetUtilization > 0 && targetUtilization <= 1)) {
    throw invalid(
      `rollingEvict() needs targetUtilization above 0 and at most 1; found ${String(targetUtilization)}.`,
      "Use a share of the context window, e.g. 0.8.",
    );
  }
  if (minKeepMessages !== undefined && !(Number.isInteger(minKeepMessages) && minKeepMessages >= 0)) {
    throw invalid(
      `rollingEvict() needs minKeepMessages to be a whole number of at least 0; found ${String(minKeepMessages)}.`,
      "Use e.g. 10.",
    );
  }
  if (noteTokens !== undefined && !(Number.isFinite(noteTokens) && noteTokens >= 0)) {
    throw invalid(`rollingEvict() needs noteTokens of at least 0; found ${String(noteTokens)}.`, "Leave it out for no note.");
  }
  return { messages: input.messages, adapter: input.adapter };
}

function checkedCount(tokens: number, index: number): number {
  if (typeof tokens !== "number" || !Number.isFinite(tokens) || tokens < 0) {
    throw invalid(
      `rollingEvict(): countTokens returned ${String(tokens)} for message ${index}; expected a number of at least 0.`,
      "Make countTokens return a finite token count for every message.",
    );
  }
  return tokens;
}
