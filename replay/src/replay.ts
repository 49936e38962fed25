/**
 * Replays a recorded session as a host runs it: the recorded messages are appended in order and,
 * where the recording shows a model call (before each reply of the assistant), the host is asked
 * for the request it would send. A policy is the host's way of keeping the context: a preset run
 * by the context manager, or a peer's rule (no compaction, Anthropic's tool-result clearing).
 *
 * The recording's provider usage figures describe the uncompacted original, not the replayed
 * context; strip them (`withoutUsage`) before replaying pi messages, so sizes are our count.
 */
import type { MessageFacts } from "@compaction/core";
import { type CacheSummary, PromptCacheMeter, type RequestCost } from "./prompt-cache.js";

/** A host keeping one session's context. */
export interface ReplayHost<T> {
  /** Adds recorded messages at the end of the context. */
  append(messages: readonly T[]): Promise<void>;
  /** A model call: compacts if the policy says so, then returns what is sent. */
  request(): Promise<readonly T[]>;
  /** Compactions so far (prunes and clearings count: each one changes what is sent). */
  readonly compactions: number;
  /** Frees what the host holds. */
  close(): Promise<void>;
}

/** A way of keeping a context, opened once per replayed session. */
export interface ReplayPolicy<T> {
  readonly name: string;
  open(): Promise<ReplayHost<T>>;
}

/**
 * The recording without its provider usage figures (a top-level `usage` field: pi's assistant
 * messages, Claude Code's messages): they describe the uncompacted original's requests, so a
 * replayed context would be sized by them. Messages without one are kept as they are.
 */
export function withoutUsage<T>(messages: readonly T[]): T[] {
  return messages.map((message) => {
    if (typeof message !== "object" || message === null || !("usage" in message)) return message;
    const { usage: _usage, ...rest } = message as T & { usage: unknown };
    return rest as T;
  });
}

/** One model call of the replay. */
export interface ModelCall<T> {
  /** Index in the recording of the reply this call produced (the request holds what came before it). */
  readonly index: number;
  /** What the host sent. */
  readonly request: readonly T[];
  readonly cost: RequestCost;
  /** Compactions the host had made by then, this call's included. */
  readonly compactions: number;
}

export interface ReplayOptions<T> {
  /** Our count of one message: what the cache figures are in. */
  readonly tokensOf: (message: T) => number;
  /** Facts of a message, to find the model calls. */
  readonly factsOf: (message: T) => MessageFacts;
  /** Called at each model call, in order. */
  readonly onCall?: (call: ModelCall<T>) => void | Promise<void>;
  /** Called after each model call with how many of the recording's messages are in. */
  readonly onProgress?: (done: number, total: number) => void;
}

export interface ReplayResult {
  readonly policy: string;
  readonly messages: number;
  readonly calls: number;
  readonly compactions: number;
  readonly cache: CacheSummary;
  readonly ms: number;
}

/**
 * True where the recording shows a model call: before an assistant message that follows
 * something else (a run of assistant messages with nothing between them is one call's reply,
 * as Claude Code writes one line per content block).
 */
export function isModelCall(facts: readonly MessageFacts[], index: number): boolean {
  return facts[index]?.kind === "assistant" && index > 0 && facts[index - 1]?.kind !== "assistant";
}

/** Replays `messages` under `policy`; see the file's comment. */
export async function replaySession<T>(messages: readonly T[], policy: ReplayPolicy<T>, options: ReplayOptions<T>): Promise<ReplayResult> {
  const started = performance.now();
  const facts = messages.map((message) => options.factsOf(message));
  const meter = new PromptCacheMeter(options.tokensOf);
  const host = await policy.open();
  let calls = 0;
  try {
    let next = 0;
    for (let i = 0; i < messages.length; i++) {
      if (!isModelCall(facts, i)) continue;
      await host.append(messages.slice(next, i));
      next = i;
      const request = await host.request();
      const cost = meter.record(request);
      calls += 1;
      await options.onCall?.({ index: i, request, cost, compactions: host.compactions });
      options.onProgress?.(i, messages.length);
    }
    await host.append(messages.slice(next));
    options.onProgress?.(messages.length, messages.length);
    return { policy: policy.name, messages: messages.length, calls, compactions: host.compactions, cache: meter.summary(), ms: performance.now() - started };
  } finally {
    await host.close();
  }
}
