import { describe, expect, it } from "vitest";
import { createPiAdapter, type PiMessage } from "../messages/pi-adapter.js";
import type { SummarizeRequest, Summarizer } from "../summarizer/summarizer.js";
import { assistant, summaryMessage, user, words } from "../testing/pi-messages.js";
import { createEstimateCounter } from "../tokens/estimate-counter.js";
import { Compactor } from "./compactor.js";
import type { CompactionPlugin } from "./plugin.js";
import { SPLIT_TURN_HEADING, SPLIT_TURN_SEPARATOR, summarizeCut, type SummarizeCutOptions } from "./summarize-cut.js";

function recorder() {
  const calls: SummarizeRequest[] = [];
  const summarizer: Summarizer = {
    name: "recorder",
    summarize: async (req) => {
      calls.push(req);
      return `${req.kind}:${req.previousSummary ? `${req.previousSummary}+` : ""}${req.messages.length}`;
    },
  };
  return { calls, summarizer };
}

async function run(
  messages: PiMessage[],
  firstKeptIndex: number,
  options: SummarizeCutOptions = {},
  { summarizer, calls, contextWindow }: { summarizer?: Summarizer; calls?: SummarizeRequest[]; contextWindow?: number } = {},
) {
  const recorded = recorder();
  summarizer ??= recorded.summarizer;
  calls ??= recorded.calls;
  const plugin: CompactionPlugin = {
    name: "p",
    apply(c) {
      c.hooks.selectCut.tap("p", () => ({ firstKeptIndex }));
      c.hooks.summarize.tapPromise("p", async (draft, r) => ({ ...draft, text: await summarizeCut(r, options) }));
    },
  };
  const compactor = new Compactor<PiMessage>({
    adapter: createPiAdapter(),
    tokenCounter: createEstimateCounter(),
    summarizer,
    plugins: [plugin],
    contextWindow: contextWindow ?? 1_000_000,
    // The rooms these tests state are shares of the whole window.
    reserveTokens: 0,
    summaryMaxTokens: 800,
  });
  return { result: await compactor.compact({ messages }), calls };
}

describe("summarizeCut", () => {
  it("summarises the history in one call with the compactor's summary length by default", async () => {
    // The history is longer than its summary: the core never writes a summary that makes the context bigger.
    const { result, calls } = await run([user(words(20)), assistant(words(20)), user("c"), assistant("d")], 2);
    expect(result.summary).toBe("history:2");
    expect(calls.map((c) => c.maxTokens)).toEqual([800]);
  });

  it("asks by default for at most a quarter of the budget, so a small window keeps room for the newest turns", async () => {
    const input = [user(words(40)), assistant(words(40)), user(words(10)), assistant("ok")];
    // window 2,000 (no reserve): a quarter is 500, under the compactor's 800; the kept messages leave far more
    const { calls } = await run(input, 2, {}, { contextWindow: 2000 });
    expect(calls.map((c) => c.maxTokens)).toEqual([500]);
  });

  // A split turn is never the newest one (the newest user message is never compacted), hence the last user message.
  it("adds a separate turn-prefix summary for a split turn, at half the length", async () => {
    const { result, calls } = await run([user(words(20)), assistant(words(20)), user(words(20)), assistant(words(20)), assistant("e"), user("f")], 4);
    expect(result.summary).toBe(`history:2\n\n---\n\n${SPLIT_TURN_HEADING}\n\nturnPrefix:2`);
    expect(calls.map((c) => [c.kind, c.maxTokens])).toEqual([
      ["history", 800],
      ["turnPrefix", 400],
    ]);
  });

  it("updates the previous summary and does not pass it as a message", async () => {
    const { result } = await run([summaryMessage("old"), user(words(20)), assistant(words(20)), user("c")], 3);
    expect(result.summary).toBe("history:old+2");
  });

  it("summarises in chunks, each chunk updating the summary of the ones before", async () => {
    const messages = [user(words(40)), assistant(words(40)), user(words(40)), assistant(words(40)), user("new")];
    const { result, calls } = await run(messages, 4, { chunkTokens: 150 }); // 60 tokens each
    expect(calls.map((c) => c.messages.length)).toEqual([2, 2]);
    expect(result.summary).toBe("history:history:2+2");
  });

  it("fails rather than drop messages when the summarizer answers with blank text", async () => {
    const blank: Summarizer = { name: "blank", summarize: async () => "   " };
    const input = [user("a"), assistant("b"), user("c"), assistant("d"), assistant("e")];
    const { result } = await run(input, 4, {}, { summarizer: blank });
    expect(result.status).toBe("failed");
    expect(result.error?.code).toBe("COMPACTION_SUMMARIZER_FAILED");
    expect(result.messages).toBe(input);
  });

  it("limits the summary to what the kept messages leave of the budget, and says so", async () => {
    const input = [user(words(40)), assistant(words(40)), user(words(100)), assistant("ok")];
    // kept: user(100 words) + "ok" = 150 + 1 tokens by chars/4; window 300 leaves 149
    // 800 asked for (the default would be a quarter of the budget, 75), so the room is what limits it
    const { result, calls } = await run(input, 2, { maxTokens: 800 }, { contextWindow: 300 });
    expect(calls.map((c) => c.maxTokens)).toEqual([149]);
    expect(result.warnings.join("\n")).toContain("The summary was limited to 149 tokens");
  });

  it("shares a tight room between a split turn's two summaries in proportion", async () => {
    const input = [user(words(40)), assistant(words(40)), user(words(40)), assistant(words(40)), assistant(words(100)), user("")];
    // kept: the last assistant message, 150 tokens by chars/4, and an empty request; window 450 leaves 300 of the 800 + 400 asked,
    // less the separator between the two summaries
    const separator = createEstimateCounter().count(SPLIT_TURN_SEPARATOR);
    expect(separator).toBeGreaterThan(5);
    const { calls } = await run(input, 4, { maxTokens: 800 }, { contextWindow: 450 });
    const turnPrefix = Math.floor((400 * (300 - separator)) / 1200);
    expect(calls.map((c) => [c.kind, c.maxTokens])).toEqual([
      ["history", 300 - separator - turnPrefix],
      ["turnPrefix", turnPrefix],
    ]);
  });

  it("fits a split turn's two summaries and the separator between them in the room the kept messages leave", async () => {
    // A summarizer that writes as much as it is allowed: maxTokens tokens by chars/4.
    const filling: Summarizer = { name: "filling", summarize: async (req) => "abc ".repeat(req.maxTokens) };
    const counter = createEstimateCounter();
    for (const contextWindow of [200, 260, 450, 1000]) {
      // The compacted messages (1,200 tokens) are more than any of these summaries, so each run compacts.
      const input = [user(words(200)), assistant(words(200)), user(words(200)), assistant(words(200)), assistant(words(100)), user("")];
      const { result } = await run(input, 4, {}, { summarizer: filling, contextWindow });
      expect(result.status, result.reason ?? "").toBe("compacted");
      // The kept messages take 150 tokens of the window (no reserve).
      expect(counter.count(result.summary ?? ""), `window ${contextWindow}`).toBeLessThanOrEqual(contextWindow - 150);
      expect(result.warnings.join("\n")).not.toMatch(/still over the budget/);
    }
  });

  it("keeps the tokens a caller will add out of the summary's room", async () => {
    const input = [user(words(40)), assistant(words(40)), user(words(100)), assistant("ok")];
    const { calls } = await run(input, 2, { reserveTokens: 9, maxTokens: 800 }, { contextWindow: 300 });
    expect(calls.map((c) => c.maxTokens)).toEqual([140]);
  });

  it("hands the plugin's own signal to the summarizer", async () => {
    const controller = new AbortController();
    const { calls } = await run([user("a"), assistant("b"), user("c")], 2, { signal: controller.signal });
    expect(calls[0]?.signal?.aborted).toBe(false);
    controller.abort();
    expect(calls[0]?.signal?.aborted).toBe(true);
  });

  it("gives a message larger than a chunk a chunk of its own", async () => {
    const messages = [user(words(400)), assistant("ok"), user("new")];
    const { calls } = await run(messages, 2, { chunkTokens: 100 });
    expect(calls.map((c) => c.messages.length)).toEqual([1, 1]);
  });
});

describe("Compactor.provides", () => {
  it("is true only for capabilities an applied plugin declares", () => {
    const compactor = new Compactor<PiMessage>({
      adapter: createPiAdapter(),
      tokenCounter: createEstimateCounter(),
      plugins: [{ name: "recall", provides: ["memory_search"], apply() {} }],
    });
    expect(compactor.provides("memory_search")).toBe(true);
    expect(compactor.provides("embeddings")).toBe(false);
  });
});
