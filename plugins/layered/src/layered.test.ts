/** The plugin as a whole: its shape, failures, immutability and the summary options. */
import { type CompactionTrigger, Compactor, createEstimateCounter, STAGE_PRUNE, STAGE_STRATEGY, type Summarizer } from "@compaction/core";
import { builders, FORMATS } from "@compaction/core/testing";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import { describe, expect, it } from "vitest";
import defaultExport, { layered, PLUGIN_NAME } from "./index.js";
import type { LayeredOptions } from "./options.js";
import { pruneToolOutputs } from "./prune.js";
import { chatTurn, compactorFor, text, toolTurn, windowFor } from "./test-support/conversation.js";

interface Recorded {
  readonly maxTokens: number;
  readonly kind: string;
  readonly texts: readonly string[];
}

function recordingSummarizer(calls: Recorded[]): Summarizer {
  return {
    name: "recording",
    summarize: async (request) => {
      calls.push({ maxTokens: request.maxTokens, kind: request.kind, texts: request.messages.map((m) => m.text) });
      return `summary ${calls.length}`;
    },
  };
}

describe("layered plugin", () => {
  it("is the package's default and named export, named `layered`", () => {
    expect(defaultExport).toBe(layered);
    expect(layered().name).toBe(PLUGIN_NAME);
    expect(PLUGIN_NAME).toBe("layered");
  });

  it("taps beforeCompact at STAGE_PRUNE and selectCut and summarize at STAGE_STRATEGY, each under its name", () => {
    const c = compactorFor("pi", [layered()]);
    const taps = (hook: { taps: { name: string; stage?: number }[] }) => hook.taps.map((t) => [t.name, t.stage ?? 0]);
    expect(taps(c.hooks.beforeCompact as never)).toEqual([[PLUGIN_NAME, STAGE_PRUNE]]);
    expect(taps(c.hooks.selectCut as never)).toEqual([[PLUGIN_NAME, STAGE_STRATEGY]]);
    expect(taps(c.hooks.summarize as never)).toEqual([[PLUGIN_NAME, STAGE_STRATEGY]]);
  });

  /** A plugin whose cut wins before layered's (stage -10), writing its own summary when `summary` is given. */
  function otherPlugin(summary?: string) {
    return {
      name: "other",
      apply(c: Compactor<any>) {
        c.hooks.selectCut.tap({ name: "other", stage: -10 }, () => ({ firstKeptIndex: 2 }));
        if (summary !== undefined) c.hooks.summarize.tap({ name: "other", stage: -10 }, (draft) => ({ ...draft, text: summary }));
      },
    };
  }

  it("leaves another plugin's cut alone when that plugin already wrote its summary", async () => {
    const b = builders("pi");
    const messages = [...chatTurn(b, "a", 1000), ...chatTurn(b, "b", 1000)];
    const calls: Recorded[] = [];
    const c = compactorFor("pi", [layered(), otherPlugin("other summary")], recordingSummarizer(calls));
    const result = await c.compact({ messages, contextWindow: 100000, trigger: "manual" });
    expect(result.cut?.selectedBy).toBe("other");
    expect(result.summary).toBe("other summary");
    expect(calls).toHaveLength(0);
  });

  it("writes the summary of another plugin's cut when no plugin has written one", async () => {
    const b = builders("pi");
    const messages = [...chatTurn(b, "a", 1000), ...chatTurn(b, "b", 1000)];
    const calls: Recorded[] = [];
    const c = compactorFor("pi", [layered(), otherPlugin()], recordingSummarizer(calls));
    const result = await c.compact({ messages, contextWindow: 100000, trigger: "manual" });
    expect(result.status).toBe("compacted");
    expect(result.cut?.selectedBy).toBe("other");
    expect(result.summary).toBe("summary 1");
    expect(calls).toHaveLength(1);
    expect(calls[0]?.texts).toEqual(messages.slice(0, 2).map((m) => c.facts.of(m).text));
    expect(result.warnings.some((w) => w.includes("full compaction"))).toBe(false);
  });
});

describe.each(FORMATS)("layered, every layer (%s)", (format) => {
  const b = builders(format);
  /** Tool output to prune (layer 1 always runs), then chat. */
  const scene = () => [...toolTurn(b, "c1", 30000), ...toolTurn(b, "c2", 25000), ...chatTurn(b, "later", 11000)];
  /** Share of the window the context fills after pruning, for each layer. */
  const LAYER_RATIOS = [
    ["prune", 0.6],
    ["summarize", 0.9],
    ["full", 0.97],
  ] as const;

  async function run(ratioAfterPruning: number, options: Partial<LayeredOptions> = {}, summarizer?: Summarizer, trigger: CompactionTrigger = "auto") {
    const messages = scene();
    const before = structuredClone(messages);
    const c = compactorFor(format, [layered(options)], summarizer);
    const { tokensSaved } = pruneToolOutputs(messages, {
      adapter: c.adapter,
      factsOf: (m) => c.facts.of(m),
      tokensOf: (m) => c.tokens.count(m),
      protectTokens: 40000,
    });
    const contextWindow = windowFor(c.tokens.total(messages) - tokensSaved, ratioAfterPruning);
    const result = await c.compact({ messages, contextWindow, trigger });
    return { c, messages, before, result };
  }

  it.each(LAYER_RATIOS)("layer %s leaves the input messages unchanged", async (layer, ratio) => {
    const { messages, before, result } = await run(ratio);
    expect(result.event?.layer).toBe(layer);
    expect(messages).toEqual(before);
  });

  it.each(LAYER_RATIOS.slice(1))("a failing summarizer in layer %s fails the run and returns the input untouched, pruning included", async (_layer, ratio) => {
    const failing: Summarizer = { name: "failing", summarize: async () => Promise.reject(new Error("model unavailable")) };
    const { messages, result } = await run(ratio, {}, failing);
    expect(result.status).toBe("failed");
    expect(result.messages).toBe(messages);
    expect(result.error?.message).toContain("model unavailable");
    expect(result.event).toBeNull();
  });

  it("layer 2 never summarises a pinned message and keeps it ahead of the summary", async () => {
    const messages = [...chatTurn(b, "a", 5000), ...chatTurn(b, "b", 5000), ...chatTurn(b, "c", 5000), ...chatTurn(b, "d", 5000)];
    messages[0] = b.pin(messages[0]);
    const calls: Recorded[] = [];
    const c = compactorFor(format, [layered({ summarizeProtectTokens: 10000 })], recordingSummarizer(calls));
    const result = await c.compact({ messages, contextWindow: windowFor(c.tokens.total(messages), 0.9), trigger: "auto" });
    expect(result.event?.layer).toBe("summarize");
    expect(result.messages[0]).toBe(messages[0]);
    expect(calls.flatMap((call) => call.texts)).not.toContain(c.facts.of(messages[0]).text);
    expect(calls.flatMap((call) => call.texts)).toContain(c.facts.of(messages[1]).text);
  });

  /** Six chat turns of about 10,000 tokens, layer 2 keeping the newest two whole (no split turn). */
  async function summarizeTurns(options: Partial<LayeredOptions>, calls: Recorded[]) {
    const messages = Array.from({ length: 6 }, (_, k) => chatTurn(b, `t${k}`, 5000)).flat();
    const c = compactorFor(format, [layered({ summarizeProtectTokens: 21000, ...options })], recordingSummarizer(calls));
    const result = await c.compact({ messages, contextWindow: windowFor(c.tokens.total(messages), 0.9), trigger: "auto" });
    expect(result.cut?.isSplitTurn).toBe(false);
    return result;
  }

  it("asks for summaries of the compactor's summaryMaxTokens by default", async () => {
    const calls: Recorded[] = [];
    await summarizeTurns({}, calls);
    expect(calls.map((call) => call.maxTokens)).toEqual([4000]);
  });

  it("asks for summaries of summaryMaxTokens when set", async () => {
    const calls: Recorded[] = [];
    await summarizeTurns({ summaryMaxTokens: 700 }, calls);
    expect(calls.map((call) => call.maxTokens)).toEqual([700]);
  });

  it("shares summaryMaxTokens between the history and a split turn's early part", async () => {
    const calls: Recorded[] = [];
    // A split turn is never the newest turn (issue 10), hence the request after it.
    const messages = [...chatTurn(b, "old", 2000), b.user("task"), b.assistant(text(9000)), b.assistant(text(9000)), b.assistant(text(100)), b.user("next")];
    const c = compactorFor(format, [layered({ summarizeProtectTokens: 1000, summaryMaxTokens: 900 })], recordingSummarizer(calls));
    const result = await c.compact({ messages, contextWindow: windowFor(c.tokens.total(messages), 0.9), trigger: "auto" });
    expect(result.cut?.isSplitTurn).toBe(true);
    expect(calls.map((call) => [call.kind, call.maxTokens])).toEqual([
      ["history", 600],
      ["turnPrefix", 300],
    ]);
  });

  it("summarises a long history in chunks of at most chunkTokens", async () => {
    const calls: Recorded[] = [];
    const messages = Array.from({ length: 8 }, (_, k) => chatTurn(b, `t${k}`, 3000)).flat();
    const c = compactorFor(format, [layered({ chunkTokens: 7000, summarizeProtectTokens: 6100 })], recordingSummarizer(calls));
    const result = await c.compact({ messages, contextWindow: windowFor(c.tokens.total(messages), 0.9), trigger: "auto" });
    expect(result.cut?.compactedIndices).toHaveLength(14);
    expect(calls).toHaveLength(7);
    for (const call of calls) expect(call.texts).toHaveLength(2);
  });
});

describe("layered with the extractive summarizer", () => {
  it.each(FORMATS)("writes a structured summary in layer 2 (%s)", async (format) => {
    const b = builders(format);
    const messages = [...toolTurn(b, "c1", 3000, { command: "npm test", isError: true }), ...chatTurn(b, "later", 4000)];
    const c = new Compactor<any>({ summarizer: createExtractiveSummarizer(), adapter: b.adapter, tokenCounter: createEstimateCounter(), plugins: [layered({ summarizeProtectTokens: 5000 })] });
    const result = await c.compact({ messages, contextWindow: windowFor(c.tokens.total(messages), 0.9), trigger: "auto" });
    expect(result.event?.layer).toBe("summarize");
    expect(result.summary).toContain("## Goal");
    expect(result.summary).toContain("npm test");
  });
});
