/** The layers on real transcripts recorded by pi-coding-agent and Claude Code. */
import {
  type CompactionResult,
  Compactor,
  createAnthropicAdapter,
  createEstimateCounter,
  createPiAdapter,
  lastUserIndex,
  type MessageAdapter,
  OVERFLOW_COMPACTED_SHARE,
} from "@compaction/core";
import { loadClaudeMessages, loadPiMessages } from "@compaction/fixtures";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import { describe, expect, it } from "vitest";
import { FULL_COMPACTION_WARNING, layered } from "./layered.js";
import { isPrunedMarker } from "./marker.js";
import type { LayeredOptions } from "./options.js";
import { pruneToolOutputs } from "./prune.js";

function compactorFor(adapter: MessageAdapter<any>, options: Partial<LayeredOptions> = {}) {
  return new Compactor<any>({ summarizer: createExtractiveSummarizer(), adapter, tokenCounter: createEstimateCounter(), plugins: [layered(options)] });
}

/**
 * Tokens pruning would save with the given protection, and the context size after it as the
 * run measures it: our count of what is left, scaled by the provider's usage over our count.
 */
function afterPruning(c: Compactor<any>, messages: readonly unknown[], protectTokens = 40000) {
  const { tokensSaved } = pruneToolOutputs(messages, {
    adapter: c.adapter,
    factsOf: (m) => c.facts.of(m),
    tokensOf: (m) => c.tokens.count(m),
    protectTokens,
  });
  const counted = c.tokens.total(messages);
  const ratio = Math.max(1, c.tokens.contextTokens(messages).tokens / counted);
  return { tokensSaved, tokens: Math.round((counted - tokensSaved) * ratio) };
}

function expectNoOrphanedToolResult(c: Compactor<any>, result: CompactionResult<any>): void {
  const issued = new Set<string>();
  for (const m of result.messages) {
    const f = c.facts.of(m);
    for (const id of f.toolResultIds) expect(issued.has(id), `tool result ${id} has its call`).toBe(true);
    for (const call of f.toolCalls) issued.add(call.id);
  }
}

describe("layer 1 on pi-before-compaction.jsonl (the context pi sends after its last compaction)", () => {
  const messages = loadPiMessages("pi-before-compaction.jsonl", { context: true });
  const c = compactorFor(createPiAdapter());
  const contextWindow = 200000; // the provider's figure (about 181k tokens) is 90% of it
  const resultPromise = c.compact({ messages, contextWindow, trigger: "auto" });

  it("prunes old tool outputs and stops there: the context falls under summarizeThreshold", async () => {
    const result = await resultPromise;
    expect(result.tokensBefore / contextWindow).toBeGreaterThan(0.8);
    expect(result.status).toBe("compacted");
    expect(result.event?.layer).toBe("prune");
    expect(result.summary).toBeNull();
    expect(c.tokens.total(messages) - result.tokensAfter).toBeGreaterThanOrEqual(20000);
  });

  it("replaces each pruned output with a marker naming the tool that produced it", async () => {
    const result = await resultPromise;
    const calls = new Map<string, string>();
    for (const m of messages) for (const call of c.facts.of(m).toolCalls) calls.set(call.id, call.name);
    let pruned = 0;
    result.messages.forEach((m, i) => {
      if (m === messages[i]) return;
      pruned++;
      const f = c.facts.of(m);
      expect(isPrunedMarker(f.text)).toBe(true);
      expect(f.text.startsWith(`[pruned tool output: ${calls.get(f.toolResultIds[0] as string)}`)).toBe(true);
      expect(f.isError).toBe(c.facts.of(messages[i]).isError);
    });
    expect(pruned).toBeGreaterThan(10);
  });

  it("keeps the newest 40,000 tokens and every bashExecution message as they were", async () => {
    const result = await resultPromise;
    let newer = 0;
    for (let i = messages.length - 1; i >= 0 && newer < 40000; i--) {
      expect(result.messages[i]).toBe(messages[i]);
      newer += c.tokens.count(messages[i]);
    }
    messages.forEach((m, i) => {
      if (m.role === "bashExecution") expect(result.messages[i]).toBe(m);
    });
    expectNoOrphanedToolResult(c, result);
  });
});

describe("layers 2 and 3 after pruning on pi-before-compaction.jsonl (the whole session: its count exceeds the usage figure)", () => {
  // The session's messages count to about 375k tokens, but the provider's newest usage figure
  // (the context after pi's compactions) is about 181k: the usage figure covers less than our count.
  const messages = loadPiMessages("pi-before-compaction.jsonl");

  function expectCountExceedsUsage(c: Compactor<any>): void {
    expect(c.tokens.total(messages)).toBeGreaterThan(c.tokens.contextTokens(messages).tokens);
  }

  it.each([
    ["summarize", 200000],
    ["full", 185000],
  ] as const)("runs layer %s, not only pruning, in a window of %i tokens, and ends within the budget", async (layer, contextWindow) => {
    const c = compactorFor(createPiAdapter());
    expectCountExceedsUsage(c);
    // our count of what pruning leaves: the usage figure less the savings would be below 0
    const { tokensSaved } = afterPruning(c, messages);
    expect(c.tokens.contextTokens(messages).tokens - tokensSaved).toBeLessThan(0);
    const share = (c.tokens.total(messages) - tokensSaved) / contextWindow;
    expect(share).toBeGreaterThan(layer === "full" ? 0.95 : 0.88);
    const result = await c.compact({ messages, contextWindow, trigger: "auto" });
    expect(result.status).toBe("compacted");
    expect(result.event?.layer).toBe(layer);
    expect(result.summary).toContain("## Goal");
    expect(result.tokensAfter).toBeLessThanOrEqual(contextWindow);
    expect(result.warnings.filter((w) => w.startsWith("[core]"))).toEqual([]);
    expectNoOrphanedToolResult(c, result);
  });
});

describe("layers 2 and 3 on pi-large-session.jsonl", () => {
  const messages = loadPiMessages("pi-large-session.jsonl");

  // The newest turns of the session without its usage figures (they describe the whole session),
  // about `tokens` of them: a context that is within the window it is compacted at.
  function newestTurns(c: Compactor<any>, tokens: number): unknown[] {
    const bare = loadPiMessages("pi-large-session.jsonl", { usage: false });
    let from = bare.length;
    while (from > 1 && c.tokens.total(bare.slice(from - 1)) < tokens) from--;
    while (from < bare.length && c.facts.of(bare[from]).kind !== "user") from++;
    return bare.slice(from);
  }

  it("layer 2: summarises the older messages and keeps the newest 25,000 tokens", async () => {
    const c = compactorFor(createPiAdapter(), { pruneMinSavings: 10_000_000 });
    const within = newestTurns(c, 90_000);
    const contextWindow = Math.round(c.tokens.total(within) / 0.9);
    const result = await c.compact({ messages: within, contextWindow, trigger: "auto" });
    expect(result.status).toBe("compacted");
    expect(result.event?.layer).toBe("summarize");
    expect(result.summary).toContain("## Goal");
    expect(result.cut?.keptTokens).toBeLessThanOrEqual(25000);
    expect(result.cut?.keptTokens).toBeGreaterThan(20000);
    expect(result.messages.slice(1)).toEqual(within.slice(result.cut?.firstKeptIndex));
    expect(result.tokensAfter).toBeLessThan(contextWindow);
    expectNoOrphanedToolResult(c, result);
  });

  it("layer 3: keeps the newest 25,000 tokens with the last turn, summarises the rest and warns of the full compaction", async () => {
    const c = compactorFor(createPiAdapter(), { pruneMinSavings: 10_000_000 });
    const within = newestTurns(c, 90_000);
    const contextWindow = Math.round(c.tokens.total(within) / 0.97);
    const result = await c.compact({ messages: within, contextWindow, trigger: "auto" });
    expect(result.event?.layer).toBe("full");
    const lastUser = lastUserIndex(within.map((m) => c.facts.of(m)));
    const first = result.cut?.firstKeptIndex ?? -1;
    expect(first).toBeLessThanOrEqual(lastUser);
    expect(result.cut?.keptTokens).toBeLessThanOrEqual(Math.max(25000, c.tokens.total(within.slice(lastUser))));
    expect(result.cut?.keptTokens).toBeGreaterThan(20000);
    expect(result.messages.slice(1)).toEqual(within.slice(first));
    expect(result.event?.warnings).toContain(`[layered] ${FULL_COMPACTION_WARNING}`);
    expectNoOrphanedToolResult(c, result);
  });

  // A context larger than the window before pruning (a smaller model, an overflow) is no regular
  // compaction: layers 2 and 3 keep the newest turns up to the run's target (0.75 of the
  // auto-compaction trigger), more than summarizeProtectTokens, as truncation would keep.
  it.each([
    ["layer 2", 0.9, "summarize"],
    ["layer 3", 0.97, "full"],
  ])("%s on a context larger than the window: prunes, then keeps the newest turns up to the run's target", async (_name, share, layer) => {
    const c = compactorFor(createPiAdapter());
    const contextWindow = Math.round(afterPruning(c, messages).tokens / share);
    const result = await c.compact({ messages, contextWindow, trigger: "auto" });
    expect(result.tokensBefore).toBeGreaterThan(contextWindow);
    expect(result.event?.layer).toBe(layer);
    expect(result.cut?.keptTokens).toBeGreaterThan(25000);
    expect(result.tokensAfter).toBeLessThanOrEqual(Math.floor(OVERFLOW_COMPACTED_SHARE * c.autoCompactTokens(contextWindow)));
    // the kept messages are the newest ones, those older than pruneProtectTokens with their tool outputs pruned
    const kept = result.messages.slice(1);
    const original = messages.slice(messages.length - kept.length);
    kept.forEach((m, i) => {
      if (m !== original[i]) expect(isPrunedMarker(c.facts.of(m).text)).toBe(true);
    });
    expect(kept.some((m, i) => m !== original[i])).toBe(true);
    expectNoOrphanedToolResult(c, result);
  });

  // Issue 31: at a 64k window the 137k-token history used to become the summary and one user
  // message (2,358 tokens). Layer 3 keeps the newest turns that fit the budget beside its summary
  // ("summarise what it must and still keep the newest turns that fit"), up to
  // summarizeProtectTokens or what the run's target leaves beside the summary, the larger (here
  // summarizeProtectTokens): the target caps layer 2 (which runs first as a context grows, so the
  // loop's next compaction is still many turns away), not this recovery from far over the window.
  it("layer 3 far over the window (64k) keeps the newest turns that fit beside its summary, more than the run's target", async () => {
    const c = compactorFor(createPiAdapter());
    const target = Math.floor(c.autoCompactTokens(64_000) / 2);
    const result = await c.compact({ messages, contextWindow: 64_000, trigger: "auto" });
    expect(result.event?.layer).toBe("full");
    // The newest turns up to summarizeProtectTokens (25,000 of ours), not one message.
    expect(result.cut?.keptTokens).toBeLessThanOrEqual(25000);
    expect(result.cut?.keptTokens).toBeGreaterThan(20000);
    // More than the run's target would have left (25,600 of the provider's tokens), within what a
    // request can carry (the window less the default 16,384 reserve).
    expect(result.tokensAfter).toBeGreaterThan(target);
    expect(result.tokensAfter).toBeLessThanOrEqual(64_000 - 16_384);
    expect(result.warnings).toEqual([`[layered] ${FULL_COMPACTION_WARNING}`]);
    expectNoOrphanedToolResult(c, result);
  });

  it("keeps a pinned early message through a full compaction", async () => {
    const pinned = messages.map((m, i) => (i === 3 ? { ...m, pinned: true } : m));
    const c = compactorFor(createPiAdapter());
    const contextWindow = Math.round(afterPruning(c, pinned).tokens / 0.97);
    const result = await c.compact({ messages: pinned, contextWindow, trigger: "auto" });
    expect(result.event?.layer).toBe("full");
    expect(result.messages).toContain(pinned[3]);
  });
});

describe("layers on a Claude Code transcript (claude-code-log-37f83ec9.jsonl, Anthropic format)", () => {
  const messages = loadClaudeMessages("claude-code-log-37f83ec9.jsonl");
  // its tool outputs hold about 43,000 tokens: lower the amounts to the transcript's size
  const options = { pruneMinToolTokens: 30000, pruneProtectTokens: 15000, pruneMinSavings: 5000, summarizeProtectTokens: 10000 };

  it("layer 1 prunes old tool results and keeps every tool_result block answering its call", async () => {
    const c = compactorFor(createAnthropicAdapter(), options);
    const { tokens } = afterPruning(c, messages, options.pruneProtectTokens);
    const result = await c.compact({ messages, contextWindow: Math.round(tokens / 0.7), trigger: "auto" });
    expect(result.event?.layer).toBe("prune");
    const changed = result.messages.filter((m, i) => m !== messages[i]);
    expect(changed.length).toBeGreaterThan(0);
    for (const m of changed) expect(isPrunedMarker(c.facts.of(m).text)).toBe(true);
    expectNoOrphanedToolResult(c, result);
  });

  it("layer 2 summarises after pruning when the context is still above summarizeThreshold", async () => {
    const c = compactorFor(createAnthropicAdapter(), options);
    const { tokens } = afterPruning(c, messages, options.pruneProtectTokens);
    const result = await c.compact({ messages, contextWindow: Math.round(tokens / 0.9), trigger: "auto" });
    expect(result.event?.layer).toBe("summarize");
    expect(result.summary).toContain("## Goal");
    expectNoOrphanedToolResult(c, result);
  });
});
