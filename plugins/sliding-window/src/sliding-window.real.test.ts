import {
  type AnthropicMessage,
  Compactor,
  createAnthropicAdapter,
  createPiAdapter,
  createTiktokenCounter,
  defaultReserveTokens,
  lastUserIndex,
  OVERFLOW_COMPACTED_SHARE,
  type PiMessage,
  usableWindow,
} from "@compaction/core";
import { CLAUDE_FIXTURES, loadClaudeMessages, loadPiMessages } from "@compaction/fixtures";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import { afterAll, describe, expect, it } from "vitest";
import { slidingWindow } from "./sliding-window.js";

const WINDOW = 64_000;
/** keepRatio's 40% of the usable window: the window's own reserve (8,000 at 64k) takes over a tenth of it. */
const SHARE = Math.floor(usableWindow(WINDOW, defaultReserveTokens(WINDOW)) * 0.4);

describe("sliding-window on the real pi-large-session with a 64k window", () => {
  const messages = loadPiMessages("pi-large-session.jsonl");
  const counter = createTiktokenCounter();
  const compactor = new Compactor<PiMessage>({ summarizer: createExtractiveSummarizer(), adapter: createPiAdapter(), tokenCounter: counter, plugins: [slidingWindow()] });
  afterAll(() => counter.dispose());
  const factsOf = (m: PiMessage) => compactor.facts.of(m);
  const first = compactor.compact({ messages, contextWindow: WINDOW, trigger: "auto" });

  it("compacts the session into a summary and the newest messages, within the window", async () => {
    const result = await first;
    expect(result.status).toBe("compacted");
    expect(result.tokensBefore).toBeGreaterThan(WINDOW);
    expect(result.tokensAfter).toBeLessThanOrEqual(WINDOW);
    expect(result.messages.length).toBeLessThan(messages.length);
  });

  it("keeps the newest messages verbatim up to the run's target, more than 40% of the window: the session is larger than the window", async () => {
    const result = await first;
    const kept = result.messages.slice(1);
    expect(kept).toEqual(messages.slice(result.cut?.firstKeptIndex));
    expect(result.cut?.reason).toMatch(/within \d+ tokens \(the run's target: the context was larger than the window\)/);
    // Messages as Claude counts them: the calibrated ratio (about 1.25 here), as the run's messageRatio.
    const ratio = compactor.tokens.budgetRatio(messages);
    expect(ratio).toBeGreaterThan(1.2);
    expect(compactor.tokens.total(kept)).toBeGreaterThan(Math.floor(SHARE / ratio));
    // within the target a compaction of a context larger than the window leaves
    const target = Math.floor(OVERFLOW_COMPACTED_SHARE * compactor.autoCompactTokens(WINDOW));
    expect(result.tokensAfter).toBeLessThanOrEqual(target);
  });

  it("keeps the newest messages verbatim within 40% of the window, as the provider counts them, when the session is within the window", async () => {
    // The newest turns within about 56k tokens, without the usage figures (they describe the whole
    // session): over the 80% threshold, within the window.
    const bare = loadPiMessages("pi-large-session.jsonl", { usage: false });
    let from = bare.length;
    while (from > 1 && compactor.tokens.total(bare.slice(from - 1)) < 56_000) from--;
    while (from < bare.length && factsOf(bare[from] as PiMessage).kind !== "user") from++;
    const within = bare.slice(from);
    const result = await compactor.compact({ messages: within, contextWindow: WINDOW, trigger: "auto" });
    expect(result.status).toBe("compacted");
    expect(result.tokensBefore).toBeLessThanOrEqual(WINDOW);
    const kept = result.messages.slice(1);
    expect(kept).toEqual(within.slice(result.cut?.firstKeptIndex));
    const share = Math.floor(SHARE / compactor.tokens.budgetRatio(within));
    expect(compactor.tokens.total(kept)).toBeLessThanOrEqual(share);
    let older = (result.cut?.firstKeptIndex ?? 0) - 1;
    while (older > 0 && factsOf(within[older] as PiMessage).kind === "toolResult") older--;
    expect(compactor.tokens.total(within.slice(older))).toBeGreaterThan(share);
  });

  it("keeps the last user message", async () => {
    const result = await first;
    const lastUser = messages[lastUserIndex(messages.map(factsOf))];
    expect(result.messages).toContain(lastUser);
  });

  it("writes one summary message first, beginning 'Previously:' and keeping the session's facts", async () => {
    const result = await first;
    const summary = factsOf(result.messages[0] as PiMessage);
    expect(summary.kind).toBe("summary");
    expect(summary.text).toMatch(/^Previously:\n\n## Goal\n/);
    expect(summary.text).toContain("## Files");
    expect(result.messages.slice(1).some((m) => factsOf(m).kind === "summary")).toBe(false);
  });

  it("leaves no tool result without its call", async () => {
    const result = await first;
    const facts = result.messages.map(factsOf);
    const calls = new Set(facts.flatMap((f) => f.toolCalls.map((c) => c.id)));
    for (const f of facts) for (const id of f.toolResultIds) expect(calls.has(id)).toBe(true);
  });

  it("compacts again as the session grows, updating the summary with the prefix once", async () => {
    const half = Math.floor(messages.length / 2);
    const once = await compactor.compact({ messages: messages.slice(0, half), contextWindow: WINDOW });
    expect(once.status).toBe("compacted");
    const twice = await compactor.compact({ messages: [...once.messages, ...messages.slice(half)], contextWindow: WINDOW });
    expect(twice.status).toBe("compacted");
    expect(twice.summary?.match(/Previously:/g)).toHaveLength(1);
    expect(twice.messages.slice(1)).toEqual(messages.slice(messages.length - (twice.messages.length - 1)));
    expect(twice.tokensAfter).toBeLessThanOrEqual(WINDOW);
  });
});

describe.each(CLAUDE_FIXTURES)("sliding-window on the real Claude Code transcript %s with a 64k window", (file) => {
  const messages = loadClaudeMessages(file);
  const counter = createTiktokenCounter();
  const compactor = new Compactor<AnthropicMessage>({ summarizer: createExtractiveSummarizer(), adapter: createAnthropicAdapter(), tokenCounter: counter, plugins: [slidingWindow()] });
  afterAll(() => counter.dispose());
  const facts = messages.map((m) => compactor.facts.of(m));
  const lastUser = lastUserIndex(facts);
  const firstUser = facts.findIndex((f) => f.kind === "user");

  // claude-code-entire-openclaw is one prompt and 210 messages of an autonomous run (114,820
  // tokens), more than the 64k budget: its newest turn is split, the prompt kept ahead of the summary.
  it("compacts, keeping the newest turn (split, its request ahead of the summary, when it alone is over the budget), or leaves the transcript untouched when it fits", async () => {
    const result = await compactor.compact({ messages, contextWindow: WINDOW });
    if (result.status === "compacted") {
      const first = result.cut!.firstKeptIndex;
      const split = first > lastUser;
      if (split) {
        expect(compactor.tokens.total(messages.slice(lastUser))).toBeGreaterThan(WINDOW);
        expect(result.cut!.preservedIndices).toContain(lastUser);
        expect(result.messages[result.cut!.preservedIndices.indexOf(lastUser)]).toEqual(messages[lastUser]);
      }
      const from = split ? first : lastUser;
      expect(result.messages.slice(-(messages.length - from))).toEqual(messages.slice(from));
      expect(compactor.facts.of(result.messages[result.cut!.preservedIndices.length] as AnthropicMessage).text).toMatch(/^Previously:/);
      const kept = result.messages.map((m) => compactor.facts.of(m));
      const calls = new Set(kept.flatMap((f) => f.toolCalls.map((c) => c.id)));
      for (const f of kept) for (const id of f.toolResultIds) expect(calls.has(id)).toBe(true);
    } else {
      expect(result.status).toBe("noop");
      expect(firstUser === lastUser || compactor.tokens.total(messages) <= SHARE).toBe(true);
    }
  });
});
