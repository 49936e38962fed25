/** Test helpers: conversations of exact token sizes (chars/4 estimate) in every format. */
import { type CompactionPlugin, Compactor, createEstimateCounter, type Summarizer } from "@compaction/core";
import { type Builders, builders, type Format } from "@compaction/core/testing";

/** A text of exactly `tokens` tokens by the chars/4 estimate (`tokens * 4` characters). */
export function text(tokens: number, word = "data"): string {
  return `${word.slice(0, 3)} `.repeat(tokens);
}

/** A summarizer that needs no model: names how many messages it saw. */
export const countingSummarizer: Summarizer = {
  name: "counting",
  summarize: async (request) => `summary of ${request.messages.length} messages`,
};

/** A compactor with the estimate counter, a test summarizer and the given plugins. */
export function compactorFor(format: Format, plugins: CompactionPlugin[], summarizer: Summarizer = countingSummarizer) {
  const b = builders(format);
  // The tests' budgets and thresholds are of the whole window.
  return new Compactor<any>({ adapter: b.adapter, tokenCounter: createEstimateCounter(), summarizer, plugins, reserveTokens: 0 });
}

/** One turn: a request, a tool call and its result of `outputTokens`, and a closing answer. */
export function toolTurn(b: Builders, id: string, outputTokens: number, extra: { command?: string; isError?: boolean } = {}): any[] {
  return [
    b.user(`request ${id}`),
    b.assistant(`running ${id}`, [{ id, name: "bash", args: { command: extra.command ?? `run ${id}` } }]),
    ...b.toolResults([{ id, text: text(outputTokens), ...(extra.isError ? { isError: true } : {}) }]),
    b.assistant(`done ${id}`),
  ];
}

/** One turn without tools: a request and an answer of about `tokens` tokens each. */
export function chatTurn(b: Builders, tag: string, tokens: number): any[] {
  return [b.user(`${tag}: ${text(tokens, "ask")}`), b.assistant(`${tag}: ${text(tokens, "say")}`)];
}

/** Index of the last message that the adapter reads as a user message. */
export function lastUserAt(compactor: Compactor<any>, messages: readonly unknown[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (compactor.facts.of(messages[i]).kind === "user") return i;
  return -1;
}

/** The context window that puts `tokens` at `ratio` of it. */
export function windowFor(tokens: number, ratio: number): number {
  return Math.round(tokens / ratio);
}
