import { Compactor, createEstimateCounter, createPiAdapter, FactsCache, MessageTokenCounter, type PiMessage, type Summarizer } from "@compaction/core";
import { builders, keepRecent } from "@compaction/core/testing";
import { describe, expect, it } from "vitest";
import { HeldSummarizer, type Mode, replayTimed, TtlCacheMeter } from "./timed-replay.js";

const b = builders("pi");
const tokens = new MessageTokenCounter(new FactsCache(createPiAdapter()), createEstimateCounter());
const tokensOf = (m: PiMessage) => tokens.count(m);

/** `n` turns, each a question, a step reading a file of `size` characters and an answer, one turn every `gapMs`. */
function session(n: number, size: number, gapMs: number): PiMessage[] {
  const stamp = (m: PiMessage, i: number): PiMessage => ({ ...m, timestamp: i * gapMs }) as PiMessage;
  const messages: PiMessage[] = [];
  for (let i = 0; i < n; i++) {
    messages.push(stamp(b.user(`look at file ${i}`), i), stamp(b.assistant(`step ${i}`, [{ id: `c${i}` }]), i));
    messages.push(...b.toolResults([{ id: `c${i}`, text: `file ${i} ${"x".repeat(size)}` }]).map((m) => stamp(m, i)), stamp(b.assistant(`file ${i} read`), i));
  }
  return messages;
}

const summary: Summarizer = { name: "extractive", summarize: async () => "## Goal\n- read the files" };

async function replay(mode: Mode, latencyMs: number, gapMs = 20_000) {
  const messages = session(120, 400, gapMs);
  const held = new HeldSummarizer(summary);
  const compactor = new Compactor<PiMessage>({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), summarizer: held, plugins: [keepRecent(1_500)], contextWindow: 8_000, reserveTokens: 1_000 });
  return replayTimed({ messages, facts: messages.map((m) => tokens.facts.of(m)), tokensOf, probe: null, compactor, window: 8_000, mode, latencyMs, server: held, cacheTtlMs: 300_000 });
}

describe("replayTimed", () => {
  it("blocking: the agent waits the summarizer's latency for every call of every compaction", async () => {
    const result = await replay("blocking", 30_000);
    expect(result.compactions).toBeGreaterThan(1);
    expect(result.noWait).toBe(0);
    expect(result.waitedS % 30).toBe(0);
    expect(result.waitedS).toBeGreaterThanOrEqual(30 * result.compactions);
  });

  it("background: on a session that grows slowly beside the latency, no compaction costs a wait", async () => {
    const blocking = await replay("blocking", 30_000);
    const background = await replay("background", 30_000);
    expect(background.compactions).toBeGreaterThan(1);
    expect(background.waitedS).toBe(0);
    expect(background.noWait).toBe(background.compactions);
    expect(blocking.waitedS).toBeGreaterThan(0);
  });

  it("background: a summary slower than the session's pace makes a request wait, and the replay counts it", async () => {
    const result = await replay("background", 600_000, 1_000);
    expect(result.waitedS).toBeGreaterThan(0);
    expect(result.noWait).toBeLessThan(result.compactions);
  });
});

describe("TtlCacheMeter", () => {
  it("reads the previous request's prefix from the cache within the TTL, and nothing after it", () => {
    const a = b.user("a".repeat(400));
    const c = b.user("c".repeat(400));
    const meter = new TtlCacheMeter<PiMessage>(60_000, 1.25, tokensOf);
    meter.record([a], 0);
    expect(meter.billed).toBeCloseTo(tokensOf(a) * 1.25);
    meter.record([a, c], 60_000);
    expect(meter.billed).toBeCloseTo(tokensOf(a) * 1.25 + tokensOf(a) * 0.1 + tokensOf(c) * 1.25);
    const before = meter.billed;
    meter.record([a, c], 120_001);
    expect(meter.billed - before).toBeCloseTo((tokensOf(a) + tokensOf(c)) * 1.25);
  });
});
