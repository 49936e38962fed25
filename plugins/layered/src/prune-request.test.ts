/** Layer 1 at send time (`shapeRequest`), on the real transcripts recorded by pi-coding-agent, Claude Code and Codex. */
import { Compactor, createAnthropicAdapter, createEstimateCounter, createOpenAIAdapter, createPiAdapter, type MessageAdapter } from "@compaction/core";
import { CLAUDE_FIXTURES, CODEX_FIXTURES, loadClaudeMessages, loadCodexMessages, loadPiMessages, PI_FIXTURES } from "@compaction/fixtures";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import { describe, expect, it } from "vitest";
import { layered } from "./layered.js";
import { isPrunedMarker } from "./marker.js";
import type { LayeredOptions } from "./options.js";
import { pruneToolOutputs } from "./prune.js";
import { ensureRequestPruning, REQUEST_PRUNING_PLUGIN, requestPruning } from "./prune-request.js";

const OPTIONS: Partial<LayeredOptions> = { pruneMinToolTokens: 2_000, pruneProtectTokens: 4_000, pruneMinSavings: 3_000 };

const REAL: ReadonlyArray<readonly [string, MessageAdapter<any>, () => unknown[]]> = [
  ...PI_FIXTURES.map((file) => [file, createPiAdapter(), () => loadPiMessages(file)] as const),
  ...CLAUDE_FIXTURES.map((file) => [file, createAnthropicAdapter(), () => loadClaudeMessages(file)] as const),
  ...CODEX_FIXTURES.map((file) => [file, createOpenAIAdapter(), () => loadCodexMessages(file)] as const),
];

function compactorFor(adapter: MessageAdapter<any>, options = OPTIONS) {
  return new Compactor<any>({ summarizer: createExtractiveSummarizer(), adapter, tokenCounter: createEstimateCounter(), plugins: [layered(options)] });
}

/** Indices of the messages sent as pruned markers. */
function prunedIn(c: Compactor<any>, sent: readonly unknown[]): number[] {
  return sent.flatMap((m, i) => (c.facts.of(m).kind === "toolResult" && isPrunedMarker(c.facts.of(m).text) ? [i] : []));
}

describe.each(REAL)("layered's send-time pruning on %s", (_file, adapter, load) => {
  const messages = load();
  const c = compactorFor(adapter);
  const window = Math.ceil(c.tokens.total(messages) * 1.1); // at about 90% of the window: above pruneThreshold
  const already = prunedIn(c, messages); // a transcript may hold markers of its own

  it("prunes only tool outputs older than the protected tail, and at least pruneMinSavings when it prunes", () => {
    // The budget at our count: the default one is the window at the provider's ratio, which the
    // Claude Code transcripts' usage figures put above 1.1x chars/4, so the core would also
    // shrink messages here; this test is about what pruning alone changes.
    const shaped = c.shapeRequest(messages, { contextWindow: window, budget: window });
    const pruned = prunedIn(c, shaped.messages).filter((i) => !already.includes(i));
    const candidates = pruneToolOutputs(messages, {
      adapter,
      factsOf: (m) => c.facts.of(m),
      tokensOf: (m) => c.tokens.count(m),
      protectTokens: OPTIONS.pruneProtectTokens as number,
    });
    expect(candidates.prunedIndices).toEqual(expect.arrayContaining(pruned));
    // The pruned ones are the oldest candidates, and what stays unpruned would save less than one step.
    expect(pruned).toEqual(candidates.prunedIndices.slice(0, pruned.length));
    const left = candidates.prunedIndices.slice(pruned.length);
    const leftSaved = left.reduce((sum, i) => sum + c.tokens.count(messages[i]) - c.tokens.count(candidates.messages[i]), 0);
    expect(leftSaved).toBeLessThan(OPTIONS.pruneMinSavings as number);
    if (pruned.length > 0) expect(shaped.shapedBy).toEqual(["layered"]);
    shaped.messages.forEach((m, i) => {
      if (!pruned.includes(i)) expect(m).toBe(messages[i]);
    });
  });

  it("gives the same request for the same messages, from another compactor too", () => {
    const first = c.shapeRequest(messages, { contextWindow: window });
    const again = compactorFor(adapter).shapeRequest(structuredClone(messages), { contextWindow: window });
    expect(JSON.stringify(again.messages)).toBe(JSON.stringify(first.messages));
  });

  it("keeps what it pruned pruned as the conversation grows, and moves on only in steps (the prompt cache stays warm)", () => {
    let previous: number[] = [];
    let changes = 0;
    let saved = 0;
    const stride = Math.max(1, Math.floor(messages.length / 80)); // about 80 prefixes keep the test fast
    for (let end = 1; end <= messages.length; end += stride) {
      const prefix = messages.slice(0, end);
      const sent = c.shapeRequest(prefix, { contextWindow: window }).messages;
      const pruned = prunedIn(c, sent).filter((i) => !already.includes(i));
      if (pruned.length === 0) continue; // below the thresholds for this prefix
      expect(pruned).toEqual(expect.arrayContaining(previous));
      if (pruned.length !== previous.length) {
        changes += 1;
        saved = pruned.reduce((sum, i) => sum + c.tokens.count(prefix[i]) - c.tokens.count(sent[i]), 0);
      }
      previous = pruned;
    }
    // Every change passes one more multiple of pruneMinSavings.
    expect(changes).toBeLessThanOrEqual(Math.floor(saved / (OPTIONS.pruneMinSavings as number)));
  });

  it("sends the messages as they are below pruneThreshold", () => {
    const shaped = c.shapeRequest(messages, { contextWindow: c.tokens.total(messages) * 4 });
    expect(shaped.messages).toBe(messages);
  });
});

describe("requestPruning and ensureRequestPruning", () => {
  const messages = loadPiMessages(PI_FIXTURES[0] as string);

  it("adds layered's send-time pruning, and only that, to a compactor without layered, once", () => {
    const c = new Compactor<any>({ summarizer: createExtractiveSummarizer(), adapter: createPiAdapter(), tokenCounter: createEstimateCounter() });
    ensureRequestPruning(c);
    ensureRequestPruning(c);
    expect(c.plugins.map((p) => p.name)).toEqual([REQUEST_PRUNING_PLUGIN]);
    expect(c.hooks.beforeCompact.taps).toEqual([]);
    const window = Math.ceil(c.tokens.total(messages) * 1.1);
    expect(prunedIn(c, c.shapeRequest(messages, { contextWindow: window }).messages).length).toBeGreaterThan(0);
  });

  it("leaves a compactor with layered as it is", () => {
    const c = compactorFor(createPiAdapter());
    ensureRequestPruning(c);
    expect(c.plugins.map((p) => p.name)).toEqual(["layered"]);
  });

  it("validates its options like layered", () => {
    expect(() => requestPruning({ pruneThreshold: 2 })).toThrow(/layered/);
  });
});
