import { describe, expect, it } from "vitest";
import { Compactor } from "../compactor/compactor.js";
import type { CompactionResult } from "../compactor/result.js";
import { createPiAdapter, type PiMessage } from "../messages/pi-adapter.js";
import type { Summarizer } from "../summarizer/summarizer.js";
import { words } from "../testing/builders.js";
import { keepRecent } from "../testing/keep-recent.js";
import { assistant, user } from "../testing/pi-messages.js";
import { createEstimateCounter } from "../tokens/estimate-counter.js";
import { type BackgroundEvent, type BackgroundHost, backgroundCheck, describeBackgroundEvent, takePreparation } from "./background-check.js";
import type { PrepareInput } from "./background.js";
import { HostLoop } from "./host-loop.js";

const model: Summarizer = { name: "test-model", summarize: async () => "## Goal\n- the model's summary" };
const noModel: Summarizer = { name: "no-model", summarize: async () => "## Goal\n- the no-model summary" };

const turns = (n: number, label = "q"): PiMessage[] =>
  Array.from({ length: n }, (_, i) => [user(`${label}${i} ${words(133)}`), assistant(`a${label}${i} ${words(133)}`)]).flat();

/** A host over `messages` whose compactions wait for `release()`; records what the check asked of it. */
function host(loop: HostLoop<PiMessage>, context: { tokens: number; messages: PiMessage[] }, mayStart = true) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const events: BackgroundEvent[] = [];
  const calls = { runs: 0, applied: [] as Array<{ appended: readonly PiMessage[]; cold: boolean }>, foreground: [] as Array<Summarizer | undefined> };
  const side: BackgroundHost<PiMessage, string> = {
    context: () => context,
    mayStart: () => mayStart,
    run: async (snapshot: readonly PiMessage[], input: PrepareInput): Promise<CompactionResult<PiMessage>> => {
      calls.runs += 1;
      await gate;
      return loop.compactor.compact({ messages: snapshot, contextWindow: 8_000, reserveTokens: loop.reserveTokens, trigger: "auto", signal: input.signal });
    },
    apply: async (preparation, appended, cold) => {
      loop.applied(preparation);
      calls.applied.push({ appended, cold });
      return "applied";
    },
    compactNow: async (summarizer) => {
      calls.foreground.push(summarizer);
      return "compacted in the foreground";
    },
    report: (event) => events.push(event),
  };
  return { side, events, calls, release: () => release() };
}

const loopOf = (options: { waitMs?: number } = {}) =>
  new HostLoop(new Compactor<PiMessage>({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), contextWindow: 8_000, summarizer: model, plugins: [keepRecent(1_000)] }), {
    contextWindow: 8_000,
    fallbackSummarizer: noModel,
    ...options,
  });

describe("backgroundCheck", () => {
  it("starts a preparation past the prepare mark and reports it, then puts it in place past the threshold with the messages appended since", async () => {
    const loop = loopOf();
    const context = { tokens: loop.prepareMark + 1, messages: turns(8) };
    const { side, events, calls, release } = host(loop, context);
    expect(await backgroundCheck(loop, side)).toBeNull();
    expect(events).toMatchObject([{ type: "start", reason: "prepare", tokens: loop.prepareMark + 1, messages: 16 }]);
    release();
    await loop.prepared?.done;
    expect(events.at(-1)).toMatchObject({ type: "ready", status: "compacted" });
    const later = turns(1, "late");
    context.messages = [...context.messages, ...later];
    context.tokens = loop.threshold + 1;
    expect(await backgroundCheck(loop, side)).toBe("applied");
    expect(calls.applied).toEqual([{ appended: later, cold: false }]);
    expect(calls.runs).toBe(1);
  });

  it("starts nothing when the host says it may not", async () => {
    const loop = loopOf();
    const { side, events, calls } = host(loop, { tokens: loop.prepareMark + 1, messages: turns(8) }, false);
    expect(await backgroundCheck(loop, side)).toBeNull();
    expect(events).toEqual([]);
    expect(calls.runs).toBe(0);
    expect(loop.prepared).toBeNull();
  });

  it("past the window less the reserve waits for the compaction in flight at most waitMs, then drops it and compacts with the no-model summarizer", async () => {
    const loop = loopOf({ waitMs: 10 });
    const context = { tokens: loop.prepareMark + 1, messages: turns(8) };
    const { side, events, calls } = host(loop, context);
    await backgroundCheck(loop, side);
    context.tokens = 8_000 - loop.reserveTokens + 1;
    expect(await backgroundCheck(loop, side)).toBe("compacted in the foreground");
    expect(events.map((event) => event.type)).toEqual(["start", "waiting", "wait", "dropped"]);
    expect(events[2]).toMatchObject({ type: "wait", timedOut: true });
    expect(events[3]).toMatchObject({ type: "dropped", cost: { reason: "prepare", why: expect.stringContaining("waitMs (10 ms)") } });
    expect(calls.foreground).toEqual([noModel]);
    expect(loop.prepared).toBeNull();
  });

  it("with a claim refused by another worker, prepares nothing; when a request cannot be sent it waits for the holder, then compacts with the no-model summarizer", async () => {
    const loop = loopOf();
    const context = { tokens: loop.prepareMark + 1, messages: turns(8) };
    const { side, events, calls } = host(loop, context);
    const asked: string[] = [];
    let holderWaits = 0;
    const sharing = { ...side, claim: async (reason: string) => (asked.push(reason), "held" as const), waitForHolder: async () => (holderWaits++, false) };
    expect(await backgroundCheck(loop, sharing)).toBeNull();
    expect(loop.prepared).toBeNull();
    expect(calls.runs).toBe(0);
    context.tokens = 8_000 - loop.reserveTokens + 1;
    expect(await backgroundCheck(loop, sharing)).toBe("compacted in the foreground");
    expect(asked).toEqual(["prepare", "threshold"]);
    expect(holderWaits).toBe(1);
    expect(calls.foreground).toEqual([noModel]);
    expect(events).toEqual([]);
  });

  it("with the claim held, starts the preparation and hands it to the host that follows it", async () => {
    const loop = loopOf();
    const { side, events } = host(loop, { tokens: loop.prepareMark + 1, messages: turns(8) });
    const followed: unknown[] = [];
    let settled = 0;
    const holding = { ...side, claim: async () => "prepare" as const, started: (p: unknown) => followed.push(p), settle: async () => void settled++ };
    expect(await backgroundCheck(loop, holding)).toBeNull();
    expect(followed).toEqual([loop.prepared]);
    expect(events.map((event) => event.type)).toEqual(["start"]);
    expect(settled).toBe(1);
  });

  it("with nothing in flight and a request that cannot be sent, starts one and puts it in place once it is ready", async () => {
    const loop = loopOf();
    const context = { tokens: 8_000 - loop.reserveTokens + 1, messages: turns(8) };
    const { side, events, calls, release } = host(loop, context);
    const check = backgroundCheck(loop, side);
    await new Promise((resolve) => setTimeout(resolve, 0));
    release();
    expect(await check).toBe("applied");
    expect(events.map((event) => event.type)).toEqual(["start", "waiting", "ready", "wait"]);
    expect(events[0]).toMatchObject({ reason: "threshold" });
    expect(calls.foreground).toEqual([]);
  });
});

describe("takePreparation", () => {
  it("gives the ready preparation and the messages appended since while its snapshot starts the context", async () => {
    const loop = loopOf();
    const context = { tokens: loop.prepareMark + 1, messages: turns(8) };
    const { side, release } = host(loop, context);
    await backgroundCheck(loop, side);
    release();
    await loop.prepared?.done;
    const later = turns(1, "late");
    const taken = await takePreparation(loop, { tokens: context.tokens + 300, messages: [...context.messages, ...later] }, { trigger: "manual" }, side);
    expect(taken).toMatchObject({ kind: "prepared", appended: later, result: { status: "compacted" } });
  });

  it("drops it, reported, for a compaction with a focus and for a context it no longer starts", async () => {
    for (const [ask, messages] of [
      [{ trigger: "manual" as const, focus: "the parser" }, turns(8)],
      [{ trigger: "auto" as const }, turns(8, "other")],
    ] as const) {
      const loop = loopOf();
      const { side, events, release } = host(loop, { tokens: loop.prepareMark + 1, messages: turns(8) });
      await backgroundCheck(loop, side);
      release();
      await loop.prepared?.done;
      expect(await takePreparation(loop, { tokens: loop.prepareMark + 1, messages }, ask, side)).toEqual({ kind: "compact" });
      expect(events.at(-1)).toMatchObject({ type: "dropped" });
      expect(loop.prepared).toBeNull();
    }
  });

  it("waits at most waitMs for one in flight; past that an automatic compaction gets the no-model summarizer, a manual one the compactor's own", async () => {
    for (const [trigger, expected] of [
      ["auto", { kind: "compact", summarizer: noModel }],
      ["manual", { kind: "compact" }],
    ] as const) {
      const loop = loopOf({ waitMs: 10 });
      const context = { tokens: loop.prepareMark + 1, messages: turns(8) };
      const { side, events } = host(loop, context);
      await backgroundCheck(loop, side);
      expect(await takePreparation(loop, context, { trigger }, side)).toEqual(expected);
      expect(events.map((event) => event.type)).toEqual(["start", "waiting", "wait", "dropped"]);
    }
  });

  it("has nothing to give when nothing is prepared", async () => {
    const loop = loopOf();
    expect(await takePreparation(loop, { tokens: 100, messages: turns(1) }, { trigger: "auto" }, { report: () => undefined })).toEqual({ kind: "compact" });
  });
});

describe("describeBackgroundEvent", () => {
  it("says what happened in one line, and nothing for waiting", () => {
    expect(describeBackgroundEvent({ type: "start", reason: "prepare", tokens: 150_000, messages: 900, at: 0 })).toBe(
      "compaction: preparing the next compaction in the background (the context is 150000 tokens, 900 messages; past the prepare mark).",
    );
    expect(describeBackgroundEvent({ type: "dropped", cost: { reason: "prepare", why: "a branch", tokens: 10, compactedMessages: 3, ms: 1500 } })).toBe(
      "compaction: the compaction prepared in the background was dropped: a branch (it compacted 3 messages of a 10-token context in 1.5 s).",
    );
    expect(describeBackgroundEvent({ type: "waiting", tokens: 1 })).toBeNull();
  });
});
