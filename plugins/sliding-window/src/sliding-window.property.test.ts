import { alwaysKept, type CompactionPlugin, type Compactor, ErrorCodes, type MessageFacts, lastUserIndex, STAGE_STRATEGY, usableWindow } from "@compaction/core";
import { FORMATS, type Format, builders, recordDrafts } from "@compaction/core/testing";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { keepTokensFor } from "./select-cut.js";
import { compactorFor } from "./test-support/compactor.js";
import { type TurnSpec, conversation } from "./test-support/conversation.js";

const arbTurn: fc.Arbitrary<TurnSpec> = fc.record({
  userWords: fc.integer({ min: 1, max: 150 }),
  steps: fc.array(
    fc.record({
      words: fc.integer({ min: 0, max: 150 }),
      calls: fc.integer({ min: 0, max: 2 }),
      resultWords: fc.integer({ min: 1, max: 300 }),
    }),
    { maxLength: 3 },
  ),
  pinned: fc.constantFrom(false, false, false, false, false, true),
});

const arbCase = fc.record({
  turns: fc.array(arbTurn, { minLength: 1, maxLength: 8 }),
  system: fc.boolean(),
  contextWindow: fc.integer({ min: 40, max: 5000 }),
  reserveShare: fc.constantFrom(0, 0, 0.1, 0.5),
  keepRatio: fc.oneof(fc.constant(0.4), fc.double({ min: 0.05, max: 1, noNaN: true })),
});

/**
 * Records what the run keeps for a context larger than the window (`run.overWindowKeepTokens`
 * beside a summary of the compactor's size; 0 for a regular compaction), read before the
 * strategy's cut.
 */
function recordOverWindowKeep(): CompactionPlugin & { keep: number | undefined } {
  const plugin = {
    name: "record-over-window-keep",
    keep: undefined as number | undefined,
    apply(compactor: Compactor<any>) {
      compactor.hooks.selectCut.tap({ name: plugin.name, stage: STAGE_STRATEGY - 1 }, (run) => {
        plugin.keep = run.overWindowKeepTokens(run.summaryMaxTokens + run.summaryOverheadTokens);
        return undefined;
      });
    },
  };
  return plugin;
}

type Case = typeof arbCase extends fc.Arbitrary<infer C> ? C : never;

/** Compacts one generated case and gathers what the properties look at. */
async function runCase(format: Format, c: Case) {
  const b = builders(format);
  const messages = conversation(b, c.turns, c.system ? "You are a careful agent." : undefined);
  const record = recordDrafts();
  const overWindow = recordOverWindowKeep();
  const compactor = compactorFor(format, { options: { keepRatio: c.keepRatio }, plugins: [record, overWindow] });
  const reserveTokens = Math.floor(c.contextWindow * c.reserveShare);
  const result = await compactor.compact({ messages, contextWindow: c.contextWindow, reserveTokens });
  const facts: MessageFacts[] = messages.map((m) => b.adapter.readFacts(m));
  const tokens = messages.map((m) => compactor.tokens.count(m));
  const suffix = (i: number) => tokens.slice(i).reduce((a, t) => a + t, 0);
  const lastUser = lastUserIndex(facts);
  const budget = c.contextWindow - reserveTokens;
  // keepRatio is a share of the usable window (less than the window when the reserve takes over a tenth of it).
  // A context larger than the window keeps up to what the run's target leaves, when that is more.
  const share = keepTokensFor(usableWindow(c.contextWindow, reserveTokens), budget - alwaysKept({ facts, tokens }).tokens, c.keepRatio);
  const keep = Math.max(share, overWindow.keep ?? 0);
  const room = budget - alwaysKept({ facts, tokens }).tokens;
  return { b, compactor, drafts: record.drafts, messages, result, facts, suffix, lastUser, keep, overWindowKeep: overWindow.keep ?? 0, room, lastTurnFits: suffix(lastUser) <= keep };
}

describe.each(FORMATS)("sliding-window invariants on the %s adapter (property)", (format) => {
  it("keeps at most keepRatio of the window verbatim (or, over the window, what the target leaves) whenever the newest turn fits in it", async () => {
    await fc.assert(
      fc.asyncProperty(arbCase, async (c) => {
        const { result, keep, overWindowKeep, lastTurnFits, suffix } = await runCase(format, c);
        if (result.status !== "compacted" || !lastTurnFits || !result.cut) return;
        expect(suffix(result.cut.firstKeptIndex)).toBeLessThanOrEqual(keep);
        expect(keep).toBeLessThanOrEqual(Math.max(c.contextWindow * c.keepRatio, overWindowKeep));
        if (result.tokensBefore <= c.contextWindow) expect(overWindowKeep).toBe(0);
      }),
    );
  });

  it("keeps as many of the newest messages as fit: the next older valid cut point would not fit", async () => {
    await fc.assert(
      fc.asyncProperty(arbCase, async (c) => {
        const { result, facts, suffix, keep, lastTurnFits } = await runCase(format, c);
        if (result.status !== "compacted" || !lastTurnFits || !result.cut) return;
        let older = result.cut.firstKeptIndex - 1;
        while (older >= 0 && (facts[older]?.kind === "toolResult" || facts[older]?.kind === "system")) older--;
        if (older >= 0) expect(suffix(older)).toBeGreaterThan(keep);
      }),
    );
  });

  it("warns exactly when it keeps more than the share", async () => {
    await fc.assert(
      fc.asyncProperty(arbCase, async (c) => {
        const { result, suffix, keep, lastUser } = await runCase(format, c);
        // A cut the core chose (the plugin declined: one turn, over the budget) has no warning of the plugin's.
        if (!result.cut || result.cut.selectedBy !== "sliding-window") return;
        const warned = result.warnings.some((w) => w.startsWith("[sliding-window] The newest turn needs"));
        // The plugin keeps the newest turn from its user message; the core may then split it (a
        // turn larger than the budget): the plugin's warning is about the turn it kept.
        const split = lastUser >= 0 && result.cut.firstKeptIndex > lastUser;
        expect(warned).toBe(suffix(split ? lastUser : result.cut.firstKeptIndex) > keep);
      }),
    );
  });

  it("keeps the last user message, and everything after it unless the turn alone is over what the budget leaves (then split, its request ahead of the summary), shrunk to head and tail where they do not fit", async () => {
    await fc.assert(
      fc.asyncProperty(arbCase, async (c) => {
        const { result, messages, facts, lastUser } = await runCase(format, c);
        // A pinned request is preserved wherever the cut falls (the pinned-message rule).
        if (lastUser < 0 || facts[lastUser]?.pinned === true) return;
        const shrunk = new Set((result.shrunk ?? []).map((x) => x.index));
        const split = result.status === "compacted" && result.cut !== null && result.cut.firstKeptIndex > lastUser;
        const from = split ? result.cut!.firstKeptIndex : lastUser;
        const tail = messages.slice(from);
        const kept = result.messages.slice(-tail.length);
        tail.forEach((m, k) => {
          if (!shrunk.has(from + k)) expect(kept[k]).toBe(m);
        });
        if (!split) return;
        // The request stays ahead of the summary, verbatim or cut to head and tail.
        expect(result.cut!.preservedIndices).toContain(lastUser);
        const at = result.cut!.preservedIndices.indexOf(lastUser);
        if (!shrunk.has(lastUser)) expect(result.messages[at]).toBe(messages[lastUser]);
        expect(result.warnings.some((w) => w.includes("inside the newest turn") || w.includes("the newest turn's last step"))).toBe(true);
      }),
    );
  });

  it("never leaves a tool result without its call, or a call without its results", async () => {
    await fc.assert(
      fc.asyncProperty(arbCase, async (c) => {
        const { result, b } = await runCase(format, c);
        const facts = result.messages.map((m) => b.adapter.readFacts(m));
        const calls = new Set(facts.flatMap((f) => f.toolCalls.map((call) => call.id)));
        const answered = new Set(facts.flatMap((f) => f.toolResultIds));
        for (const id of answered) expect(calls.has(id)).toBe(true);
        for (const id of calls) expect(answered.has(id)).toBe(true);
      }),
    );
  });

  it("never leaves fewer than 3 messages with a system prompt (system, summary, last user message), else 2", async () => {
    await fc.assert(
      fc.asyncProperty(arbCase, async (c) => {
        const { result, messages, facts } = await runCase(format, c);
        const minimum = facts.some((f) => f.kind === "system") ? 3 : 2;
        expect(result.messages.length).toBeGreaterThanOrEqual(Math.min(minimum, messages.length));
      }),
    );
  });

  it("keeps the system prompt first and every pinned message", async () => {
    await fc.assert(
      fc.asyncProperty(arbCase, async (c) => {
        const { result, messages, facts } = await runCase(format, c);
        if (facts[0]?.kind === "system") expect(result.messages[0]).toBe(messages[0]);
        messages.forEach((m, i) => {
          if (facts[i]?.pinned) expect(result.messages).toContain(m);
        });
      }),
    );
  });

  it("writes exactly one summary message, beginning 'Previously:', when it compacts", async () => {
    await fc.assert(
      fc.asyncProperty(arbCase, async (c) => {
        const { result, b } = await runCase(format, c);
        // A context with nothing to cut is shrunk in place, with no summary (result.cut null).
        if (result.status !== "compacted" || result.cut === null) return;
        const summaries = result.messages.map((m) => b.adapter.readFacts(m)).filter((f) => f.kind === "summary");
        expect(summaries).toHaveLength(1);
        expect(summaries[0]?.text.startsWith("Previously:")).toBe(true);
      }),
    );
  });

  it("compacts whenever an unpinned older turn lies outside the share and the newest turn fits, unless its summary would be no smaller than what it drops; fails only when it does not fit", async () => {
    await fc.assert(
      fc.asyncProperty(arbCase, async (c) => {
        const { compactor, drafts, result, messages, facts, suffix, lastUser, keep, lastTurnFits } = await runCase(format, c);
        const olderOutside = facts.some((f, i) => i < lastUser && f.kind === "user" && !f.pinned && suffix(i) > keep);
        if (result.status === "noop" && drafts.length > 0) {
          // The core refused it: the summary drafted for the cut is no smaller than the messages
          // it would replace (a turn of a few words against a window of 40), so the context would not shrink.
          const [draft] = drafts;
          expect(result.reason).toMatch(/^The summary \(\d+ tokens\) would not be smaller than/);
          const replaced = compactor.tokens.total(draft!.compactedIndices.map((i) => messages[i]));
          expect(compactor.tokens.count(compactor.adapter.createSummary(draft!.text))).toBeGreaterThanOrEqual(replaced);
        } else if (olderOutside && lastTurnFits) expect(result.status).toBe("compacted");
        if (result.status === "compacted") expect(result.tokensAfter).toBeLessThan(result.tokensBefore);
        if (result.status === "failed") {
          // Failed only when even the shrunk newest turn, or the preserved messages, pass the budget.
          expect(result.error?.code).toBe(ErrorCodes.CONTEXT_OVERFLOW);
          expect(lastTurnFits).toBe(false);
        }
        if (result.status !== "compacted") expect(result.messages).toBe(messages);
      }),
    );
  });
});
