import { ErrorCodes, type Summarizer, findCutPoint, isCutPoint, lastUserIndex } from "@compaction/core";
import { FORMATS, builders, recordDrafts } from "@compaction/core/testing";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { safeguard } from "./index.js";
import { buildConversation, conversationArb } from "./test-support/arbitrary.js";
import { compactorFor, factsOf, orphanedResults, suffixTokens } from "./test-support/conversation.js";

const RUNS = 150;

describe.each(FORMATS)("safeguard properties (%s)", (format) => {
  const b = builders(format);

  it("keeps at most keepRecentTokens verbatim whenever the newest valid suffix fits, and loses nothing", async () => {
    await fc.assert(
      fc.asyncProperty(conversationArb(), fc.integer({ min: 0, max: 800 }), async (spec, keepRecentTokens) => {
        const record = recordDrafts();
        const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens }), record] });
        const messages = buildConversation(b, spec);
        const result = await compactor.compact({ messages });
        // A summary with nothing in it (only empty messages compacted) is never written (issue 10).
        if (result.status === "failed") {
          expect(result.error?.code).toBe(ErrorCodes.SUMMARIZER_FAILED);
          expect(result.messages).toBe(messages);
          return;
        }
        expect(["compacted", "noop"]).toContain(result.status);
        const inputFacts = factsOf(compactor, messages);
        // The core never cuts past the newest user message (issue 10).
        const lastUser = inputFacts.findLastIndex((f) => f.kind === "user" && !f.pinned);
        const newestValid = Math.min(inputFacts.findLastIndex((f) => isCutPoint(f)), lastUser < 0 ? Number.POSITIVE_INFINITY : lastUser);
        const total = compactor.tokens.total(messages);
        if (result.status === "noop" && record.drafts.length > 0) {
          // A cut was summarised, and the core refused the result: the summary drafted is no
          // smaller than the messages it would replace, so the context would not have shrunk.
          const [draft] = record.drafts;
          expect(result.reason).toMatch(/^The summary \(\d+ tokens\) would not be smaller than/);
          const replaced = compactor.tokens.total(draft!.compactedIndices.map((i) => messages[i]));
          expect(compactor.tokens.count(compactor.adapter.createSummary(draft!.text))).toBeGreaterThanOrEqual(replaced);
          expect(result.messages).toBe(messages);
          return;
        }
        if (result.status === "noop") {
          // Nothing older than the allowance, or nothing outside the largest fitting suffix but
          // messages the core preserves anyway.
          const view = { facts: inputFacts, tokens: messages.map((m) => compactor.tokens.count(m)) };
          const plain = findCutPoint(view, { keepRecentTokens }).firstKeptIndex;
          const onlyPreserved = inputFacts.slice(0, Math.min(plain, newestValid)).every((f) => f.kind === "system" || f.pinned);
          expect(total <= keepRecentTokens || onlyPreserved).toBe(true);
          return;
        }
        const cut = result.cut!;
        expect(result.tokensAfter).toBeLessThan(result.tokensBefore);
        if (suffixTokens(compactor, messages, newestValid) <= keepRecentTokens) {
          expect(suffixTokens(compactor, messages, cut.firstKeptIndex)).toBeLessThanOrEqual(keepRecentTokens);
        }
        const outputFacts = factsOf(compactor, result.messages);
        expect(orphanedResults(outputFacts)).toEqual([]);
        const accounted = new Set<number>([...cut.preservedIndices, ...cut.compactedIndices]);
        for (let i = cut.firstKeptIndex; i < messages.length; i++) accounted.add(i);
        expect(accounted.size).toBe(messages.length);
        expect(result.messages).toHaveLength(cut.preservedIndices.length + 1 + messages.length - cut.firstKeptIndex);
      }),
      { numRuns: RUNS },
    );
  });

  it("keeps every pinned and system message", async () => {
    await fc.assert(
      fc.asyncProperty(conversationArb(), fc.integer({ min: 0, max: 500 }), async (spec, keepRecentTokens) => {
        const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens })] });
        const messages = buildConversation(b, spec);
        const result = await compactor.compact({ messages });
        for (const message of messages) {
          const f = compactor.facts.of(message);
          if (f.pinned || f.kind === "system") expect(result.messages).toContain(message);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("keeps the last user message verbatim, or states it in the split turn's summary", async () => {
    await fc.assert(
      fc.asyncProperty(conversationArb(), fc.integer({ min: 0, max: 500 }), async (spec, keepRecentTokens) => {
        const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens })], summaryMaxTokens: 1_000 });
        const messages = buildConversation(b, spec);
        const result = await compactor.compact({ messages });
        const lastUser = lastUserIndex(factsOf(compactor, messages));
        const message = messages[lastUser];
        if (result.messages.includes(message)) return;
        expect(result.cut?.isSplitTurn).toBe(true);
        expect(result.cut?.turnStartIndex).toBe(lastUser);
        const request = /^Request \d+:/.exec(compactor.facts.of(message).text)![0];
        expect(result.summary).toContain(request);
      }),
      { numRuns: RUNS },
    );
  });

  it("meets the budget whenever it compacts, and refuses rather than overflow", async () => {
    await fc.assert(
      fc.asyncProperty(
        conversationArb(16),
        fc.integer({ min: 100, max: 3_000 }),
        fc.integer({ min: 50, max: 400 }),
        async (spec, contextWindow, summaryMaxTokens) => {
          const compactor = compactorFor(format, {
            plugins: [safeguard({ keepRecentTokens: 20_000 })],
            contextWindow,
            summaryMaxTokens,
          });
          const messages = buildConversation(b, spec);
          const result = await compactor.compact({ messages });
          if (result.status === "compacted") expect(result.tokensAfter).toBeLessThanOrEqual(contextWindow);
          else if (result.status === "failed") {
            // Over the budget even when shrunk, or a summary with nothing in it (never written) (issue 10).
            expect([ErrorCodes.CUT_REFUSED, ErrorCodes.CONTEXT_OVERFLOW, ErrorCodes.SUMMARIZER_FAILED]).toContain(result.error?.code);
            expect(result.messages).toBe(messages);
          } else expect(result.messages).toBe(messages);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("never loses a message when the summarizer fails at any call", async () => {
    await fc.assert(
      fc.asyncProperty(
        conversationArb(),
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 30, max: 400 }),
        async (spec, keepRecentTokens, failAt, chunkTokens) => {
          const extractive = createExtractiveSummarizer();
          let calls = 0;
          const summarizer: Summarizer = {
            name: "unreliable",
            summarize: async (request) => {
              calls++;
              if (calls === failAt) throw new Error(`call ${calls} failed`);
              return extractive.summarize(request);
            },
          };
          const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens, chunkTokens })], summarizer });
          const messages = buildConversation(b, spec);
          const result = await compactor.compact({ messages });
          if (calls >= failAt) {
            expect(result.status).toBe("failed");
            expect(result.messages).toBe(messages);
            expect(result.error?.code).toBe(ErrorCodes.SUMMARIZER_FAILED);
            expect(result.summary).toBeNull();
          } else {
            expect(["compacted", "noop"]).toContain(result.status);
          }
        },
      ),
      { numRuns: RUNS },
    );
  });
});
