import {
  type CompactionResult,
  Compactor,
  type MessageAdapter,
  type MessageFacts,
  createAnthropicAdapter,
  createPiAdapter,
  createTiktokenCounter,
  isCutPoint,
  OVERFLOW_COMPACTED_SHARE,
  readSummary,
} from "@compaction/core";
import { CLAUDE_FIXTURES, loadClaudeMessages, loadPiMessages } from "@compaction/fixtures";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { safeguard } from "./index.js";
import { orphanedResults } from "./test-support/conversation.js";

const KEEP = 20_000;
const SUMMARY_MAX = 4_000;
const WRITE_TOOLS = new Set(["edit", "write", "multiedit"]);

interface Fixture {
  readonly name: string;
  readonly load: () => unknown[];
  readonly adapter: () => MessageAdapter<unknown>;
}

const FIXTURES: readonly Fixture[] = [
  { name: "pi-large-session.jsonl", load: () => loadPiMessages("pi-large-session.jsonl"), adapter: () => createPiAdapter() },
  { name: CLAUDE_FIXTURES[0]!, load: () => loadClaudeMessages(CLAUDE_FIXTURES[0]!), adapter: () => createAnthropicAdapter() },
];

/** Files written by successful edit/write calls, read straight from the facts (independently of the plugin). */
function modifiedFiles(facts: readonly MessageFacts[]): Set<string> {
  const failed = new Set<string>();
  for (const f of facts) if (f.isError) for (const id of f.toolResultIds) failed.add(id);
  const files = new Set<string>();
  for (const f of facts) {
    for (const call of f.toolCalls) {
      if (!WRITE_TOOLS.has(call.name.toLowerCase()) || failed.has(call.id)) continue;
      const args = call.arguments as { path?: unknown; file_path?: unknown };
      const path = args.path ?? args.file_path;
      if (typeof path === "string") files.add(path.trim());
    }
  }
  return files;
}

/** The index of the user message nearest the middle: the conversation is fed in two halves. */
function middleTurnStart(facts: readonly MessageFacts[]): number {
  const middle = Math.floor(facts.length / 2);
  for (let i = middle; i < facts.length; i++) if (facts[i]?.kind === "user") return i;
  throw new Error("expected a user message in the second half");
}

describe.each(FIXTURES)("safeguard on the real transcript $name", (fixture) => {
  const counter = createTiktokenCounter();
  let compactor: Compactor<unknown>;
  let messages: unknown[];
  let half: number;
  let first: CompactionResult<unknown>;
  let second: CompactionResult<unknown>;
  const factsOf = (list: readonly unknown[]) => list.map((m) => compactor.facts.of(m));

  beforeAll(async () => {
    compactor = new Compactor({
      summarizer: createExtractiveSummarizer(),
      adapter: fixture.adapter(),
      tokenCounter: counter,
      plugins: [safeguard()],
      contextWindow: 200_000,
      summaryMaxTokens: SUMMARY_MAX,
    });
    messages = fixture.load();
    half = middleTurnStart(factsOf(messages));
    first = await compactor.compact({ messages: messages.slice(0, half) });
    second = await compactor.compact({ messages: [...first.messages, ...messages.slice(half)] });
  });
  afterAll(() => counter.dispose());

  /** Invariants every compaction of `input` must keep. */
  function expectInvariants(input: readonly unknown[], result: CompactionResult<unknown>) {
    expect(result.status).toBe("compacted");
    const cut = result.cut!;
    const facts = factsOf(input);
    // The core never cuts past the newest user message (issue 10).
    const lastUser = facts.findLastIndex((f) => f.kind === "user" && !f.pinned);
    const newestValid = Math.min(facts.findLastIndex((f) => isCutPoint(f)), lastUser < 0 ? Number.POSITIVE_INFINITY : lastUser);
    if (compactor.tokens.total(input.slice(newestValid)) <= KEEP) {
      expect(compactor.tokens.total(input.slice(cut.firstKeptIndex))).toBeLessThanOrEqual(KEEP);
    }
    expect(orphanedResults(factsOf(result.messages))).toEqual([]);
    expect(result.messages.slice(-(input.length - cut.firstKeptIndex))).toEqual(input.slice(cut.firstKeptIndex));
    const limit = SUMMARY_MAX + (cut.isSplitTurn ? SUMMARY_MAX / 2 + 20 : 0);
    expect(counter.count(result.summary!)).toBeLessThanOrEqual(limit);
    expect(result.tokensAfter).toBeLessThan(result.tokensBefore);
  }

  it("keeps the newest messages within keepRecentTokens as the provider counts them (the calibrated ratio)", () => {
    for (const [input, result] of [
      [messages.slice(0, half), first],
      [[...first.messages, ...messages.slice(half)], second],
    ] as const) {
      const ratio = compactor.tokens.budgetRatio(input);
      expect(ratio).toBeGreaterThan(1.1);
      const keep = Math.floor(KEEP / ratio);
      const kept = compactor.tokens.total(input.slice(result.cut!.firstKeptIndex));
      // The newest turn is kept whole from its user message even when it needs more.
      const facts = factsOf(input);
      const lastUser = facts.findLastIndex((f) => f.kind === "user" && !f.pinned);
      if (compactor.tokens.total(input.slice(lastUser)) > keep) {
        expect(result.cut!.firstKeptIndex).toBe(lastUser);
        continue;
      }
      expect(kept).toBeLessThanOrEqual(keep);
      // Within the turn-boundary loss safeguard allows (maxTurnBoundaryLoss 0.5).
      expect(kept).toBeGreaterThan(keep / 2);
    }
  });

  it("compacts the first half within keepRecentTokens, with no orphaned tool result", () => {
    expectInvariants(messages.slice(0, half), first);
  });

  it("compacts the first result plus the rest by updating the first summary", () => {
    const input = [...first.messages, ...messages.slice(half)];
    expectInvariants(input, second);
    const previous = second.cut!.compactedIndices.map((i) => compactor.facts.of(input[i])).filter((f) => f.kind === "summary");
    expect(previous.map((f) => f.text)).toEqual([first.summary]);
    expect(second.messages.filter((m) => compactor.facts.of(m).kind === "summary")).toHaveLength(1);
  });

  it("lists the files modified early on after the first and the second compaction", () => {
    const early = modifiedFiles(first.cut!.compactedIndices.map((i) => compactor.facts.of(messages[i])));
    expect(early.size).toBeGreaterThan(0);
    expect(readSummary(first.summary!).slots.filesModified).toEqual(expect.arrayContaining([...early]));
    expect(readSummary(second.summary!).slots.filesModified).toEqual(expect.arrayContaining([...early]));
  });

  it("keeps the opening request as the goal through both compactions", () => {
    const goals = readSummary(first.summary!).slots.goal;
    expect(goals.length).toBeGreaterThan(0);
    expect(readSummary(second.summary!).slots.goal).toEqual(expect.arrayContaining(goals.filter((g) => !g.startsWith("Pending: "))));
  });
});

// A session opened at a smaller window (a switch to a smaller model, an overflow) is no regular
// compaction: safeguard keeps the newest messages up to the run's target, more than
// keepRecentTokens, as truncation to half the window would (issue 31's continuity measure:
// keepRecentTokens alone kept less of what the agent used next than truncation did).
describe("safeguard on pi-large-session.jsonl (177,657 tokens) at a window it overflows", () => {
  const counter = createTiktokenCounter();
  afterAll(() => counter.dispose());

  it.each([64_000, 128_000])("keeps more than keepRecentTokens, within the run's target, at %i", async (contextWindow) => {
    const compactor = new Compactor({ summarizer: createExtractiveSummarizer(), adapter: createPiAdapter(), tokenCounter: counter, plugins: [safeguard()] });
    const messages = loadPiMessages("pi-large-session.jsonl");
    const result = await compactor.compact({ messages, contextWindow });
    expect(result.status).toBe("compacted");
    expect(result.tokensBefore).toBeGreaterThan(contextWindow);
    const ratio = compactor.tokens.budgetRatio(messages);
    const kept = compactor.tokens.total(messages.slice(result.cut!.firstKeptIndex));
    expect(kept).toBeGreaterThan(Math.floor(KEEP / ratio));
    expect(result.tokensAfter).toBeLessThanOrEqual(Math.floor(OVERFLOW_COMPACTED_SHARE * compactor.autoCompactTokens(contextWindow)));
    expect(result.warnings.filter((w) => w.includes("keepRecentTokens"))).toEqual([]);
    expect(orphanedResults(result.messages.map((m) => compactor.facts.of(m)))).toEqual([]);
  });
});
