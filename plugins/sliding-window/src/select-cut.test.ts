import type { MessageView } from "@compaction/core";
import { FORMATS, builders } from "@compaction/core/testing";
import { describe, expect, it } from "vitest";
import { compactsSomething, keepTokensFor, selectWindowCut } from "./select-cut.js";

/**
 * Ten messages with the same indices in every format (one tool result per step):
 * 0 user, 1 assistant(call), 2 result, 3 assistant, 4 user, 5 assistant, 6 user (the last),
 * 7 assistant(call), 8 result, 9 assistant.
 */
function conversation(format: (typeof FORMATS)[number]) {
  const b = builders(format);
  return [
    b.user("fix the build"),
    b.assistant("running make", [{ id: "c1" }]),
    ...b.toolResults([{ id: "c1", text: "error" }]),
    b.assistant("fixed"),
    b.user("thanks"),
    b.assistant("welcome"),
    b.user("now run the tests"),
    b.assistant("running", [{ id: "c2" }]),
    ...b.toolResults([{ id: "c2", text: "ok" }]),
    b.assistant("all green"),
  ];
}

function viewOf(format: (typeof FORMATS)[number], messages: readonly unknown[], tokens: readonly number[]): MessageView {
  const { adapter } = builders(format);
  return { facts: messages.map((m) => adapter.readFacts(m)), tokens };
}

const TENS = [10, 10, 10, 10, 10, 10, 10, 10, 10, 10];
const withAt = (index: number, value: number) => TENS.map((t, i) => (i === index ? value : t));

describe.each(FORMATS)("selectWindowCut on the %s adapter", (format) => {
  const messages = conversation(format);

  it.each([
    // tokens per message, keepTokens, expected first kept index
    { tokens: TENS, keep: 40, kept: 6, why: "the last two turns' 40 tokens fit exactly" },
    { tokens: TENS, keep: 45, kept: 6, why: "one more message would need 50" },
    { tokens: TENS, keep: 50, kept: 5, why: "a cut inside an older turn is allowed (split turn)" },
    { tokens: TENS, keep: 60, kept: 4, why: "whole turns when they fit" },
    { tokens: TENS, keep: 85, kept: 3, why: "a tool result is never the first kept message" },
    { tokens: withAt(5, 500), keep: 100, kept: 6, why: "a large message stops the window; older small ones are not taken" },
    { tokens: withAt(2, 500), keep: 100, kept: 3, why: "a large tool result outside the window is compacted" },
  ])("with keepTokens $keep keeps from message $kept: $why", ({ tokens, keep, kept }) => {
    const cut = selectWindowCut(viewOf(format, messages, tokens), keep);
    expect(cut?.firstKeptIndex).toBe(kept);
    expect(cut?.keptTokens).toBe(tokens.slice(kept).reduce((a, t) => a + t, 0));
    expect(cut?.overShare).toBe(false);
    expect(cut?.overRoom).toBe(false);
  });

  it.each([
    { tokens: withAt(9, 500), keep: 100, why: "the newest assistant message alone is larger than the window share" },
    { tokens: withAt(6, 500), keep: 100, why: "the last user message alone is larger than the window share" },
    { tokens: withAt(6, 500), keep: 520, why: "the newest turn is larger than the window share by its user message" },
    { tokens: withAt(8, 500), keep: 100, why: "a large tool result in the newest turn" },
    { tokens: TENS, keep: 35, why: "the share ends inside the newest turn" },
    { tokens: TENS, keep: 0, why: "a zero share still keeps the newest turn" },
  ])("keeps the newest turn from its user message when $why", ({ tokens, keep }) => {
    const cut = selectWindowCut(viewOf(format, messages, tokens), keep);
    expect(cut).toEqual({ firstKeptIndex: 6, keptTokens: tokens.slice(6).reduce((a, t) => a + t, 0), overShare: true, overRoom: false });
  });

  // Issue 10: the newest turn is never split (its user message is never compacted); what it
  // cannot keep whole within maxKeptTokens the core shrinks to head and tail.
  it("keeps the newest turn whole from its user message even past maxKeptTokens, and says it is over the room", () => {
    // The newest turn (6..9) holds 530 tokens; only 100 fit what the budget leaves.
    const tokens = withAt(8, 500);
    const cut = selectWindowCut(viewOf(format, messages, tokens), 20, 100);
    expect(cut).toEqual({ firstKeptIndex: 6, keptTokens: 530, overShare: true, overRoom: true });
  });

  it("keeps the newest turn whole when it fits maxKeptTokens, even over the share", () => {
    const tokens = withAt(8, 500);
    expect(selectWindowCut(viewOf(format, messages, tokens), 20, 530)).toMatchObject({ firstKeptIndex: 6, overRoom: false, overShare: true });
  });

  it("returns undefined when every message fits the share", () => {
    expect(selectWindowCut(viewOf(format, messages, TENS), 100)).toBeUndefined();
    expect(selectWindowCut(viewOf(format, messages, TENS), 1000)).toBeUndefined();
  });

  it("returns undefined when the conversation is one turn, however large", () => {
    const b = builders(format);
    const oneTurn = [b.user("go"), b.assistant("working", [{ id: "x" }]), ...b.toolResults([{ id: "x", text: "done" }]), b.assistant("done")];
    expect(selectWindowCut(viewOf(format, oneTurn, [10, 500, 500, 500]), 10)).toBeUndefined();
  });

  it("returns undefined when only pinned messages lie before the window", () => {
    const b = builders(format);
    const pinned = [b.pin(b.user("house rules")), b.pin(b.assistant("noted")), b.user("go"), b.assistant("done")];
    expect(selectWindowCut(viewOf(format, pinned, [50, 50, 10, 10]), 20)).toBeUndefined();
  });

  it("returns undefined when only an earlier summary lies before the window", () => {
    const b = builders(format);
    const summarised = [b.adapter.createSummary("Previously: the build was fixed"), b.user("go"), b.assistant("done")];
    expect(selectWindowCut(viewOf(format, summarised, [200, 10, 10]), 20)).toBeUndefined();
  });

  it("compacts an earlier summary together with the messages after it", () => {
    const b = builders(format);
    const summarised = [b.adapter.createSummary("Previously: x"), b.user("a"), b.assistant("b"), b.user("c"), b.assistant("d")];
    expect(selectWindowCut(viewOf(format, summarised, [10, 10, 10, 10, 10]), 20)?.firstKeptIndex).toBe(3);
  });

  it("returns undefined for an empty conversation", () => {
    expect(selectWindowCut({ facts: [], tokens: [] }, 10)).toBeUndefined();
  });
});

describe("selectWindowCut with a system prompt (OpenAI)", () => {
  const b = builders("openai");
  const system = b.system("You are a careful agent.");

  it("does not count the system prompt as something to summarise", () => {
    const messages = [system, b.user("go"), b.assistant("done")];
    expect(selectWindowCut(viewOf("openai", messages, [500, 10, 10]), 20)).toBeUndefined();
  });

  it("cuts after the system prompt and keeps the newest messages", () => {
    const messages = [system, b.user("a"), b.assistant("b"), b.user("c"), b.assistant("d")];
    expect(selectWindowCut(viewOf("openai", messages, [500, 10, 10, 10, 10]), 20)?.firstKeptIndex).toBe(3);
  });
});

describe("compactsSomething", () => {
  const b = builders("openai");
  const messages = [b.system("sys"), b.pin(b.user("rules")), b.user("a"), b.assistant("b"), b.user("c")];
  const view = viewOf("openai", messages, [1, 1, 1, 1, 1]);

  it.each([
    [0, false],
    [1, false],
    [2, false],
    [3, true],
    [5, true],
  ])("a cut at %i compacts something: %s", (index, expected) => {
    expect(compactsSomething(view, index)).toBe(expected);
  });
});

describe("keepTokensFor", () => {
  it.each([
    [64000, 64000, 0.4, 25600],
    [1000, 1000, 0.4, 400],
    [999, 999, 0.4, 399],
    [1000, 300, 0.4, 300],
    [1000, -50, 0.4, 0],
    [1000, 1000, 1, 1000],
  ])("window %i, room %i, ratio %d keeps %i tokens", (window, budget, ratio, expected) => {
    expect(keepTokensFor(window, budget, ratio)).toBe(expected);
  });
});
