import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FactsCache, type MessageAdapter } from "../messages/adapter.js";
import { createAnthropicAdapter } from "../messages/anthropic-adapter.js";
import { createOpenAIAdapter } from "../messages/openai-adapter.js";
import { createPiAdapter } from "../messages/pi-adapter.js";
import { builders, FORMATS, type Format } from "../testing/builders.js";
import { checkCut } from "./check-cut.js";
import type { MessageView } from "./message-view.js";
import { toolPairs } from "./message-view.js";
import { alwaysKept, keptRoom, preservedBefore, safeCuts } from "./structure.js";

const ADAPTERS: Record<Format, () => MessageAdapter<any>> = { pi: createPiAdapter, openai: createOpenAIAdapter, anthropic: createAnthropicAdapter };

function viewOf(format: Format, messages: readonly unknown[], tokens: readonly number[]): MessageView {
  const facts = new FactsCache(ADAPTERS[format]());
  return { facts: messages.map((m) => facts.of(m)), tokens };
}

describe("alwaysKept", () => {
  it("counts the system prompt and pinned messages, wherever they are", () => {
    const b = builders("openai");
    const messages = [b.system("sys"), b.user("a"), b.pin(b.assistant("b")), b.user("c"), b.pin(b.user("d"))];
    expect(alwaysKept(viewOf("openai", messages, [100, 1, 20, 1, 3]))).toEqual({ indices: [0, 2, 4], tokens: 123 });
  });

  it("is nothing when nothing is system or pinned", () => {
    const b = builders("pi");
    expect(alwaysKept(viewOf("pi", [b.user("a"), b.assistant("b")], [5, 5]))).toEqual({ indices: [], tokens: 0 });
  });

  it.each(FORMATS)("keeps a pinned call's results with it (%s)", (format) => {
    const b = builders(format);
    const messages = [b.user("go"), b.pin(b.assistant("", [{ id: "c1" }])), ...b.toolResults([{ id: "c1", text: "out" }]), b.user("next")];
    const view = viewOf(format, messages, messages.map(() => 10));
    expect(alwaysKept(view).indices).toEqual([1, 2]);
  });
});

describe("keptRoom", () => {
  it("is the budget less the summary when nothing is always kept", () => {
    expect(keptRoom(viewOf("pi", [builders("pi").user("a")], [10]), { budget: 1000, summaryTokens: 200 })).toBe(800);
  });

  it("leaves room for the summary and the system and pinned messages", () => {
    const b = builders("openai");
    const view = viewOf("openai", [b.system("s"), b.pin(b.user("p")), b.user("u")], [30, 20, 10]);
    expect(keptRoom(view, { budget: 500, summaryTokens: 200 })).toBe(250);
  });

  it("is never negative", () => {
    const b = builders("openai");
    expect(keptRoom(viewOf("openai", [b.system("s")], [900]), { budget: 500, summaryTokens: 200 })).toBe(0);
  });
});

/** A conversation whose every turn calls a tool with the same id, as some OpenAI-compatible servers do. */
function reusedIds(format: Format, turns: number) {
  const b = builders(format);
  const messages: unknown[] = [];
  for (let t = 0; t < turns; t++) {
    messages.push(b.user(`step ${t}`), b.assistant("", [{ id: "call_0" }]), ...b.toolResults([{ id: "call_0", text: `out ${t}` }]), b.assistant(`done ${t}`));
  }
  return messages;
}

describe("safeCuts", () => {
  it.each(FORMATS)("with ids reused every turn, blocks only the cuts inside each call/result pair (%s)", (format) => {
    const messages = reusedIds(format, 3);
    const view = viewOf(format, messages, messages.map(() => 1));
    // Each turn is user, call, result, reply: only the cut keeping the result without its call is unsafe.
    expect(safeCuts(view)).toEqual([true, true, false, true, true, true, false, true, true, true, false, true, true]);
  });

  it("agrees with checkCut: a cut is safe exactly when the check leaves it where it is", () => {
    fc.assert(
      fc.property(fc.constantFrom(...FORMATS), fc.integer({ min: 1, max: 6 }), fc.array(fc.boolean(), { maxLength: 8 }), (format, turns, reuse) => {
        const b = builders(format);
        const messages: unknown[] = [];
        for (let t = 0; t < turns; t++) {
          const id = reuse[t] === true ? "call_0" : `call_${t}`;
          messages.push(b.user(`u${t}`), b.assistant("", [{ id }, { id: `${id}_b` }]), ...b.toolResults([{ id, text: "a" }, { id: `${id}_b`, text: "b" }]));
        }
        const view = viewOf(format, messages, messages.map(() => 1));
        const safe = safeCuts(view);
        for (let k = 0; k <= messages.length; k++) {
          const checked = checkCut(view, { firstKeptIndex: k }, { plugin: "test", budget: Number.POSITIVE_INFINITY });
          expect(checked.firstKeptIndex === k, `cut ${k}`).toBe(safe[k]);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe("preservedBefore", () => {
  it("is what checkCut preserves for the same cut", () => {
    const b = builders("anthropic");
    const messages = [b.user("a"), b.pin(b.assistant("", [{ id: "t1" }])), ...b.toolResults([{ id: "t1", text: "r" }]), b.user("b"), b.assistant("c")];
    const view = viewOf("anthropic", messages, messages.map(() => 1));
    const checked = checkCut(view, { firstKeptIndex: 3 }, { plugin: "test", budget: Number.POSITIVE_INFINITY });
    expect([...preservedBefore(view, 3, toolPairs(view.facts))].sort()).toEqual(checked.preservedIndices);
  });
});
