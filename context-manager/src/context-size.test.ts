import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { PiMessage } from "@compaction/core";
import { buildContext, loadBoundary, readSession } from "@compaction/transcript";
import { fileURLToPath } from "node:url";
import { piCompactor } from "./__fixtures__/compactors.js";
import { ContextSize } from "./context-size.js";

const PI_FIXTURES = ["pi-large-session.jsonl", "pi-before-compaction.jsonl"].map((file) =>
  fileURLToPath(new URL(`../../../shared/fixtures/real/${file}`, import.meta.url)),
);

/** A message of each kind that matters: with and without usage, summaries, unknown timestamps. */
const message: fc.Arbitrary<PiMessage> = fc.oneof(
  fc.record({ text: fc.string({ maxLength: 40 }), t: fc.option(fc.nat(100)) }).map(
    ({ text, t }) => ({ role: "user", content: [{ type: "text", text }], ...(t === null ? {} : { timestamp: t }) }) as PiMessage,
  ),
  fc.record({ text: fc.string({ maxLength: 40 }), t: fc.option(fc.nat(100)), usage: fc.option(fc.nat(5000)) }).map(
    ({ text, t, usage }) =>
      ({
        role: "assistant",
        content: [{ type: "text", text }],
        stopReason: "stop",
        ...(t === null ? {} : { timestamp: t }),
        ...(usage === null ? {} : { usage: { input: usage, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: usage + 10 } }),
      }) as PiMessage,
  ),
  fc.record({ text: fc.string({ maxLength: 40 }), t: fc.option(fc.nat(100)) }).map(
    ({ text, t }) => ({ role: "compactionSummary", summary: text, tokensBefore: 0, ...(t === null ? {} : { timestamp: t }) }) as PiMessage,
  ),
);

describe("ContextSize", () => {
  it("equals MessageTokenCounter.contextTokens after every appended message", () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 40 }), (messages) => {
        const compactor = piCompactor();
        const size = new ContextSize(compactor.tokens);
        messages.forEach((m, i) => {
          size.push(m);
          expect(size.tokens).toBe(compactor.tokens.contextTokens(messages.slice(0, i + 1)).tokens);
        });
      }),
    );
  });

  it("equals contextTokens after a reset to other messages", () => {
    fc.assert(
      fc.property(fc.array(message, { maxLength: 20 }), fc.array(message, { maxLength: 20 }), (first, second) => {
        const compactor = piCompactor();
        const size = new ContextSize(compactor.tokens, first);
        size.reset(second);
        expect(size.tokens).toBe(compactor.tokens.contextTokens(second).tokens);
      }),
    );
  });

  it("equals contextTokens with the same anchor (a compaction's recorded After), after a reset and every message appended since", () => {
    fc.assert(
      fc.property(
        fc.array(message, { minLength: 1, maxLength: 20 }),
        fc.array(message, { maxLength: 10 }),
        fc.nat(100_000),
        fc.nat(),
        (covered, later, tokens, pick) => {
          const compactor = piCompactor();
          const anchor = { tokens, lastIndex: (pick % (covered.length + 1)) - 1 };
          const size = new ContextSize(compactor.tokens, covered, anchor);
          expect(size.tokens).toBe(compactor.tokens.contextTokens(covered, anchor).tokens);
          later.forEach((m, i) => {
            size.push(m);
            expect(size.tokens).toBe(compactor.tokens.contextTokens([...covered, ...later.slice(0, i + 1)], anchor).tokens);
          });
        },
      ),
    );
  });

  it("refuses an anchor that does not fit the messages", () => {
    expect(() => new ContextSize(piCompactor().tokens, [], { tokens: 5, lastIndex: 0 })).toThrow(/lastIndex must be an integer from -1 to -1/);
  });

  it.each(PI_FIXTURES)("equals contextTokens at every step of replaying %s", (path) => {
    const compactor = piCompactor();
    const messages = buildContext(readSession(path).entries).messages;
    const size = new ContextSize(compactor.tokens);
    const seen: PiMessage[] = [];
    for (const m of messages) {
      size.push(m);
      seen.push(m);
      expect(size.tokens).toBe(compactor.tokens.contextTokens(seen).tokens);
    }
    expect(size.tokens).toBe(compactor.tokens.contextTokens(loadBoundary(path).messages).tokens);
  });
});
