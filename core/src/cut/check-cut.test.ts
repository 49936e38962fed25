import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ErrorCodes } from "../errors.js";
import type { MessageFacts } from "../messages/adapter.js";
import { answers, calls, fact } from "../testing/facts.js";
import { checkCut } from "./check-cut.js";
import { findCutPoint } from "./find-cut-point.js";
import { isCutPoint } from "./turns.js";
import type { MessageView } from "./message-view.js";

const view = (facts: MessageFacts[], tokens?: number[]): MessageView => ({ facts, tokens: tokens ?? facts.map(() => 10) });
const check = (v: MessageView, firstKeptIndex: number, budget = Number.POSITIVE_INFINITY) =>
  checkCut(v, { firstKeptIndex }, { plugin: "p", budget });

// user, assistant(call a), result a, assistant, user, assistant(calls b,c), result b, result c, assistant
const convo = () =>
  view([
    fact("user"),
    fact("assistant", calls("a")),
    fact("toolResult", answers("a")),
    fact("assistant"),
    fact("user"),
    fact("assistant", calls("b", "c")),
    fact("toolResult", answers("b")),
    fact("toolResult", answers("c")),
    fact("assistant"),
  ]);

describe("checkCut rules", () => {
  it.each([
    // [proposed, firstKept after repair, isSplitTurn, turnStartIndex, repaired]
    [0, 0, false, -1, false],
    [1, 1, true, 0, false],
    [2, 1, true, 0, true],
    [3, 3, true, 0, false],
    [4, 4, false, -1, false],
    // 4 is the newest user message: a cut past it preserves it, so 5 splits no turn.
    [6, 5, false, -1, true],
    [7, 5, false, -1, true],
    [8, 8, true, 4, false],
    [9, 9, false, -1, false],
  ])("cut proposed at %i keeps from %i (split turn %s at %i, repaired %s)", (proposed, kept, split, turnStart, repaired) => {
    const cut = check(convo(), proposed);
    expect(cut.firstKeptIndex).toBe(kept);
    expect(cut.isSplitTurn).toBe(split);
    expect(cut.turnStartIndex).toBe(turnStart);
    expect(cut.repairs.length > 0).toBe(repaired);
  });

  it("preserves the system prompt before the cut", () => {
    const v = view([fact("system"), fact("user"), fact("assistant"), fact("user"), fact("assistant")]);
    const cut = check(v, 3);
    expect(cut.preservedIndices).toEqual([0]);
    expect(cut.compactedIndices).toEqual([1, 2]);
  });

  it("preserves a pinned tool result together with the call that issued it and the call's other results", () => {
    const v = view([
      fact("user"),
      fact("assistant", calls("x", "y")),
      fact("toolResult", { ...answers("x"), pinned: true }),
      fact("toolResult", answers("y")),
      fact("user"),
      fact("assistant"),
    ]);
    const cut = check(v, 4);
    expect(cut.preservedIndices).toEqual([1, 2, 3]);
    expect(cut.compactedIndices).toEqual([0]);
  });

  it("refuses a cut that is not a whole index in range, naming the plugin", () => {
    for (const bad of [-1, 10, 1.5, Number.NaN]) {
      expect(() => check(convo(), bad)).toThrow(expect.objectContaining({ code: ErrorCodes.CUT_REFUSED, plugin: "p" }));
    }
  });

  it("refuses a cut whose kept part is over the budget", () => {
    expect(() => check(convo(), 4, 49)).toThrow(/keeps 50 tokens verbatim, more than the budget of 49/);
    expect(check(convo(), 4, 50).keptTokens).toBe(50);
  });

  it("pairs a reused tool-call id with the nearest earlier call, not the first one", () => {
    // Some OpenAI-compatible servers send call_0 on every turn.
    const v = view([
      fact("user"),
      fact("assistant", calls("call_0")),
      fact("toolResult", answers("call_0")),
      fact("user"),
      fact("assistant", calls("call_0")),
      fact("toolResult", answers("call_0")),
    ]);
    const cut = check(v, 4);
    expect(cut.firstKeptIndex).toBe(4);
    expect(cut.repairs).toEqual([]);
    expect(check(v, 5).firstKeptIndex).toBe(4);
  });

  it("keeps a tool result without an id (OpenAI's function role) with the assistant message before it", () => {
    const v = view([fact("user"), fact("assistant"), fact("toolResult"), fact("assistant")]);
    expect(check(v, 2).firstKeptIndex).toBe(1);
  });

  it("describes a cut that is not an object", () => {
    expect(() => checkCut(convo(), 3 as never, { plugin: "p", budget: 100 })).toThrow(/returned a cut with a number \(3\)/);
  });

  it("counts kept and compacted tokens", () => {
    const cut = check(view([fact("user"), fact("assistant"), fact("user")], [5, 7, 11]), 2);
    expect(cut.keptTokens).toBe(11);
    expect(cut.compactedTokens).toBe(12);
  });
});

describe("findCutPoint", () => {
  it.each([
    // tokens per message of convo(), keepRecentTokens, expected firstKeptIndex
    [[10, 10, 10, 10, 10, 10, 10, 10, 10], 1000, 0],
    [[10, 10, 10, 10, 10, 10, 10, 10, 10], 50, 4],
    [[10, 10, 10, 10, 10, 10, 10, 10, 10], 45, 5],
    [[10, 10, 10, 10, 10, 10, 10, 10, 10], 10, 8],
    [[10, 10, 10, 10, 10, 10, 10, 10, 500], 10, 8],
    [[10, 10, 10, 10, 10, 10, 10, 10, 10], 0, 8],
  ])("with tokens %j and keepRecentTokens %i cuts at %i", (tokens, keep, expected) => {
    expect(findCutPoint(view(convo().facts as MessageFacts[], tokens), { keepRecentTokens: keep }).firstKeptIndex).toBe(expected);
  });

  it("never cuts at a tool result", () => {
    // keeping 35 tokens would start at index 6 (a tool result); the nearest valid point after it is 8
    expect(findCutPoint(convo(), { keepRecentTokens: 35 }).firstKeptIndex).toBe(8);
  });

  it("keeps at least minKeepMessages even past keepRecentTokens", () => {
    expect(findCutPoint(convo(), { keepRecentTokens: 10, minKeepMessages: 5 }).firstKeptIndex).toBe(4);
  });

  it("keeps everything when everything fits, whatever minKeepMessages says", () => {
    const v = view([fact("toolResult", answers("x")), fact("user"), fact("assistant")]);
    expect(findCutPoint(v, { keepRecentTokens: 1000, minKeepMessages: 5 }).firstKeptIndex).toBe(0);
  });

  it("rejects a keepRecentTokens that is not a number of 0 or more", () => {
    expect(() => findCutPoint(convo(), { keepRecentTokens: Number.NaN })).toThrow(expect.objectContaining({ code: ErrorCodes.INPUT_INVALID }));
    expect(() => findCutPoint(convo(), { keepRecentTokens: -1 })).toThrow(/keepRecentTokens of 0 or more/);
  });

  it("does not cut before startIndex", () => {
    expect(findCutPoint(convo(), { keepRecentTokens: 1000, startIndex: 3 }).firstKeptIndex).toBe(3);
  });
});

/** Random conversations: turns of a user message and assistant steps, some with tool calls. */
const arbConversation = fc
  .array(
    fc.record({
      steps: fc.array(fc.record({ calls: fc.integer({ min: 0, max: 3 }), tokens: fc.integer({ min: 0, max: 50 }) }), {
        maxLength: 4,
      }),
      userTokens: fc.integer({ min: 1, max: 50 }),
      pinned: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
      system: fc.boolean(),
    }),
    { maxLength: 8 },
  )
  .map((turns) => {
    const facts: MessageFacts[] = [];
    const tokens: number[] = [];
    let id = 0;
    turns.forEach((turn, t) => {
      if (t === 0 && turn.system) {
        facts.push(fact("system"));
        tokens.push(5);
      }
      let p = 0;
      // About one message in eight is pinned, user messages included.
      const pin = () => turn.pinned[p++ % turn.pinned.length] === true && turn.pinned[(p * 7) % turn.pinned.length] === true && p % 2 === 0;
      facts.push(fact("user", { pinned: pin() }));
      tokens.push(turn.userTokens);
      for (const step of turn.steps) {
        const ids = Array.from({ length: step.calls }, () => `t${id++}`);
        facts.push(fact("assistant", { ...calls(...ids), pinned: pin() }));
        tokens.push(step.tokens);
        for (const callId of ids) {
          facts.push(fact("toolResult", { ...answers(callId), pinned: pin() }));
          tokens.push(step.tokens + 1);
        }
      }
    });
    return view(facts, tokens);
  });

function keptSet(cut: ReturnType<typeof check>, n: number): Set<number> {
  const kept = new Set(cut.preservedIndices);
  for (let i = cut.firstKeptIndex; i < n; i++) kept.add(i);
  return kept;
}

describe("cut invariants (property)", () => {
  it("no kept tool result is orphaned and no kept call loses its result, for any proposed cut", () => {
    fc.assert(
      fc.property(arbConversation, fc.nat(), (v, seed) => {
        const n = v.facts.length;
        const cut = check(v, seed % (n + 1));
        const kept = keptSet(cut, n);
        const owner = new Map<string, number>();
        v.facts.forEach((f, i) => f.toolCalls.forEach((c) => owner.set(c.id, i)));
        for (const i of kept) {
          const f = v.facts[i] as MessageFacts;
          for (const id of f.toolResultIds) expect(kept.has(owner.get(id) as number)).toBe(true);
          for (const c of f.toolCalls) {
            v.facts.forEach((g, j) => {
              if (g.toolResultIds.includes(c.id)) expect(kept.has(j)).toBe(true);
            });
          }
        }
      }),
    );
  });

  it("keeps a contiguous suffix plus pinned and system messages, and nothing pinned is compacted", () => {
    fc.assert(
      fc.property(arbConversation, fc.nat(), (v, seed) => {
        const n = v.facts.length;
        const cut = check(v, seed % (n + 1));
        expect(cut.firstKeptIndex).toBeLessThanOrEqual(seed % (n + 1));
        for (const i of cut.compactedIndices) {
          expect(i).toBeLessThan(cut.firstKeptIndex);
          expect(v.facts[i]?.pinned).toBe(false);
          expect(v.facts[i]?.kind).not.toBe("system");
        }
        expect(cut.preservedIndices.length + cut.compactedIndices.length).toBe(cut.firstKeptIndex);
      }),
    );
  });

  it("meets the budget or refuses with CUT_REFUSED", () => {
    fc.assert(
      fc.property(arbConversation, fc.nat(), fc.integer({ min: 0, max: 400 }), (v, seed, budget) => {
        const n = v.facts.length;
        const unlimited = check(v, seed % (n + 1));
        try {
          const cut = check(v, seed % (n + 1), budget);
          expect(cut.keptTokens).toBeLessThanOrEqual(budget);
        } catch (error) {
          expect(error).toMatchObject({ code: ErrorCodes.CUT_REFUSED });
          expect(unlimited.keptTokens).toBeGreaterThan(budget);
        }
      }),
    );
  });

  it("findCutPoint keeps the largest valid suffix within keepRecentTokens whenever one fits", () => {
    fc.assert(
      fc.property(arbConversation, fc.integer({ min: 0, max: 300 }), (v, keep) => {
        const n = v.facts.length;
        const suffix = (i: number) => v.tokens.slice(i).reduce((a, b) => a + b, 0);
        const valid = (i: number) => isCutPoint(v.facts[i] as MessageFacts);
        const { firstKeptIndex } = findCutPoint(v, { keepRecentTokens: keep });
        const fits = suffix(0) <= keep || v.facts.some((_, i) => valid(i) && suffix(i) <= keep);
        if (fits) expect(suffix(firstKeptIndex)).toBeLessThanOrEqual(keep);
        if (firstKeptIndex > 0 && firstKeptIndex < n) expect(valid(firstKeptIndex)).toBe(true);
        for (let j = 1; j < firstKeptIndex; j++) if (valid(j)) expect(suffix(j)).toBeGreaterThan(keep);
      }),
    );
  });
});
