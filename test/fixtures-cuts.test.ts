/**
 * Cut points, token counts and whole compactions on the real transcripts, through the pi
 * adapter (pi sessions), the Anthropic adapter (Claude Code transcripts) and the OpenAI Chat
 * adapter (Codex rollouts).
 */
import {
  checkCut,
  Compactor,
  type CompactionPlugin,
  createAnthropicAdapter,
  createEstimateCounter,
  createOpenAIAdapter,
  createPiAdapter,
  FactsCache,
  findCutPoint,
  type MessageAdapter,
  type MessageView,
  MessageTokenCounter,
  summarizeCut,
} from "@compaction/core";
import { describe, expect, it } from "vitest";
import { CLAUDE_FIXTURES, CODEX_FIXTURES, loadClaudeMessages, loadCodexMessages, loadPiMessages, PI_FIXTURES } from "@compaction/fixtures";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";

interface Fixture {
  readonly file: string;
  readonly adapter: MessageAdapter<unknown>;
  readonly messages: readonly unknown[];
}


const fixtures: Fixture[] = [
  ...PI_FIXTURES.map((file) => ({ file, adapter: createPiAdapter() as MessageAdapter<unknown>, messages: loadPiMessages(file) })),
  ...CLAUDE_FIXTURES.map((file) => ({
    file,
    adapter: createAnthropicAdapter() as MessageAdapter<unknown>,
    messages: loadClaudeMessages(file),
  })),
  ...CODEX_FIXTURES.map((file) => ({ file, adapter: createOpenAIAdapter() as MessageAdapter<unknown>, messages: loadCodexMessages(file) })),
];

function viewOf(fixture: Fixture): MessageView {
  const facts = new FactsCache(fixture.adapter);
  const tokens = new MessageTokenCounter(facts, createEstimateCounter());
  return { facts: fixture.messages.map((m) => facts.of(m)), tokens: fixture.messages.map((m) => tokens.count(m)) };
}

const keepRecent = (keepRecentTokens: number): CompactionPlugin => ({
  name: "keep-recent",
  apply(c) {
    c.hooks.selectCut.tap("keep-recent", (run) => findCutPoint(run.view, { keepRecentTokens }));
    c.hooks.summarize.tapPromise("keep-recent", async (draft, run) => ({ ...draft, text: await summarizeCut(run, { maxTokens: 3000 }) }));
  },
});

describe.each(fixtures)("real transcript $file", (fixture) => {
  it("gets cut points that never need repair and never orphan a tool result", () => {
    const v = viewOf(fixture);
    const total = v.tokens.reduce((a, b) => a + b, 0);
    for (const share of [0.05, 0.2, 0.5, 0.8]) {
      const proposed = findCutPoint(v, { keepRecentTokens: Math.floor(total * share) });
      const cut = checkCut(v, proposed, { plugin: "test", budget: Number.POSITIVE_INFINITY });
      expect(cut.repairs).toEqual([]);
      const keptIds = new Set<string>();
      for (let i = cut.firstKeptIndex; i < v.facts.length; i++) for (const c of v.facts[i]?.toolCalls ?? []) keptIds.add(c.id);
      for (let i = cut.firstKeptIndex; i < v.facts.length; i++) {
        for (const id of v.facts[i]?.toolResultIds ?? []) expect(keptIds.has(id)).toBe(true);
      }
    }
  });

  // entire-openclaw is one prompt and 210 messages of an autonomous run, codex-pomodoro-example's
  // newest turn is 49% of it: their newest turn is split, the request kept ahead of the summary.
  it("compacts to under half its size with a summary and the newest messages kept verbatim", async () => {
    const c = new Compactor({ summarizer: createExtractiveSummarizer(), adapter: fixture.adapter, tokenCounter: createEstimateCounter(), plugins: [] });
    const total = c.tokens.total(fixture.messages);
    c.use(keepRecent(Math.floor(total * 0.2)));
    const result = await c.compact({ messages: fixture.messages, contextWindow: total });
    expect(result.status).toBe("compacted");
    expect(result.countedTokensAfter).toBeLessThan(total / 2);
    const cut = result.cut!;
    const history = cut.compactedIndices.some((i) => cut.turnStartIndex < 0 || i < cut.turnStartIndex);
    // A history summary; for a session that is one turn, the turn's summary, starting with its request.
    expect(result.summary).toMatch(history ? /## Goal/ : /^## Original Request\n\S/);
    const kept = result.messages.slice(-(fixture.messages.length - (result.cut?.firstKeptIndex ?? 0)));
    expect(kept).toEqual(fixture.messages.slice(result.cut?.firstKeptIndex));
    expect(result.event?.messagesCompacted).toBe(result.cut?.compactedIndices.length);
  });
});
