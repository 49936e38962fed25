import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Compactor } from "../compactor/compactor.js";
import { ErrorCodes } from "../errors.js";
import { createPiAdapter, type PiMessage } from "../messages/pi-adapter.js";
import { words } from "../testing/builders.js";
import { assistant, toolResult, user } from "../testing/pi-messages.js";
import { createEstimateCounter } from "../tokens/estimate-counter.js";
import { compactedTargetTokens } from "../compactor/usable-window.js";
import { HostLoop, RETRY_GROWTH_SHARE } from "./host-loop.js";

const compactor = (reserveTokens?: number) =>
  new Compactor<PiMessage>({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), contextWindow: 8_000, ...(reserveTokens === undefined ? {} : { reserveTokens }) });

/** `n` exchanges of about `tokens` tokens each (chars/4). */
const turns = (n: number, tokens = 400): PiMessage[] =>
  Array.from({ length: n }, (_, i) => [user(`q${i} ${words(Math.round(tokens / 3))}`), assistant(`a${i} ${words(Math.round(tokens / 3))}`)]).flat();

describe("HostLoop", () => {
  it("fixes the reserve when it is made: the host's, else the compactor's, else the window's own", () => {
    expect(new HostLoop(compactor(), { contextWindow: 8_000 }).reserveTokens).toBe(1_000);
    expect(new HostLoop(compactor(2_000), { contextWindow: 8_000 }).reserveTokens).toBe(2_000);
    expect(new HostLoop(compactor(2_000), { contextWindow: 8_000, reserveTokens: 500 }).reserveTokens).toBe(500);
    expect(new HostLoop(compactor(), { contextWindow: 8_000, maxOutputTokens: 1_500 }).reserveTokens).toBe(1_500);
    expect(() => new HostLoop(compactor(), { contextWindow: 8_000, reserveTokens: 6_000, host: "my-host" })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INPUT_INVALID, path: "/reserveTokens", message: expect.stringContaining("the reserveTokens option of my-host") }),
    );
  });

  it("takes the host's own threshold where the host decides when to compact, and prepares before it", () => {
    const loop = new HostLoop(compactor(), { contextWindow: 8_000, threshold: 7_000 });
    expect(loop.threshold).toBe(7_000);
    expect(loop.coldMark).toBe(5_600);
    expect(loop.due(7_000, turns(2))).toBe(false);
    expect(loop.due(7_001, turns(2))).toBe(true);
    expect(() => new HostLoop(compactor(), { contextWindow: 8_000, threshold: 9_000, host: "my-host" })).toThrow(
      expect.objectContaining({ code: ErrorCodes.INPUT_INVALID, path: "/threshold", message: expect.stringContaining("my-host") }),
    );
  });

  it("is due past the threshold, then waits a quarter of the window after a compaction that left the context over it", () => {
    const loop = new HostLoop(compactor(), { contextWindow: 8_000 });
    const messages = turns(4);
    expect(loop.due(loop.threshold, messages)).toBe(false);
    expect(loop.due(loop.threshold + 1, messages)).toBe(true);
    const after = loop.threshold + 100;
    const growth = loop.settle(after, messages);
    expect(growth).toBe(8_000 * RETRY_GROWTH_SHARE);
    expect(loop.waiting).toBe(true);
    // Below the window less the reserve (7,000 here), the wait holds.
    expect(loop.due(after + 500, messages)).toBe(false);
    // Under the threshold after the compaction: nothing to wait for.
    expect(loop.settle(loop.threshold - 1, messages)).toBeNull();
    expect(loop.waiting).toBe(false);
    loop.settle(after, messages);
    loop.reset();
    expect(loop.due(after, messages)).toBe(true);
  });

  it("ends the wait once when the context reaches the window less the reserve; a compaction there that frees too little waits the whole quarter", () => {
    const loop = new HostLoop(compactor(), { contextWindow: 8_000 });
    const messages = turns(4);
    const budget = 8_000 - loop.reserveTokens;
    const after = loop.threshold + 100;
    loop.settle(after, messages);
    expect(loop.due(budget, messages)).toBe(false);
    expect(loop.due(budget + 1, messages)).toBe(true);
    // That compaction, at the budget, left it over the threshold again: only growth ends this wait.
    loop.settle(after, messages);
    expect(loop.due(budget + 1, messages)).toBe(false);
    expect(loop.due(after + 2_001, messages)).toBe(true);
  });

  it("stops waiting when a user message ends the large turn that stayed over the threshold", () => {
    const loop = new HostLoop(compactor(), { contextWindow: 8_000 });
    const large = [...turns(2), user("run the tests"), assistant("running", [{ id: "t1" }]), toolResult("t1", words(2_500))];
    loop.settle(loop.threshold + 100, large);
    const sameTurn = [...large, assistant("step")];
    expect(loop.due(loop.threshold + 200, sameTurn)).toBe(false);
    expect(loop.due(loop.threshold + 200, [...sameTurn, user("next question")])).toBe(true);
    // A small newest turn does not lift the wait: only growth does.
    const small = turns(6);
    loop.settle(loop.threshold + 100, small);
    expect(loop.due(loop.threshold + 200, [...small, user("next question")])).toBe(false);
  });

  it("stops waiting when a user message comes after a split turn whose request the summary carries (no user message left)", () => {
    const loop = new HostLoop(compactor(), { contextWindow: 8_000 });
    const split = [createPiAdapter().createSummary("## Goal\n- run the tests"), assistant("running", [{ id: "t1" }]), toolResult("t1", words(2_500))];
    loop.settle(loop.threshold + 100, split);
    expect(loop.due(loop.threshold + 200, [...split, assistant("step")])).toBe(false);
    expect(loop.due(loop.threshold + 200, [...split, assistant("all passed"), user("next question")])).toBe(true);
  });

  it("reports a request that leaves out messages once per loss, and one that cannot fit", () => {
    const loop = new HostLoop(compactor(), { contextWindow: 8_000 });
    const history = turns(200);
    const first = loop.request(history, 3_000, {}, "the summarizer failed");
    expect(first.request.dropped.length).toBeGreaterThan(0);
    expect(first.problem).toMatchObject({ code: ErrorCodes.CONTEXT_TRIMMED, message: expect.stringContaining(": the summarizer failed. The model does not see them") });
    // The same context grown at its end: the same messages stay out, nothing new to say.
    expect(loop.request([...history, user("more")], 3_000).problem).toBeNull();
    const pinned = [{ ...user(words(4_000)), pinned: true } as PiMessage, user("now?")];
    expect(loop.request(pinned, 3_000).problem).toMatchObject({ code: ErrorCodes.CONTEXT_OVERFLOW, message: expect.stringMatching(/^The request does not fit the context window/) });
  });
});

describe("HostLoop's wait, for any session", () => {
  // A host's loop as it runs: messages of any size appended, `due` checked after each, and a
  // compaction whenever it is due that either works (the context within the run's target, as
  // every compaction that brings it under the threshold keeps: `CompactionRun.targetTokens`) or
  // frees too little (anywhere over the threshold, up to past the budget). However they turn out,
  // the loop compacts at most twice per quarter of the window appended (once when the context
  // grew a quarter window, once more early at the window less the reserve), plus the first.
  it("compacts at most twice per quarter window appended, whatever each compaction frees", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(8_000, 16_000, 32_000, 128_000),
        fc.array(fc.tuple(fc.integer({ min: 1, max: 600 }), fc.oneof({ arbitrary: fc.double({ min: 0, max: 0.5, noNaN: true }), weight: 1 }, { arbitrary: fc.double({ min: 0.78, max: 1.2, noNaN: true }), weight: 3 })), { minLength: 100, maxLength: 400 }),
        (window, steps) => {
          const loop = new HostLoop(compactor(), { contextWindow: window });
          const messages = turns(2);
          let tokens = 0;
          let appended = 0;
          let compactions = 0;
          for (const [size, outcome] of steps) {
            tokens += size;
            appended += size;
            if (!loop.due(tokens, messages)) continue;
            compactions += 1;
            // The context after the compaction: within the target, or over the threshold.
            const after = Math.min(tokens, Math.floor(outcome * window));
            tokens = after > loop.threshold ? after : Math.min(after, compactedTargetTokens(window, loop.reserveTokens, 0.8));
            loop.settle(tokens, messages);
          }
          expect(compactions).toBeLessThanOrEqual(2 * (appended / (window * RETRY_GROWTH_SHARE)) + 1);
        },
      ),
      { numRuns: 200 },
    );
  });
});
