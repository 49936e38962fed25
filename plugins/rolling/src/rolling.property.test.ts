/**
 * Properties of rolling on every adapter, for random conversations: the target is met whenever
 * some cut can meet it (checked against the core's own cut check), no tool call is separated
 * from its results, system and pinned messages stay, and the newest minKeepMessages stay.
 */
import { createEstimateCounter, FactsCache, MessageTokenCounter, type MessageView } from "@compaction/core";
import { builders, FORMATS } from "@compaction/core/testing";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evictedNames, formatEvictionNote, noteNameLimits } from "./eviction-note.js";
import { rolling } from "./rolling.js";
import { rollingEvict } from "./rolling-evict.js";
import { arbConversation, buildConversation, invariantProblems, smallestCutMeetingTarget } from "./test-support/conversations.js";
import { compactorFor, fakeRecall } from "./test-support/setup.js";

const LONGEST_ISO_TIME = new Date(8.64e15).toISOString();

/** The window is a share (30–150%) of the conversation's tokens, so some targets fit, some need a cut, some cannot be met. */
const arbSettings = fc.record({
  windowPercent: fc.integer({ min: 30, max: 150 }),
  targetUtilization: fc.integer({ min: 30, max: 100 }).map((p) => p / 100),
  minKeepMessages: fc.integer({ min: 0, max: 12 }),
  evictionNote: fc.boolean(),
});
const RUNS = { numRuns: 200 };

const windowFor = (view: MessageView, percent: number) =>
  Math.max(1, Math.floor((view.tokens.reduce((a, b) => a + b, 0) * percent) / 100));

describe.each(FORMATS)("rolling properties on the %s adapter", (format) => {
  const { adapter } = builders(format);
  /**
   * `output` with each shrunk copy replaced by the message it was made from (mapText changes only
   * the text: kind, tool-call ids and pin stay), so identity checks see what was kept.
   */
  const withOriginals = (input: readonly unknown[], output: readonly unknown[], shrunk: readonly { readonly index: number }[]): unknown[] => {
    const pending = shrunk.map((x) => input[x.index]);
    const inInput = new Set(input);
    const key = (m: unknown) => {
      const f = adapter.readFacts(m);
      return JSON.stringify([f.kind, f.pinned, f.toolResultIds, f.toolCalls.map((c) => c.id), f.id ?? null]);
    };
    return output.map((m) => {
      if (inInput.has(m)) return m;
      const at = pending.findIndex((original) => key(original) === key(m));
      if (at < 0) return m;
      const [original] = pending.splice(at, 1);
      return original;
    });
  };
  const counter = () => new MessageTokenCounter(new FactsCache(adapter), createEstimateCounter());
  const viewOf = (messages: readonly unknown[]): MessageView => {
    const c = counter();
    return { facts: messages.map((m) => adapter.readFacts(m)), tokens: messages.map((m) => c.count(m)) };
  };

  it("rollingEvict meets the target whenever a cut can, with the fewest evictions, and keeps every invariant", () => {
    fc.assert(
      fc.property(arbConversation, arbSettings, (spec, s) => {
        const messages = buildConversation(format, spec);
        const n = messages.length;
        const view = viewOf(messages);
        const window = windowFor(view, s.windowPercent);
        const result = rollingEvict({ messages, maxContextTokens: window, targetUtilization: s.targetUtilization, minKeepMessages: s.minKeepMessages, adapter });
        const target = Math.floor(window * s.targetUtilization);
        expect(invariantProblems(adapter, messages, result.kept)).toEqual([]);
        expect(result.kept.length + result.evicted.length).toBe(n);
        expect(result.evicted.every((m) => !result.kept.includes(m))).toBe(true);
        expect(result.kept.slice(result.kept.length - Math.min(s.minKeepMessages, n))).toEqual(messages.slice(n - Math.min(s.minKeepMessages, n)));
        expect(result.keptTokens + result.evictedTokens).toBe(view.tokens.reduce((a, b) => a + b, 0));
        const best = smallestCutMeetingTarget(view, { targetTokens: target, minKeepMessages: s.minKeepMessages });
        if (best === null) expect(result.evictedCount).toBe(0);
        if (best !== undefined) {
          expect(result.targetMet).toBe(true);
          expect(result.keptTokens).toBeLessThanOrEqual(target);
          expect(result.firstKeptIndex).toBe(best ?? 0);
        } else {
          expect(result.targetMet).toBe(false);
        }
      }),
      RUNS,
    );
  });

  it("the plugin keeps every invariant and, whenever a cut can, brings the context (note included) to the target", async () => {
    await fc.assert(
      fc.asyncProperty(arbConversation, arbSettings, async (spec, s) => {
        const messages = buildConversation(format, spec);
        const n = messages.length;
        const view = viewOf(messages);
        const window = windowFor(view, s.windowPercent);
        const compactor = compactorFor(format, [rolling({ targetUtilization: s.targetUtilization, minKeepMessages: s.minKeepMessages, evictionNote: s.evictionNote }), fakeRecall()], {
          contextWindow: window,
        });
        const result = await compactor.compact({ messages });
        // Failed only when what must stay cannot be brought under the budget even by shrinking (issue 10).
        if (result.status === "failed") expect(result.error?.code).toBe("COMPACTION_CONTEXT_OVERFLOW");
        else expect(["compacted", "noop"]).toContain(result.status);
        // Messages the core shrank to head and tail are there as shortened copies: check the
        // invariants on the originals they stand for.
        expect(invariantProblems(adapter, messages, withOriginals(messages, result.messages, result.shrunk ?? []))).toEqual([]);
        const shrunk = new Set((result.shrunk ?? []).map((x) => messages[x.index]));
        const present = (m: unknown) => result.messages.includes(m) || shrunk.has(m);
        const newest = messages.slice(n - Math.min(s.minKeepMessages, n));
        // When rolling declines and the context is over the budget, the core cuts at the newest user message itself.
        if (result.cut?.selectedBy !== "core") expect(newest.every(present)).toBe(true);

        const total = view.tokens.reduce((a, b) => a + b, 0);
        const target = Math.floor(window * s.targetUtilization);
        const worstNote = formatEvictionNote({ count: n, tokens: total, firstTimestamp: LONGEST_ISO_TIME, lastTimestamp: LONGEST_ISO_TIME, names: evictedNames(view.facts, noteNameLimits(target)) });
        const noteTokens = s.evictionNote ? counter().count(adapter.createNote(worstNote)) : 0;
        const best = smallestCutMeetingTarget(view, { targetTokens: target, minKeepMessages: s.minKeepMessages, noteTokens });
        if (best === null) expect(result.status).toBe("noop");
        if (typeof best === "number") {
          expect(result.status).toBe("compacted");
          expect(result.tokensAfter).toBeLessThanOrEqual(target);
        }
        if (result.status === "compacted") {
          const evicted = messages.filter((m) => !present(m));
          const notes = result.messages.filter((m) => !messages.includes(m));
          // A note only when something was evicted (a run that only shrank in place writes none).
          const noted = s.evictionNote && evicted.length > 0;
          expect(notes).toHaveLength((noted ? 1 : 0) + shrunk.size);
          if (noted) expect(result.summary).toMatch(new RegExp(`^\\[Context rolled: ${evicted.length} messages evicted \\(${counter().total(evicted)} tokens\\)`));
        }
      }),
      RUNS,
    );
  });
});
