import { describe, expect, it } from "vitest";
import { createPiAdapter, type PiMessage } from "../messages/pi-adapter.js";
import type { Summarizer } from "../summarizer/summarizer.js";
import { assistant, toolResult, user, words } from "../testing/pi-messages.js";
import { createEstimateCounter } from "../tokens/estimate-counter.js";
import { Compactor } from "./compactor.js";
import type { CompactionPlugin } from "./plugin.js";
import { STAGE_PRUNE } from "./stages.js";

/** A summarizer that writes `size` words, whatever it summarises. */
function wordy(size: number): Summarizer {
  return { name: "wordy", summarize: async () => words(size, "summary") };
}

/** Cuts at `index` and writes the draft `kind` with the run's summarizer; records whether afterCompact ran. */
function cutAt(index: number, kind: "summary" | "note" = "summary") {
  const seen = { afterCompact: 0 };
  const plugin: CompactionPlugin = {
    name: "cut-at",
    apply(c) {
      c.hooks.selectCut.tap("cut-at", () => ({ firstKeptIndex: index }));
      c.hooks.summarize.tapPromise("cut-at", async (draft, run) => ({ kind, text: await run.summarize(run.historyMessages(), { maxTokens: 10_000 }) }));
      c.hooks.afterCompact.tap("cut-at", () => void (seen.afterCompact += 1));
    },
  };
  return { plugin, seen };
}

function compactor(plugins: CompactionPlugin[], summarizer: Summarizer, contextWindow = 100_000) {
  return new Compactor<PiMessage>({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), summarizer, plugins, contextWindow, reserveTokens: 0 });
}

/** One short turn to compact, then the newest request. */
function shortHistory(): PiMessage[] {
  return [user("fix the parser"), assistant("fixed an off-by-one in parse.ts"), user(`now the tests: ${words(200)}`)];
}

describe("a compaction never makes the context bigger", () => {
  it("refuses a summary that is not smaller than the messages it replaces: a noop giving both sizes, the input untouched, afterCompact not run", async () => {
    const input = shortHistory();
    const { plugin, seen } = cutAt(2);
    const c = compactor([plugin], wordy(40));
    const result = await c.compact({ messages: input });
    expect(result.status).toBe("noop");
    expect(result.messages).toBe(input);
    expect(result.event).toBeNull();
    expect(result.summary).toBeNull();
    expect(result.tokensAfter).toBe(result.tokensBefore);
    expect(seen.afterCompact).toBe(0);
    const summaryTokens = c.tokens.count(c.adapter.createSummary(words(40, "summary")));
    const replaced = c.tokens.total(input.slice(0, 2));
    expect(summaryTokens).toBeGreaterThanOrEqual(replaced);
    const before = c.tokens.total(input);
    expect(result.reason).toBe(
      `The summary (${summaryTokens} tokens) would not be smaller than the ${replaced} tokens of the 2 messages it replaces: the context would be ${before - replaced + summaryTokens} tokens after, not fewer than the ${before} before; too little history comes before the messages 'cut-at' keeps to be worth a summary.`,
    );
  });

  it("compacts the same cut once the history is longer than its summary", async () => {
    const input = [user(`fix the parser: ${words(60)}`), assistant("fixed an off-by-one in parse.ts"), user(`now the tests: ${words(200)}`)];
    const { plugin, seen } = cutAt(2);
    const result = await compactor([plugin], wordy(40)).compact({ messages: input });
    expect(result.status, result.reason ?? "").toBe("compacted");
    expect(result.tokensAfter).toBeLessThan(result.tokensBefore);
    expect(seen.afterCompact).toBe(1);
  });

  it("refuses an eviction note that is not smaller than what it evicts, naming it a note", async () => {
    const input = shortHistory();
    const result = await compactor([cutAt(2, "note").plugin], wordy(40)).compact({ messages: input });
    expect(result.status).toBe("noop");
    expect(result.messages).toBe(input);
    expect(result.reason).toMatch(/^The eviction note \(\d+ tokens\) would not be smaller than the \d+ tokens of the 2 messages it replaces/);
  });

  it("compares in the provider's measure, as the result reports Before and After", async () => {
    const input = shortHistory();
    const total = 2 * createEstimateCounter().count(JSON.stringify(input)); // any figure above our count
    const withUsage = [input[0]!, { ...input[1]!, usage: { input: total, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: total } } as PiMessage, input[2]!];
    const result = await compactor([cutAt(2).plugin], wordy(40)).compact({ messages: withUsage });
    expect(result.status).toBe("noop");
    const sizes = /the context would be ([\d,]+) tokens after, not fewer than the ([\d,]+) before/.exec(result.reason ?? "");
    expect(Number(sizes?.[2]?.replaceAll(",", ""))).toBe(result.tokensBefore);
    expect(Number(sizes?.[1]?.replaceAll(",", ""))).toBeGreaterThanOrEqual(result.tokensBefore);
  });

  it("refuses messages changed in place that are not smaller, naming the plugin", async () => {
    const padder: CompactionPlugin = {
      name: "padder",
      apply: (c) =>
        c.hooks.beforeCompact.tap({ name: "padder", stage: STAGE_PRUNE }, (run) => {
          run.replaceMessages(run.messages.map((m) => (run.factsOf(m).kind === "toolResult" ? c.adapter.replaceToolOutput(m, words(50)) : m)));
        }),
    };
    const input = [user("run it"), assistant("running", [{ id: "c1" }]), toolResult("c1", "ok"), user("next")];
    const result = await compactor([padder], wordy(1)).compact({ messages: input });
    expect(result.status).toBe("noop");
    expect(result.messages).toBe(input);
    expect(result.reason).toMatch(/^The messages 'padder' changed in place would not be smaller: the context would be [\d,]+ tokens after, not fewer than the [\d,]+ before\.$/);
  });

  it("drops the warnings of a refused result's assembly", async () => {
    // Window 400: the 120-token summary of two short messages takes more than the room the kept
    // messages (about 380 tokens) leave, so the assembly shrinks them and says so; the result is
    // still not smaller than the context was, so it is refused, and that warning describes nothing.
    const input = [user("old"), assistant("ok"), user(words(150)), assistant(words(100))];
    const result = await compactor([cutAt(2).plugin], wordy(60), 400).compact({ messages: input });
    expect(result.status).toBe("noop");
    expect(result.reason).toMatch(/^The summary \(\d+ tokens\) would not be smaller/);
    expect(result.warnings).toEqual([]);
  });

  it("compacts what our count finds smaller when the provider's figure is far below it (After in that measure looks larger)", async () => {
    // As a host whose provider reports a few hundred tokens for a context our count puts in the
    // thousands (a fake model, a usage figure covering part of the context): the run's ratio is held
    // at 1, so After in the provider's measure is our count, above the provider's Before; our count
    // of the result is below our count of the input, so the compaction is kept, within the budget.
    const input = [user(words(400)), assistant(words(400)), user(words(40)), assistant("ok"), user("next")];
    const c = compactor([cutAt(2).plugin], wordy(20), 100_000);
    const result = await c.compact({ messages: input, anchor: { tokens: 50, lastIndex: 3 } });
    expect(result.status, result.reason ?? "").toBe("compacted");
    expect(result.tokensAfter).toBeGreaterThanOrEqual(result.tokensBefore);
    expect(result.countedTokensAfter).toBeLessThan(c.tokens.total(input));
  });

  it("never refuses a compaction the budget demands, even where the provider's figure makes After look larger", async () => {
    // The anchor (the last compaction's recorded After) is far below our count of what it covers, so
    // the run's ratio is held at 1 and After (our count) is above Before; the context is over the
    // budget by our count and the result is within it, so it compacts.
    const input = [user(words(400)), assistant(words(400)), user(words(40)), assistant("ok"), user("next")];
    const c = compactor([cutAt(2).plugin], wordy(20), 600);
    const result = await c.compact({ messages: input, anchor: { tokens: 50, lastIndex: 3 } });
    expect(c.tokens.total(input)).toBeGreaterThan(600);
    expect(result.status, result.reason ?? "").toBe("compacted");
    expect(result.countedTokensAfter).toBeLessThanOrEqual(600);
    expect(result.tokensAfter).toBeGreaterThanOrEqual(result.tokensBefore);
  });
});
