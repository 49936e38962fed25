/** Invariants of every layered compaction, on generated conversations in every format. */
import { checkCut, type CompactionTrigger } from "@compaction/core";
import { builders, FORMATS, type Format } from "@compaction/core/testing";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { layered } from "./layered.js";
import { compactorFor, text } from "./test-support/conversation.js";

interface Step {
  readonly textTokens: number;
  readonly outputs: readonly { readonly tokens: number; readonly isError: boolean }[];
}
interface Turn {
  readonly userTokens: number;
  readonly steps: readonly Step[];
  readonly answerTokens: number;
}
interface Case {
  readonly turns: readonly Turn[];
  readonly pins: readonly number[];
  readonly ratio: number;
  readonly trigger: CompactionTrigger;
}

const stepArb = fc.record({
  textTokens: fc.integer({ min: 0, max: 150 }),
  outputs: fc.array(fc.record({ tokens: fc.integer({ min: 1, max: 1500 }), isError: fc.boolean() }), { minLength: 1, maxLength: 3 }),
});
const turnArb = fc.record({
  userTokens: fc.integer({ min: 1, max: 300 }),
  steps: fc.array(stepArb, { maxLength: 3 }),
  answerTokens: fc.integer({ min: 1, max: 300 }),
});
const caseArb: fc.Arbitrary<Case> = fc.record({
  turns: fc.array(turnArb, { minLength: 1, maxLength: 8 }),
  pins: fc.array(fc.nat(), { maxLength: 3 }),
  ratio: fc.oneof(fc.double({ min: 0.5, max: 1.3, noNaN: true }), fc.double({ min: 1.3, max: 3, noNaN: true })),
  trigger: fc.constantFrom<CompactionTrigger>("auto", "manual"),
});

/** Small token amounts so every layer is reached by conversations of a few thousand tokens. */
const SCALED = {
  pruneMinToolTokens: 500,
  pruneProtectTokens: 800,
  pruneMinSavings: 200,
  summarizeProtectTokens: 600,
  summaryMaxTokens: 100,
};

function build(format: Format, c: Case): unknown[] {
  const b = builders(format);
  const messages: unknown[] = [];
  let id = 0;
  for (const turn of c.turns) {
    messages.push(b.user(text(turn.userTokens, "ask")));
    for (const step of turn.steps) {
      const calls = step.outputs.map(() => ({ id: `call_${id++}`, name: "bash", args: { command: `step ${id}` } }));
      messages.push(b.assistant(text(step.textTokens, "say"), calls));
      messages.push(...b.toolResults(step.outputs.map((o, k) => ({ id: (calls[k] as { id: string }).id, text: text(o.tokens, "out"), isError: o.isError }))));
    }
    messages.push(b.assistant(text(turn.answerTokens, "end")));
  }
  for (const pin of c.pins) {
    const at = pin % messages.length;
    messages[at] = b.pin(messages[at]);
  }
  return messages;
}

describe.each(FORMATS)("layered invariants (%s)", (format) => {
  async function compact(c: Case) {
    const messages = build(format, c);
    const before = structuredClone(messages);
    const compactor = compactorFor(format, [layered(SCALED)]);
    const window = Math.max(1, Math.round(compactor.tokens.total(messages) / c.ratio));
    const result = await compactor.compact({ messages, contextWindow: window, trigger: c.trigger });
    return { compactor, messages, before, window, result };
  }

  it("never leaves a tool result without its call", async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const { compactor, result } = await compact(c);
        const issued = new Set<string>();
        for (const m of result.messages) {
          const f = compactor.facts.of(m);
          for (const id of f.toolResultIds) expect(issued.has(id)).toBe(true);
          for (const call of f.toolCalls) issued.add(call.id);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("keeps every pinned message, unchanged", async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const { compactor, messages, result } = await compact(c);
        const out = new Set(result.messages);
        for (const m of messages) if (compactor.facts.of(m).pinned) expect(out.has(m)).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it("keeps the verbatim part within the budget", async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const { window, result } = await compact(c);
        if (result.cut) expect(result.cut.keptTokens).toBeLessThanOrEqual(window);
      }),
      { numRuns: 150 },
    );
  });

  it("meets the budget, summary included, whenever the pinned messages, the newest message and a summary fit", async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const { compactor, messages, window, result } = await compact(c);
        const view = { facts: messages.map((m) => compactor.facts.of(m)), tokens: messages.map((m) => compactor.tokens.count(m)) };
        const preserved = checkCut(view, { firstKeptIndex: messages.length }, { plugin: "test", budget: Infinity }).keptTokens;
        // The newest turn is kept from its request on (the core never compacts the newest user
        // message; it shrinks long messages of that turn, not short ones): that is the least kept.
        const newest = view.facts.findLastIndex((facts) => facts.kind === "user");
        const minimalKept = compactor.tokens.total(messages.slice(Math.max(0, newest)));
        fc.pre(preserved + minimalKept + SCALED.summaryMaxTokens <= window);
        expect(result.status).not.toBe("failed");
        if (result.status === "compacted" && result.cut) expect(result.tokensAfter).toBeLessThanOrEqual(window);
        if (c.ratio > 0.95) expect(result.tokensAfter).toBeLessThanOrEqual(window);
      }),
      { numRuns: 150 },
    );
  });

  it("never changes the input messages, and returns them untouched unless it compacted", async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const { messages, before, result } = await compact(c);
        expect(messages).toEqual(before);
        if (result.status !== "compacted") expect(result.messages).toBe(messages);
      }),
      { numRuns: 100 },
    );
  });

  it("names the layer that ran in the event of every compaction", async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const { result } = await compact(c);
        // "fit" and "shrink": the core cut or shrank a context over the budget itself (issue 10).
        if (result.status === "compacted") expect(["prune", "summarize", "full", "fit", "shrink"]).toContain(result.event?.layer);
        if (result.cut) expect(result.event?.layer).toBe(result.cut.layer);
      }),
      { numRuns: 100 },
    );
  });
});
