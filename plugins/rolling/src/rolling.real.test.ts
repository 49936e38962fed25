/**
 * Rolling on real transcripts (see ../shared/fixtures/real/PROVENANCE.md): a pi-coding-agent
 * session and a Claude Code transcript, each compacted into a window half its size.
 */
import {
  Compactor,
  createAnthropicAdapter,
  createEstimateCounter,
  createPiAdapter,
  lastUserIndex,
  type MessageAdapter,
} from "@compaction/core";
import { loadClaudeMessages, loadPiMessages } from "@compaction/fixtures";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import { describe, expect, it } from "vitest";
import { namesInNote } from "./eviction-note.js";
import { rolling } from "./rolling.js";
import { invariantProblems } from "./test-support/conversations.js";
import { fakeRecall } from "./test-support/setup.js";

const cases = [
  { name: "pi-large-session.jsonl", load: () => loadPiMessages("pi-large-session.jsonl"), adapter: createPiAdapter() as MessageAdapter<unknown> },
  {
    name: "claude-code-log-37f83ec9.jsonl",
    load: () => loadClaudeMessages("claude-code-log-37f83ec9.jsonl"),
    adapter: createAnthropicAdapter() as MessageAdapter<unknown>,
  },
];

describe.each(cases)("rolling on the real transcript $name", ({ load, adapter }) => {
  async function compactHalf() {
    const messages: unknown[] = load();
    const compactor = new Compactor<unknown>({ summarizer: createExtractiveSummarizer(), adapter, tokenCounter: createEstimateCounter(), plugins: [rolling(), fakeRecall()] });
    const counted = compactor.tokens.total(messages);
    const contextWindow = Math.floor(counted / 2);
    const result = await compactor.compact({ messages, contextWindow });
    return { messages, result, contextWindow, compactor };
  }

  it("evicts the oldest messages into a window half the session's size, meeting the target", async () => {
    const { messages, result, contextWindow } = await compactHalf();
    expect(result.status).toBe("compacted");
    expect(result.warnings).toEqual([]);
    expect(result.tokensAfter).toBeLessThanOrEqual(Math.floor(contextWindow * 0.8));
    expect(result.messages.length).toBeLessThan(messages.length);
  });

  it("keeps every tool call with its results, every pinned message, and the newest ten", async () => {
    const { messages, result } = await compactHalf();
    expect(invariantProblems(adapter, messages, result.messages)).toEqual([]);
    for (const m of messages.slice(-10)) expect(result.messages).toContain(m);
  });

  it("keeps the last user message", async () => {
    const { messages, result, compactor } = await compactHalf();
    const last = lastUserIndex(messages.map((m) => compactor.facts.of(m)));
    expect(last).toBeGreaterThan(0);
    expect(result.messages).toContain(messages[last]);
  });

  it("without recall, keeps the newest keepRecentTokens as the provider counts them (the safeguard fallback)", async () => {
    const messages: unknown[] = load();
    const compactor = new Compactor<unknown>({ summarizer: createExtractiveSummarizer(), adapter, tokenCounter: createEstimateCounter(), plugins: [rolling({ recall: false, minKeepMessages: 0 })] });
    const result = await compactor.compact({ messages, contextWindow: 200_000 });
    expect(result.status).toBe("compacted");
    const ratio = compactor.tokens.budgetRatio(messages);
    expect(ratio).toBeGreaterThan(1.1);
    const keep = Math.floor(20_000 / ratio);
    const kept = compactor.tokens.total(messages.slice(result.cut!.firstKeptIndex));
    const lastUser = lastUserIndex(messages.map((m) => compactor.facts.of(m)));
    if (compactor.tokens.total(messages.slice(lastUser)) > keep) expect(result.cut!.firstKeptIndex).toBe(lastUser);
    else expect(kept).toBeLessThanOrEqual(keep);
    expect(result.cut!.reason).toMatch(/^no recall configured: summarise all but the newest 20000 tokens as the provider counts them, as safeguard does$/);
  });

  it("leaves one eviction note with the real count and range", async () => {
    const { messages, result, compactor } = await compactHalf();
    const evicted = messages.filter((m) => !result.messages.includes(m));
    const notes = result.messages.filter((m) => !messages.includes(m));
    expect(notes).toHaveLength(1);
    expect(result.summary).toMatch(
      new RegExp(`^\\[Context rolled: ${evicted.length} messages evicted \\(${compactor.tokens.total(evicted)} tokens\\)\\. Full transcript available via memory_search\\. Evicted range: \\S+ to \\S+\\. Files: [^\\]]+\\]$`),
    );
    // The files it names are files the evicted messages' tool calls read or modified.
    const touched = evicted.flatMap((m) => compactor.adapter.readFacts(m).toolCalls.map((call) => JSON.stringify(call.arguments))).join("\n");
    const named = namesInNote(result.summary ?? "").files;
    expect(named.length).toBeGreaterThan(0);
    for (const file of named) expect(touched).toContain(JSON.stringify(file));
  });
});
