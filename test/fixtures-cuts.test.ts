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

/**
 * Known bug, found by the entire-* fixtures (issue 40): the newest turn is never split. The core's
 * rule 1 (core/src/compactor/fit-budget.ts: a cut past the newest user message is pulled back to
 * it) leaves nothing to summarise in a session that is one long turn, or whose newest turn is most
 * of it: claude-code-entire-openclaw is one prompt ("Implement the following plan") followed by 210
 * messages of an autonomous run, and no preset can summarise any of it (only shrink it); Claude
 * Code itself compacted that session mid-turn, at 167,038 tokens. The "under half its size" case
 * needs the newest turn split on it, and on codex-pomodoro-example, whose newest turn (the third
 * prompt and its 18 messages of patches) is 49% of the rollout: marked `it.fails` on both until it
 * is fixed (they then fail, as a reminder).
 */
const NEWEST_TURN_NEVER_SPLIT: ReadonlySet<string> = new Set(["claude-code-entire-openclaw-ca8cc13b.jsonl", "codex-pomodoro-example.jsonl"]);

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

  // entire-openclaw: "compacted" by shrinking alone, no summary; codex-pomodoro-example: 4,706 of
  // 8,630 tokens, the newest turn kept whole beside the summary. See the bug above.
  (NEWEST_TURN_NEVER_SPLIT.has(fixture.file) ? it.fails : it)("compacts to under half its size with a summary and the newest messages kept verbatim", async () => {
    const c = new Compactor({ summarizer: createExtractiveSummarizer(), adapter: fixture.adapter, tokenCounter: createEstimateCounter(), plugins: [] });
    const total = c.tokens.total(fixture.messages);
    c.use(keepRecent(Math.floor(total * 0.2)));
    const result = await c.compact({ messages: fixture.messages, contextWindow: total });
    expect(result.status).toBe("compacted");
    expect(result.countedTokensAfter).toBeLessThan(total / 2);
    expect(result.summary).toContain("## Goal");
    const kept = result.messages.slice(-(fixture.messages.length - (result.cut?.firstKeptIndex ?? 0)));
    expect(kept).toEqual(fixture.messages.slice(result.cut?.firstKeptIndex));
    expect(result.event?.messagesCompacted).toBe(result.cut?.compactedIndices.length);
  });
});
