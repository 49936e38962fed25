/**
 * What the presets keep, as the provider counts it, on every real transcript: the sizes of the
 * messages kept (safeguard's and rolling's `keepRecentTokens`, sliding-window's `keepRatio`) are
 * converted at the calibrated ratio (`run.messageRatio`), not at the run's ratio (Before over our
 * count), which also holds the system prompt and tools no message shows: 15,000–30,000 tokens of
 * Claude Code's figures. At the run's ratio, `claude-code-viewer` (21,562 tokens, a run ratio of
 * 4.3) was compacted to 22,654: a compaction that made the context bigger.
 */
import { type Compactor, createCompactor, OVERFLOW_COMPACTED_SHARE, type PiMessage } from "@compaction/core";
import fc from "fast-check";
import { CLAUDE_FIXTURES, CODEX_FIXTURES, loadClaudeMessages, loadCodexMessages, loadPiMessages, PI_FIXTURES } from "@compaction/fixtures";
import { afterEach, describe, expect, it } from "vitest";
import { tmpProject } from "./support/tmp-project.js";

const WINDOW = 200_000;
const KEEP = 20_000;

const FIXTURES: ReadonlyArray<readonly [string, "pi" | "anthropic" | "openai", () => unknown[]]> = [
  ...PI_FIXTURES.map((file) => [file, "pi", () => loadPiMessages(file, { context: true })] as const),
  ...CLAUDE_FIXTURES.map((file) => [file, "anthropic", () => loadClaudeMessages(file)] as const),
  ...CODEX_FIXTURES.map((file) => [file, "openai", () => loadCodexMessages(file)] as const),
];


const PRESETS: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ["safeguard", { preset: "safeguard" }],
  ["sliding-window", { preset: "sliding-window" }],
  ["rolling without recall (safeguard's fallback)", { preset: "rolling", options: { rolling: { recall: false, minKeepMessages: 0 } } }],
  ["layered", { preset: "layered" }],
];

const compactors: Compactor<unknown>[] = [];
afterEach(() => {
  for (const compactor of compactors.splice(0)) compactor.dispose();
});

describe.each(FIXTURES)("what the presets keep on %s", (file, adapter, load) => {
  it.each(PRESETS)("%s never leaves a context bigger than it found", async (_name, config) => {
    const compactor = await createCompactor<unknown>({ cwd: tmpProject({ ".compactionrc.json": JSON.stringify(config) }), adapter });
    compactors.push(compactor);
    const messages = load();
    const result = await compactor.compact({ messages, contextWindow: WINDOW });
    if (result.status !== "compacted") return;
    expect(result.event!.tokensAfterCompaction).toBeLessThan(result.tokensBefore);
  });

  // claude-code-entire-openclaw is one prompt and 210 messages of an autonomous run (180,619
  // tokens as Claude counts them, in a 200k window): its newest turn is split, as Claude Code
  // split it, the prompt kept ahead of the summary, so safeguard keeps the newest 20,000 there too.
  it("safeguard keeps the newest 20,000 tokens of messages as the provider counts them, at the calibrated ratio (more for a session larger than the window)", async () => {
    const compactor = await createCompactor<unknown>({ cwd: tmpProject({}), adapter });
    compactors.push(compactor);
    const messages = load();
    const result = await compactor.compact({ messages, contextWindow: WINDOW });
    if (result.status !== "compacted") {
      // Nothing older than the newest 20,000 tokens (as the provider counts them) to summarise.
      expect(compactor.tokens.total(messages)).toBeLessThanOrEqual(Math.ceil(KEEP / compactor.tokens.budgetRatio(messages)) + 2_000);
      return;
    }
    const keep = Math.floor(KEEP / compactor.tokens.budgetRatio(messages));
    const facts = messages.map((m) => compactor.facts.of(m));
    const lastUser = facts.findLastIndex((f) => f.kind === "user" && !f.pinned);
    const kept = compactor.tokens.total(messages.slice(result.cut!.firstKeptIndex));
    if (result.tokensBefore > WINDOW) {
      // A session larger than the window (pi-before-compaction, 277k tokens) is no regular
      // compaction: the newest messages up to the run's target, more than keepRecentTokens.
      expect(kept).toBeGreaterThan(keep);
      expect(result.tokensAfter).toBeLessThanOrEqual(Math.floor(OVERFLOW_COMPACTED_SHARE * compactor.autoCompactTokens(WINDOW)));
    } else if (result.cut!.firstKeptIndex > lastUser) {
      // The newest turn split: its request ahead of the summary, its newest messages within
      // 20,000 tokens kept, as many as fit (the next older place to cut would keep more).
      expect(result.cut!.preservedIndices).toContain(lastUser);
      expect(kept).toBeLessThanOrEqual(keep);
      let older = result.cut!.firstKeptIndex - 1;
      while (older > lastUser && (facts[older]?.kind === "toolResult" || facts[older]?.kind === "system")) older--;
      if (older > lastUser) expect(compactor.tokens.total(messages.slice(older))).toBeGreaterThan(keep);
    } else if (compactor.tokens.total(messages.slice(lastUser)) > keep) {
      // Pulled back to the request: the newest turn is over keepRecentTokens but within the run's target.
      expect(result.cut!.firstKeptIndex).toBe(lastUser);
    } else {
      expect(kept).toBeLessThanOrEqual(keep);
      // Within the turn-boundary loss safeguard allows (maxTurnBoundaryLoss 0.5): not the far
      // smaller share the run's ratio would leave where the system prompt and tools are large.
      expect(kept).toBeGreaterThan(keep / 2);
    }
  });
});

/**
 * A generated session: `turns` turns of a user message and a reply whose usage figure is a
 * provider's counting `r` times ours plus a fixed part (system prompt and tools), as Claude
 * Code's are, then the newest request.
 */
function generatedSession(compactor: Compactor<unknown>, r: number, fixed: number, turns: number): PiMessage[] {
  const messages: PiMessage[] = [];
  let counted = 0;
  let at = Date.UTC(2026, 0, 1);
  for (let i = 0; i < turns; i++) {
    const user = { role: "user", content: [{ type: "text", text: `step ${i}: ${"check the parser and its tests. ".repeat(20 + (i % 7) * 30)}` }], timestamp: (at += 1000) } as PiMessage;
    counted += compactor.tokens.count(user);
    const reply = { role: "assistant", content: [{ type: "text", text: `done ${i}: ${"fixed an off-by-one in parse.ts. ".repeat(20 + (i % 5) * 40)}` }], stopReason: "stop", timestamp: (at += 1000) };
    counted += compactor.tokens.count(reply as PiMessage);
    const total = Math.round(fixed + r * counted);
    messages.push(user, { ...reply, usage: { input: total, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: total } } as PiMessage);
  }
  messages.push({ role: "user", content: [{ type: "text", text: "continue" }], timestamp: (at += 1000) } as PiMessage);
  return messages;
}

async function estimateCompactor(config: Record<string, unknown>): Promise<Compactor<unknown>> {
  const compactor = await createCompactor<unknown>({ cwd: tmpProject({ ".compactionrc.json": JSON.stringify({ ...config, tokenizer: { counter: "estimate" } }) }), adapter: "pi" });
  compactors.push(compactor);
  return compactor;
}

/**
 * The smallest session found (by fast-check's shrinking) where a manual safeguard compaction made
 * the context bigger: six turns whose usage is 2.25 times our count, no fixed part. safeguard keeps
 * the newest 20,000 tokens (as the provider counts them) and so compacts only the first turn, 741
 * tokens; its summary, with that turn quoted whole as the last exchange, is 982 tokens: 20,001 ->
 * 20,242. The core now refuses such a result, and says why with both sizes.
 */
it("leaves a short session as it is when the summary of its first turn would be longer than the turn, and says so with the sizes", async () => {
  const compactor = await estimateCompactor({ preset: "safeguard" });
  const messages = generatedSession(compactor, 2.253301565690946, 0, 6);
  const result = await compactor.compact({ messages, contextWindow: WINDOW, trigger: "manual" });
  expect(result.status).toBe("noop");
  expect(result.messages).toBe(messages);
  expect(result.tokensAfter).toBe(result.tokensBefore);
  expect(result.reason).toBe(
    "The summary (982 tokens) would not be smaller than the 741 tokens of the 2 messages it replaces: the context would be 20,242 tokens after, not fewer than the 20,001 before; too little history comes before the messages 'safeguard' keeps to be worth a summary.",
  );
});

/**
 * Generated sessions (see generatedSession), with a fixed part of up to 30,000 tokens: no preset
 * leaves the context bigger than it found it (docs/guarantees.md, "A compaction never makes the
 * context bigger"): it compacts to a smaller context or leaves it as it is, saying why; and
 * safeguard keeps within 20,000 tokens of messages at the calibrated ratio whatever the fixed part.
 * Several seeds: one seed of 60 runs did not meet the bug its unseeded runs found (a manual safeguard
 * compaction of a short context that reported 27,000 -> 27,185); seeds 26 and 29 do (without the
 * fix, they fail on six and eight turns, the shrunk cases among the examples).
 */
it.each([26, 29, 31, 57, 2026])("never leaves a generated context bigger, whatever the provider's ratio and fixed part, every preset (seed %i)", async (seed) => {
  let compacted = 0;
  let refused = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...PRESETS),
      fc.double({ min: 1, max: 2.5, noNaN: true }),
      fc.integer({ min: 0, max: 30_000 }),
      fc.integer({ min: 2, max: 40 }),
      async ([, config], r, fixed, turns) => {
        const compactor = await estimateCompactor(config);
        const messages = generatedSession(compactor, r, fixed, turns);
        const result = await compactor.compact({ messages, contextWindow: WINDOW, trigger: "manual" });
        expect(["compacted", "noop"], result.reason ?? "").toContain(result.status);
        if (result.status !== "compacted") {
          expect(result.messages).toBe(messages);
          expect(result.tokensAfter).toBe(result.tokensBefore);
          if (/would not be smaller/.test(result.reason ?? "")) refused += 1;
          return;
        }
        compacted += 1;
        expect(result.tokensAfter).toBeLessThan(result.tokensBefore);
        expect(result.event!.tokensAfterCompaction).toBe(result.tokensAfter);
        if (result.event!.strategy === "safeguard") {
          const keep = Math.floor(KEEP / compactor.tokens.budgetRatio(messages));
          const kept = compactor.tokens.total(messages.slice(result.cut!.firstKeptIndex));
          expect(kept).toBeLessThanOrEqual(keep);
          // Not the far smaller share the run's ratio (which holds the fixed part) would leave:
          // within the turn-boundary loss (half) and one message (under 2,000 tokens here).
          expect(kept).toBeGreaterThanOrEqual(keep / 2 - 2_000);
        }
      },
    ),
    // A context within the run's target is not cut for it (a 17,585-token fixed part at ratio 1
    // made the target's own share of our count smaller than two short turns).
    {
      numRuns: 60,
      seed,
      examples: [
        [["safeguard", { preset: "safeguard" }], 1, 17_585, 2],
        [["safeguard", { preset: "safeguard" }], 2.253301565690946, 0, 6],
        [["safeguard", { preset: "safeguard" }], 1.6716941583887723, 0, 8],
      ],
    },
  );
  // The property holds by compacting most sessions, not by leaving them all as they are.
  expect(compacted).toBeGreaterThan(refused);
});
