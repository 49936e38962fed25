/** Test helpers for the plugin: a compactor with a cheap counter, a fake recall plugin, sample turns. */
import {
  type CompactionPlugin,
  Compactor,
  type CompactorOptions,
  createEstimateCounter,
  FactsCache,
  type MessageAdapter,
  MessageTokenCounter,
  type Summarizer,
} from "@compaction/core";
import { builders, type Format, words } from "@compaction/core/testing";

/** A summarizer that says how many messages it saw, so tests can tell a summary from a note. */
export const countingSummarizer: Summarizer = {
  name: "counting",
  summarize: async (request) => `summary of ${request.messages.length} messages`,
};

/** A recall plugin as the recall package will declare it: it provides `memory_search`. */
export function fakeRecall(tool = "memory_search"): CompactionPlugin {
  return { name: "fake-recall", provides: [tool], apply() {} };
}

export function compactorFor<T = any>(
  format: Format,
  plugins: CompactionPlugin[],
  options: Partial<CompactorOptions<T>> = {},
): Compactor<T> {
  return new Compactor<T>({
    adapter: builders(format).adapter as MessageAdapter<T>,
    tokenCounter: createEstimateCounter(),
    summarizer: countingSummarizer,
    contextWindow: 1000,
    // The tests' budgets are the whole window unless they set a reserve.
    reserveTokens: 0,
    plugins,
    ...options,
  });
}

/** chars/4 token counts, as the test compactors use. */
export function estimateTokens<T>(adapter: MessageAdapter<T>): (messages: readonly T[]) => number {
  const counter = new MessageTokenCounter(new FactsCache(adapter), createEstimateCounter());
  return (messages) => counter.total(messages);
}

export const TURN_START = Date.UTC(2026, 1, 3, 8, 0, 0);

/**
 * `count` turns of four messages: a user ask (20 tokens), a tool call (5), its result (40, one
 * message in every format) and a reply (30) — 95 tokens a turn with chars/4. Every message is
 * stamped a minute after the previous one, in every format. Tool-call ids are `<idPrefix>_<turn>`.
 */
export function turns(format: Format, count: number, idPrefix = "call"): any[] {
  const b = builders(format);
  const out: any[] = [];
  for (let t = 0; t < count; t++) {
    out.push(
      b.user(words(20, "ask")),
      b.assistant("", [{ id: `${idPrefix}_${t}` }]),
      ...b.toolResults([{ id: `${idPrefix}_${t}`, text: words(40, "out") }]),
      b.assistant(words(20, "reply")),
    );
  }
  return out.map((m, i) => ({ ...m, timestamp: TURN_START + i * 60_000 }));
}

/** ISO time of message `i` of `turns()`. */
export const turnTime = (i: number) => new Date(TURN_START + i * 60_000).toISOString();
