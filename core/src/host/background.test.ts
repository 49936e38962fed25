import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Compactor } from "../compactor/compactor.js";
import type { CompactionResult } from "../compactor/result.js";
import { compactedTargetTokens } from "../compactor/usable-window.js";
import { createPiAdapter, type PiMessage } from "../messages/pi-adapter.js";
import type { Summarizer } from "../summarizer/summarizer.js";
import { words } from "../testing/builders.js";
import { keepRecent } from "../testing/keep-recent.js";
import { assistant, toolResult, user } from "../testing/pi-messages.js";
import { createEstimateCounter } from "../tokens/estimate-counter.js";
import { PREPARE_SHARE, prefixChange } from "./background.js";
import { HostLoop, type HostLoopOptions } from "./host-loop.js";

const model: Summarizer = { name: "test-model", summarize: async () => "## Goal\n- the summary" };
const compactor = (summarizer: Summarizer = model) =>
  new Compactor<PiMessage>({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), contextWindow: 8_000, summarizer, plugins: [keepRecent(1_000)] });

/** `n` exchanges of about `tokens` tokens each (chars/4). */
const turns = (n: number, tokens = 400, label = "q"): PiMessage[] =>
  Array.from({ length: n }, (_, i) => [user(`${label}${i} ${words(Math.round(tokens / 3))}`), assistant(`a${label}${i} ${words(Math.round(tokens / 3))}`)]).flat();

const toolResultOf = (tokens: number): PiMessage => toolResult("call-1", words(Math.round(tokens / 1.5)));

/** A loop on a clock the test moves. */
function loopAt(options: Partial<HostLoopOptions> = {}, summarizer?: Summarizer): { loop: HostLoop<PiMessage>; clock: { now: number } } {
  const clock = { now: 1_000_000 };
  const loop = new HostLoop(compactor(summarizer), { contextWindow: 8_000, now: () => clock.now, ...options });
  return { loop, clock };
}

/** A compaction the test finishes: `finish()` resolves it with the compactor's own run of the snapshot. */
function deferredRun(loop: HostLoop<PiMessage>) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const seen: { targetTokens: number | undefined; signal: AbortSignal | null } = { targetTokens: undefined, signal: null };
  const run = async (snapshot: readonly PiMessage[], input: { targetTokens: number | undefined; signal: AbortSignal }): Promise<CompactionResult<PiMessage>> => {
    seen.targetTokens = input.targetTokens;
    seen.signal = input.signal;
    await gate;
    return loop.compactor.compact({ messages: snapshot, contextWindow: 8_000, reserveTokens: loop.reserveTokens, trigger: "auto", signal: input.signal, ...(input.targetTokens === undefined ? {} : { targetTokens: input.targetTokens }) });
  };
  return { run, finish: release, seen };
}

describe("HostLoop background preparation", () => {
  it("is on by default for a model summarizer and off for the extractive one, unless the host says", () => {
    expect(loopAt().loop.background).toBe(true);
    expect(loopAt({}, { name: "extractive", summarize: async () => "x" }).loop.background).toBe(false);
    expect(loopAt({ background: true }, { name: "extractive", summarize: async () => "x" }).loop.background).toBe(true);
    expect(loopAt({ background: false }).loop.background).toBe(false);
  });

  it("puts the prepare mark at PREPARE_SHARE of the threshold", () => {
    const { loop } = loopAt();
    expect(loop.prepareMark).toBe(Math.floor(PREPARE_SHARE * loop.threshold));
    expect(loop.prepareMark).toBeLessThan(loop.threshold);
  });

  it("says prepare past the mark, nothing below it, and nothing more while one is in flight", () => {
    const { loop } = loopAt();
    const messages = turns(6);
    expect(loop.next(loop.prepareMark, messages).action).toBe("none");
    expect(loop.next(loop.prepareMark + 1, messages)).toMatchObject({ action: "prepare", reason: "prepare" });
    const { run } = deferredRun(loop);
    loop.prepare("prepare", messages, loop.prepareMark + 1, run);
    expect(loop.next(loop.prepareMark + 1, messages).action).toBe("none");
    expect(() => loop.prepare("prepare", messages, loop.prepareMark + 1, run)).toThrow(/already being prepared/);
  });

  it("moves the prepare mark as late as the growth rate and the expected duration allow, never past the threshold nor below PREPARE_SHARE of it", () => {
    const slow = loopAt({ expectedMs: 30_000 });
    expect(slow.loop.prepareMark).toBe(slow.loop.coldMark);
    // 10 tokens a second: 600 tokens in twice 30 s, far less than the room under the window less the reserve.
    slow.loop.observe(1_000);
    slow.clock.now += 100_000;
    slow.loop.observe(2_000);
    expect(slow.loop.prepareMark).toBe(slow.loop.threshold);
    const fast = loopAt({ expectedMs: 30_000 });
    // 100 tokens a second: 6,000 tokens in twice 30 s, more than all the room there is.
    fast.loop.observe(1_000);
    fast.clock.now += 10_000;
    fast.loop.observe(2_000);
    expect(fast.loop.prepareMark).toBe(fast.loop.coldMark);
    const between = loopAt({ expectedMs: 10_000 });
    between.loop.observe(1_000);
    between.clock.now += 10_000;
    between.loop.observe(1_500);
    const room = 2 * (500 / 10_000) * 10_000;
    expect(between.loop.prepareMark).toBe(Math.max(between.loop.coldMark, Math.min(between.loop.threshold, Math.floor(8_000 - between.loop.reserveTokens - room))));
    expect(between.loop.prepareMark).toBeGreaterThan(between.loop.coldMark);
    expect(between.loop.prepareMark).toBeLessThan(between.loop.threshold);
  });

  it("prepares again instead of applying a result the context outgrew while it was written (a large output would stay beside the summary)", async () => {
    const { loop } = loopAt();
    const snapshot = turns(8);
    const { run, finish } = deferredRun(loop);
    const preparation = loop.prepare("prepare", snapshot, loop.threshold - 100, run);
    finish();
    await preparation.done;
    // Within twice what it was prepared for it is applied; past it, prepared again.
    expect(loop.next(loop.threshold + 1, snapshot).action).toBe("apply");
    const grown = preparation.tokens + 2 * Math.max(preparation.growthTokens, 0.05 * 8_000) + 1;
    expect(grown).toBeLessThanOrEqual(8_000 - loop.reserveTokens);
    const step = loop.next(grown, [...snapshot, toolResultOf(3_000)]);
    expect(step).toMatchObject({ action: "prepare", reason: "threshold", dropped: { why: expect.stringContaining("while it was written") } });
  });

  it("prepares with the compactor's target less the growth left before the threshold", () => {
    const { loop } = loopAt();
    const { run, seen } = deferredRun(loop);
    const tokens = loop.prepareMark + 10;
    loop.prepare("prepare", turns(6), tokens, run);
    const own = compactedTargetTokens(8_000, loop.reserveTokens, loop.compactor.autoCompact.threshold, tokens);
    expect(seen.targetTokens).toBe(Math.max(Math.floor(own / 2), own - (loop.threshold - tokens)));
    expect(seen.targetTokens).toBeLessThan(own);
  });

  it("holds a ready result below the threshold and applies it past it, with every message appended since", async () => {
    const { loop } = loopAt();
    const snapshot = turns(8);
    const { run, finish } = deferredRun(loop);
    const preparation = loop.prepare("prepare", snapshot, loop.prepareMark + 1, run);
    finish();
    await preparation.done;
    expect(preparation.result?.status).toBe("compacted");
    const later = [...snapshot, ...turns(2, 400, "late")];
    expect(loop.next(loop.threshold - 1, later).action).toBe("none");
    const step = loop.next(loop.threshold + 1, later);
    expect(step).toMatchObject({ action: "apply", preparation, cold: false });
    if (step.action === "apply") expect(step.appended).toEqual(later.slice(snapshot.length));
  });

  it("drops a ready result whose snapshot is no longer the start of the context, and reports what it cost", async () => {
    const { loop } = loopAt();
    const snapshot = turns(8);
    const { run, finish } = deferredRun(loop);
    const preparation = loop.prepare("prepare", snapshot, loop.prepareMark + 1, run);
    finish();
    await preparation.done;
    const rewritten = [...snapshot];
    rewritten[3] = user("a message rewritten after the snapshot");
    const step = loop.next(loop.threshold + 1, rewritten);
    expect(step.action).not.toBe("apply");
    expect(step.dropped).toMatchObject({ reason: "prepare", why: expect.stringContaining("message 3"), tokens: loop.prepareMark + 1 });
    expect(step.dropped?.compactedMessages).toBeGreaterThan(0);
    expect(loop.prepared).toBeNull();
  });

  it("while it is in flight past the threshold: goes on while the context fits the window less the reserve, then says wait", () => {
    const { loop } = loopAt();
    const messages = turns(8);
    loop.prepare("prepare", messages, loop.prepareMark + 1, deferredRun(loop).run);
    expect(loop.next(loop.threshold + 1, messages).action).toBe("none");
    expect(loop.next(8_000 - loop.reserveTokens, messages).action).toBe("none");
    expect(loop.next(8_000 - loop.reserveTokens + 1, messages).action).toBe("wait");
  });

  it("with nothing prepared past the threshold: prepares while a request can be sent, else compacts in the foreground", () => {
    const { loop } = loopAt();
    const messages = turns(8);
    expect(loop.next(loop.threshold + 1, messages)).toMatchObject({ action: "prepare", reason: "threshold" });
    expect(loop.next(8_000 - loop.reserveTokens + 1, messages).action).toBe("compact");
  });

  it("waits at most waitMs for the compaction in flight, and cancels it when dropped", async () => {
    const { loop } = loopAt({ waitMs: 20 });
    const { run, seen } = deferredRun(loop);
    const preparation = loop.prepare("prepare", turns(8), loop.prepareMark + 1, run);
    expect(await loop.wait(preparation)).toBe(false);
    const dropped = loop.drop("the test gave up");
    expect(dropped).toMatchObject({ why: "the test gave up", compactedMessages: 0 });
    expect(seen.signal?.aborted).toBe(true);
  });

  it("a preparation below the threshold that compacts nothing is dropped, and none other starts before the threshold", async () => {
    const { loop } = loopAt();
    const messages = turns(8);
    const noop = async (snapshot: readonly PiMessage[]): Promise<CompactionResult<PiMessage>> => ({
      status: "noop", messages: snapshot, summary: null, cut: null, event: null, tokensBefore: 1, tokensAfter: 1, warnings: [], reason: "declined", error: null,
    });
    const preparation = loop.prepare("prepare", messages, loop.prepareMark + 1, noop);
    await preparation.done;
    const step = loop.next(loop.prepareMark + 2, messages);
    expect(step).toMatchObject({ action: "none", dropped: { why: expect.stringContaining("did not compact (noop)") } });
    expect(loop.next(loop.prepareMark + 3, messages).action).toBe("none");
    expect(loop.next(loop.threshold + 1, messages)).toMatchObject({ action: "prepare", reason: "threshold" });
  });

  describe("the prompt cache gone cold", () => {
    it("is cold once the last request is older than cacheTtlMs, never before a first request, never with cacheTtlMs null", () => {
      const { loop, clock } = loopAt({ cacheTtlMs: 60_000 });
      expect(loop.cacheCold()).toBe(false);
      loop.sent();
      clock.now += 60_000;
      expect(loop.cacheCold()).toBe(false);
      clock.now += 1;
      expect(loop.cacheCold()).toBe(true);
      const never = loopAt({ cacheTtlMs: null });
      never.loop.sent();
      never.clock.now += 10 * 3_600_000;
      expect(never.loop.cacheCold()).toBe(false);
    });

    it("applies a ready compaction below the threshold once the cache is cold, and prepares one past the mark then", async () => {
      const { loop, clock } = loopAt({ cacheTtlMs: 60_000 });
      const messages = turns(8);
      loop.sent();
      clock.now += 61_000;
      expect(loop.next(loop.prepareMark + 1, messages)).toMatchObject({ action: "prepare", reason: "cache-cold" });
      expect(loop.next(loop.prepareMark - 1, messages).action).toBe("none");
      const { run, finish, seen } = deferredRun(loop);
      const preparation = loop.prepare("cache-cold", messages, loop.prepareMark + 1, run);
      expect(seen.targetTokens).toBeUndefined();
      finish();
      await preparation.done;
      expect(loop.next(loop.prepareMark + 1, messages)).toMatchObject({ action: "apply", cold: true });
      // Warm again: it waits for the threshold.
      loop.sent();
      expect(loop.next(loop.prepareMark + 1, messages).action).toBe("none");
    });
  });

  it("rejects options it cannot use, naming them", () => {
    expect(() => loopAt({ waitMs: -1 })).toThrow(/waitMs option of the host/);
    expect(() => loopAt({ cacheTtlMs: 0 })).toThrow(/cacheTtlMs option/);
    expect(() => loopAt({ background: "sometimes" as never })).toThrow(/background option/);
  });

  it("property: a ready result is applied only when its snapshot is an unchanged prefix of the context, with exactly what came after it", async () => {
    // One prepared result, then any edits of the context: appends, a rewritten message, messages
    // removed (a compaction, a branch), another key (another worker's entry).
    const { loop } = loopAt({ cacheTtlMs: null });
    const base = turns(8);
    const { run, finish } = deferredRun(loop);
    const template = loop.prepare("prepare", base, loop.prepareMark + 1, run);
    finish();
    await template.done;
    const result = template.result;
    expect(result?.status).toBe("compacted");
    const edit = fc.oneof(
      fc.record({ kind: fc.constant("append" as const), n: fc.integer({ min: 1, max: 4 }) }),
      fc.record({ kind: fc.constant("rewrite" as const), at: fc.nat() }),
      fc.record({ kind: fc.constant("truncate" as const), keep: fc.nat() }),
      fc.record({ kind: fc.constant("rekey" as const), at: fc.nat() }),
      fc.record({ kind: fc.constant("same-text" as const), at: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(edit, { maxLength: 6 }), async (edits) => {
        const messages = [...base];
        const keys: unknown[] = base.map((_, i) => `e${i}`);
        let changed = false;
        let appended = 0;
        for (const e of edits) {
          if (e.kind === "append") {
            for (let i = 0; i < e.n; i++) {
              messages.push(user(`new ${appended} ${words(20)}`));
              keys.push(`n${appended++}`);
            }
          } else if (messages.length > 0) {
            const at = ("at" in e ? e.at : e.keep) % messages.length;
            if (e.kind === "rewrite") {
              messages[at] = user(`rewritten ${at}`);
              if (at < base.length) changed = true;
            } else if (e.kind === "truncate") {
              messages.splice(at);
              keys.splice(at);
              if (at < base.length) changed = true;
            } else if (e.kind === "rekey") {
              keys[at] = `other-${at}`;
              if (at < base.length) changed = true;
            } else {
              // A copy with the same content: the same message.
              messages[at] = structuredClone(messages[at] as PiMessage);
            }
          }
        }
        const probe = new HostLoop(loop.compactor, { contextWindow: 8_000, cacheTtlMs: null });
        const preparation = probe.prepare("prepare", base, probe.prepareMark + 1, async () => result as CompactionResult<PiMessage>, base.map((_, i) => `e${i}`));
        await preparation.done;
        const step = probe.next(probe.threshold + 1, messages, keys);
        if (changed) {
          expect(step.action).not.toBe("apply");
          expect(step.dropped).not.toBeNull();
        } else {
          expect(step.action).toBe("apply");
          if (step.action === "apply") expect(step.appended).toEqual(messages.slice(base.length));
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe("prefixChange", () => {
  it("names the first message that changed, and null for an unchanged prefix", () => {
    const compactorFacts = compactor().facts;
    const a = turns(3);
    expect(prefixChange(a, a, [...a, user("x")], [...a, "k"], compactorFacts)).toBeNull();
    expect(prefixChange(a, a, a.slice(0, 2), a.slice(0, 2), compactorFacts)).toMatch(/fewer than the 6/);
  });
});
