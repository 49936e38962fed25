/** Layers 2 and 3 through the Compactor: when each runs, what it keeps, and what it reports. */
import { COMPACTED_SHARE, type CompactionTrigger, type Summarizer } from "@compaction/core";
import { builders, FORMATS } from "@compaction/core/testing";
import { describe, expect, it } from "vitest";
import { FULL_COMPACTION_WARNING, FULL_SPLIT_COMPACTION_WARNING, layered } from "./layered.js";
import type { LayeredOptions } from "./options.js";
import { pruneToolOutputs } from "./prune.js";
import { chatTurn, compactorFor, lastUserAt, text, toolTurn, windowFor } from "./test-support/conversation.js";

describe.each(FORMATS)("layers 2 and 3 (%s)", (format) => {
  const b = builders(format);

  /** Six chat turns of 10,000 tokens (5,000 per message): no tool output, so layer 1 never runs. */
  const chat = () => Array.from({ length: 6 }, (_, k) => chatTurn(b, `turn ${k}`, 5000)).flat();

  async function run(
    messages: unknown[],
    ratio: number,
    trigger: CompactionTrigger = "auto",
    options: Partial<LayeredOptions> = {},
    summarizer?: Summarizer,
  ) {
    const c = compactorFor(format, [layered(options)], summarizer);
    const total = c.tokens.total(messages);
    const result = await c.compact({ messages, contextWindow: windowFor(total, ratio), trigger });
    return { c, result };
  }

  it.each([
    { when: "auto, just under summarizeThreshold", ratio: 0.879, trigger: "auto", layer: null },
    { when: "auto, just over summarizeThreshold", ratio: 0.881, trigger: "auto", layer: "summarize" },
    { when: "auto, just under fullThreshold", ratio: 0.949, trigger: "auto", layer: "summarize" },
    { when: "auto, just over fullThreshold", ratio: 0.951, trigger: "auto", layer: "full" },
    { when: "manual, far below every threshold", ratio: 0.3, trigger: "manual", layer: "summarize" },
    { when: "manual, just over fullThreshold", ratio: 0.951, trigger: "manual", layer: "full" },
  ] as const)("$when: layer $layer", async ({ ratio, trigger, layer }) => {
    const messages = chat();
    const { result } = await run(messages, ratio, trigger);
    if (layer === null) {
      expect(result.status).toBe("noop");
      expect(result.messages).toBe(messages);
      expect(result.event).toBeNull();
    } else {
      expect(result.status).toBe("compacted");
      expect(result.event?.layer).toBe(layer);
      expect(result.cut?.layer).toBe(layer);
      expect(result.event?.strategy).toBe("layered");
    }
  });

  it("layer 2 keeps as many of the newest whole messages as fit summarizeProtectTokens", async () => {
    const messages = chat();
    const { c, result } = await run(messages, 0.9);
    const first = result.cut?.firstKeptIndex ?? -1;
    const kept = c.tokens.total(messages.slice(first));
    expect(kept).toBeLessThanOrEqual(25000);
    expect(kept + c.tokens.count(messages[first - 1])).toBeGreaterThan(25000);
    expect(result.messages.slice(-(messages.length - first))).toEqual(messages.slice(first));
  });

  it("layer 2 summarises the older messages into one summary message", async () => {
    const messages = chat();
    const { c, result } = await run(messages, 0.9);
    const first = result.cut?.firstKeptIndex ?? -1;
    expect(result.summary).toBe(`summary of ${first} messages`);
    expect(c.facts.of(result.messages[0]).kind).toBe("summary");
    expect(result.messages).toHaveLength(1 + messages.length - first);
  });

  // Issue 31 changed this on purpose: layer 3 used to keep only the last turn, throwing away the room it still had.
  it("layer 3 keeps the newest whole messages that fit summarizeProtectTokens, the last turn among them, and summarises the rest", async () => {
    const messages = chat();
    const { c, result } = await run(messages, 0.96);
    const first = result.cut?.firstKeptIndex ?? -1;
    const kept = c.tokens.total(messages.slice(first));
    expect(first).toBeLessThan(lastUserAt(c, messages));
    expect(kept).toBeLessThanOrEqual(25000);
    expect(kept + c.tokens.count(messages[first - 1])).toBeGreaterThan(25000);
    expect(result.cut?.isSplitTurn).toBe(false);
    expect(result.messages.slice(1)).toEqual(messages.slice(first));
  });

  it("layer 3 keeps a last turn longer than summarizeProtectTokens whole when it fits", async () => {
    const messages = [...chat(), b.user("long task"), b.assistant(text(15000)), b.assistant(text(15000))];
    const { c, result } = await run(messages, 0.96);
    expect(result.event?.layer).toBe("full");
    expect(result.cut?.firstKeptIndex).toBe(lastUserAt(c, messages));
    expect(result.messages.slice(1)).toEqual(messages.slice(lastUserAt(c, messages)));
  });

  it("layer 3 says in a warning, in the result and its event, that a full compaction happened", async () => {
    const { result } = await run(chat(), 0.96);
    expect(result.warnings).toContain(`[layered] ${FULL_COMPACTION_WARNING}`);
    expect(result.event?.warnings).toContain(`[layered] ${FULL_COMPACTION_WARNING}`);
  });

  it("layers 1 and 2 add no full-compaction warning", async () => {
    const { result } = await run(chat(), 0.9);
    expect(result.warnings.some((w) => w.includes("full compaction"))).toBe(false);
  });

  it("layer 3 keeps pinned messages verbatim ahead of the summary and never summarises them", async () => {
    const messages = chat();
    messages[2] = b.pin(messages[2]);
    const seen: string[] = [];
    const recording: Summarizer = {
      name: "recording",
      summarize: async (request) => {
        for (const m of request.messages) seen.push(m.text);
        return "summary";
      },
    };
    const { c, result } = await run(messages, 0.96, "auto", {}, recording);
    expect(result.messages[0]).toBe(messages[2]);
    expect(c.facts.of(result.messages[1]).kind).toBe("summary");
    expect(seen).not.toContain(c.facts.of(messages[2]).text);
    const first = result.cut?.firstKeptIndex ?? -1;
    expect(first).toBeGreaterThan(2);
    expect(seen.length).toBe(first - 1);
  });

  // Issue 10 changed these on purpose: the newest turn is kept from its request on (shrunk to head and tail when over the budget), never split.
  it("layer 3 splits a last turn larger than the run's target, its request kept ahead of the summary", async () => {
    const small = [...chatTurn(b, "a", 100), ...chatTurn(b, "b", 100)];
    const messages = [...small, b.user("big task"), b.assistant(text(30000)), b.assistant(text(30000)), b.assistant(text(10000))];
    const c = compactorFor(format, [layered()]);
    const total = c.tokens.total(messages);
    const result = await c.compact({ messages, contextWindow: windowFor(total, 0.96), trigger: "auto" });
    const request = lastUserAt(c, messages);
    expect(result.event?.layer).toBe("full");
    expect(result.cut?.isSplitTurn).toBe(true);
    expect(result.cut?.turnStartIndex).toBe(request);
    expect(result.cut?.firstKeptIndex).toBeGreaterThan(request + 1);
    expect(result.cut?.preservedIndices).toContain(request);
    expect(result.messages).toContain(messages[request]);
    expect(result.tokensAfter).toBeLessThanOrEqual(windowFor(total, 0.96));
  });

  it("layer 3 keeps a last turn past its protected share from its request on while it fits the run's target", async () => {
    const small = [...chatTurn(b, "a", 3000), ...chatTurn(b, "b", 3000)];
    const messages = [...small, b.user("task"), b.assistant(text(300)), b.assistant(text(300)), b.assistant(text(100))];
    const c = compactorFor(format, [layered({ summarizeProtectTokens: 100 })]);
    const total = c.tokens.total(messages);
    const result = await c.compact({ messages, contextWindow: windowFor(total, 0.96), trigger: "auto" });
    expect(result.status).toBe("compacted");
    expect(result.cut?.isSplitTurn).toBe(false);
    expect(result.cut?.firstKeptIndex).toBe(lastUserAt(c, messages));
  });

  it("layer 3 splits the last turn when it is all there is and over the run's target, its request ahead of the summary, or in it for a host that records only summary + suffix", async () => {
    const messages = [b.user("one long task"), b.assistant(text(20000)), b.assistant(text(20000)), b.assistant(text(5000))];
    const { result } = await run(messages, 0.97);
    expect(result.status).toBe("compacted");
    expect(result.cut?.preservedIndices).toEqual([0]);
    expect(result.messages[0]).toBe(messages[0]);
    const c = compactorFor(format, [layered()]);
    const suffixOnly = await c.compact({ messages, contextWindow: windowFor(c.tokens.total(messages), 0.97), trigger: "auto", suffixOnly: true });
    expect(suffixOnly.status).toBe("compacted");
    expect(suffixOnly.cut?.preservedIndices).toEqual([]);
    expect(suffixOnly.summary).toContain("one long task");
    expect(suffixOnly.messages.slice(1)).toEqual(messages.slice(suffixOnly.cut!.firstKeptIndex));
  });

  it("layer 3 without any user message keeps the newest messages that fit beside the summary in the run's target, within the window", async () => {
    const messages = [b.assistant(text(5000)), b.assistant(text(5000)), b.assistant(text(5000))];
    const { c, result } = await run(messages, 0.97, "auto", { summaryMaxTokens: 1000 });
    expect(result.event?.layer).toBe("full");
    // The window is 15,000 / 0.97 (15,464) and the run's target 0.6 of 80% of it (7,422): beside
    // the 1,000-token summary's room one message fits the target; two would fit the budget, and be
    // over it again at the next message.
    const target = Math.floor(COMPACTED_SHARE * c.autoCompactTokens(windowFor(c.tokens.total(messages), 0.97)));
    expect(result.cut?.firstKeptIndex).toBe(2);
    expect(c.tokens.total(messages.slice(2)) + 1000).toBeLessThanOrEqual(target);
  });

  it("layer 3 over the window keeps the newest messages that fit beside the summary in the budget, not the run's target", async () => {
    const messages = [b.assistant(text(5000)), b.assistant(text(5000)), b.assistant(text(5000))];
    const { c, result } = await run(messages, 1.2, "auto", { summaryMaxTokens: 1000 });
    expect(result.event?.layer).toBe("full");
    // A context larger than the window (15,000 in 12,500): layer 3 recovers from it keeping the
    // newest messages that fit the budget (the whole window here, no reserve): two.
    const window = windowFor(c.tokens.total(messages), 1.2);
    expect(result.cut?.firstKeptIndex).toBe(1);
    expect(c.tokens.total(messages.slice(1)) + 1000).toBeLessThanOrEqual(window);
  });

  it("layer 2 keeps within the run's target what layer 3 would keep up to the budget", async () => {
    const messages = [b.assistant(text(5000)), b.assistant(text(5000)), b.assistant(text(5000))];
    const { c, result } = await run(messages, 0.9, "auto", { summaryMaxTokens: 1000, summarizeProtectTokens: 12_000 });
    expect(result.event?.layer).toBe("summarize");
    // Over the target (0.6 of 80% of 15,000 / 0.9): beside the summary's room one message fits it.
    const target = Math.floor(COMPACTED_SHARE * c.autoCompactTokens(windowFor(c.tokens.total(messages), 0.9)));
    expect(result.cut?.firstKeptIndex).toBe(2);
    expect(c.tokens.total(messages.slice(2)) + 1000).toBeLessThanOrEqual(target);
    expect(result.warnings.some((w) => /summarizeProtectTokens \(12000\) was lowered to \d+ .*within the run's target/.test(w))).toBe(true);
  });

  it("a context within the run's target is not cut for it: a manual run keeps summarizeProtectTokens", async () => {
    // 6,000 tokens under a target of 7,680 (0.6 of 80% of a 16,000 window). Within the target
    // (4,680 tokens beside a 3,000-token summary) layer 2 would keep less than
    // summarizeProtectTokens, summarising most of a context that needed no room.
    const messages = Array.from({ length: 6 }, (_, k) => chatTurn(b, `t${k}`, 495)).flat();
    const c = compactorFor(format, [layered({ summarizeProtectTokens: 5000, summaryMaxTokens: 3000 })]);
    expect(c.tokens.total(messages)).toBeLessThan(Math.floor(COMPACTED_SHARE * c.autoCompactTokens(16_000)));
    const result = await c.compact({ messages, contextWindow: 16_000, trigger: "manual" });
    expect(result.event?.layer).toBe("summarize");
    const kept = c.tokens.total(messages.slice(result.cut?.firstKeptIndex));
    expect(kept).toBeLessThanOrEqual(5000);
    expect(kept).toBeGreaterThan(Math.floor(COMPACTED_SHARE * c.autoCompactTokens(16_000)) - 3000);
    expect(result.warnings.filter((w) => w.includes("was lowered"))).toEqual([]);
  });

  it("an automatic run below every threshold changes nothing", async () => {
    const messages = chat();
    const { result } = await run(messages, 0.5);
    expect(result.status).toBe("noop");
    expect(result.messages).toBe(messages);
  });

  it("a manual run with nothing old enough to summarise is a noop", async () => {
    const messages = chatTurn(b, "only", 1000);
    const { result } = await run(messages, 0.3, "manual");
    expect(result.status).toBe("noop");
    expect(result.messages).toBe(messages);
  });
});

describe.each(FORMATS)("layers after pruning (%s)", (format) => {
  const b = builders(format);
  /** 55,000 tokens of tool output (the older 30,000 prunable), then 22,000 tokens of chat. */
  const scene = () => [...toolTurn(b, "c1", 30000), ...toolTurn(b, "c2", 25000), ...chatTurn(b, "later", 11000)];

  function saved(messages: unknown[]) {
    const c = compactorFor(format, []);
    const tokensSaved = pruneToolOutputs(messages, {
      adapter: c.adapter,
      factsOf: (m) => c.facts.of(m),
      tokensOf: (m) => c.tokens.count(m),
      protectTokens: 40000,
    }).tokensSaved;
    return { total: c.tokens.total(messages), tokensSaved };
  }

  it("reports layer prune when pruning alone brings the context under summarizeThreshold", async () => {
    const messages = scene();
    const { total, tokensSaved } = saved(messages);
    const c = compactorFor(format, [layered()]);
    const result = await c.compact({ messages, contextWindow: windowFor(total - tokensSaved, 0.87), trigger: "auto" });
    expect(result.event?.layer).toBe("prune");
    expect(result.summary).toBeNull();
  });

  it("summarises the pruned messages when the context is still above summarizeThreshold after pruning", async () => {
    const messages = scene();
    const { total, tokensSaved } = saved(messages);
    const c = compactorFor(format, [layered()]);
    const result = await c.compact({ messages, contextWindow: windowFor(total - tokensSaved, 0.9), trigger: "auto" });
    expect(result.event?.layer).toBe("summarize");
    expect(result.summary).not.toBeNull();
  });

  it("a manual run prunes and then summarises, though the context is below summarizeThreshold", async () => {
    const messages = scene();
    const seen: string[] = [];
    const recording: Summarizer = {
      name: "recording",
      summarize: async (request) => {
        for (const m of request.messages) seen.push(m.text);
        return "summary";
      },
    };
    const c = compactorFor(format, [layered()], recording);
    const result = await c.compact({ messages, contextWindow: windowFor(c.tokens.total(messages), 0.85), trigger: "manual" });
    expect(result.event?.layer).toBe("summarize");
    expect(seen.some((t) => t.startsWith("[pruned tool output: bash"))).toBe(true);
  });

  it("keeps the pruned result when the summarising cut would compact nothing", async () => {
    // At 60% of the window (pruning from 50%) what pruning leaves is within the run's target
    // (0.6 of 80% of the window), so layer 2 may keep up to the budget: everything, here.
    const messages = scene();
    const { total, tokensSaved } = saved(messages);
    const window = windowFor(total, 0.6);
    const c = compactorFor(format, [layered({ pruneThreshold: 0.5, summarizeProtectTokens: 1e9 })]);
    expect(total - tokensSaved).toBeLessThanOrEqual(Math.floor(COMPACTED_SHARE * c.autoCompactTokens(window)));
    const result = await c.compact({ messages, contextWindow: window, trigger: "manual" });
    expect(result.status).toBe("compacted");
    expect(result.event?.layer).toBe("prune");
    expect(result.summary).toBeNull();
  });

  it("summarises down to the run's target when what pruning left is over it, whatever summarizeProtectTokens says", async () => {
    // At 85% of the window what pruning leaves (47,000 tokens) is over the run's target (0.6 of
    // 80% of the window): keeping it all would bring the next compaction a few turns later.
    const messages = scene();
    const { total, tokensSaved } = saved(messages);
    const window = windowFor(total, 0.85);
    const c = compactorFor(format, [layered({ summarizeProtectTokens: 1e9 })]);
    const target = Math.floor(COMPACTED_SHARE * c.autoCompactTokens(window));
    expect(total - tokensSaved).toBeGreaterThan(target);
    const result = await c.compact({ messages, contextWindow: window, trigger: "manual" });
    expect(result.event?.layer).toBe("summarize");
    expect(result.summary).not.toBeNull();
    expect(result.tokensAfter).toBeLessThanOrEqual(target);
    expect(
      result.warnings.some((w) => new RegExp(`^\\[layered\\] summarizeProtectTokens \\(1000000000\\) was lowered to \\d+ for this run, .* within the run's target \\(${target} tokens`).test(w)),
      result.warnings.join("\n"),
    ).toBe(true);
  });
});

describe("layers and the provider's usage figure (pi)", () => {
  const b = builders("pi");
  const OVERHEAD = 20000; // what the provider counts beyond the messages: system prompt, tool definitions

  /** The scene of the pruning tests, its last assistant message carrying the provider's usage. */
  function sceneWithUsage() {
    const messages = [...toolTurn(b, "c1", 30000), ...toolTurn(b, "c2", 25000), ...chatTurn(b, "later", 11000)];
    const c = compactorFor("pi", []);
    const counted = c.tokens.total(messages);
    const last = { ...messages.at(-1), usage: { input: counted + OVERHEAD - 100, output: 100, cacheRead: 0, cacheWrite: 0, totalTokens: counted + OVERHEAD }, stopReason: "stop" };
    messages[messages.length - 1] = last;
    const tokensSaved = pruneToolOutputs(messages, {
      adapter: c.adapter,
      factsOf: (m) => c.facts.of(m),
      tokensOf: (m) => c.tokens.count(m),
      protectTokens: 40000,
    }).tokensSaved;
    return { messages, counted, tokensSaved };
  }

  /** The context after pruning as the run measures it: what is left, scaled by the usage figure over our count. */
  const afterPruning = (counted: number, tokensSaved: number) => Math.round(((counted - tokensSaved) * (counted + OVERHEAD)) / counted);

  it("decides layer 2 on the provider's measure of what pruning left (the usage figure's scale), not on counts alone", async () => {
    const { messages, counted, tokensSaved } = sceneWithUsage();
    const window = windowFor(afterPruning(counted, tokensSaved), 0.9);
    expect((counted - tokensSaved) / window).toBeLessThan(0.88); // counts alone would stop after pruning
    const c = compactorFor("pi", [layered()]);
    const result = await c.compact({ messages, contextWindow: window, trigger: "auto" });
    expect(result.tokensBefore).toBe(counted + OVERHEAD);
    expect(result.event?.layer).toBe("summarize");
  });

  it("stops after pruning when the provider's measure of what pruning left is under summarizeThreshold", async () => {
    const { messages, counted, tokensSaved } = sceneWithUsage();
    const c = compactorFor("pi", [layered()]);
    const result = await c.compact({ messages, contextWindow: windowFor(afterPruning(counted, tokensSaved), 0.87), trigger: "auto" });
    expect(result.event?.layer).toBe("prune");
  });
});
