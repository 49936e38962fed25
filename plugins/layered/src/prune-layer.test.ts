/** Layer 1 through the Compactor: when it prunes, what it keeps, and what the result says. */
import { builders, FORMATS } from "@compaction/core/testing";
import { describe, expect, it } from "vitest";
import { layered } from "./layered.js";
import type { LayeredOptions } from "./options.js";
import { pruneToolOutputs } from "./prune.js";
import { chatTurn, compactorFor, toolTurn, windowFor } from "./test-support/conversation.js";

describe.each(FORMATS)("layer 1, prune (%s)", (format) => {
  const b = builders(format);

  /**
   * Two tool turns with outputs of `older` and `newer` tokens, then a 22,000-token chat turn:
   * the older output lies outside the newest 40,000 tokens, the newer one inside.
   */
  function scene(older: number, newer: number) {
    return [...toolTurn(b, "c1", older, { command: "npm test" }), ...toolTurn(b, "c2", newer), ...chatTurn(b, "later", 11000)];
  }
  const OLDER_OUTPUT = 2;
  const NEWER_OUTPUT = 6;

  async function run(messages: unknown[], ratio: number, options: Partial<LayeredOptions> = {}) {
    const c = compactorFor(format, [layered(options)]);
    const total = c.tokens.total(messages);
    return c.compact({ messages, contextWindow: windowFor(total, ratio), trigger: "auto" });
  }

  it.each([
    { when: "context just under pruneThreshold", older: 30000, newer: 25000, ratio: 0.799, prunes: false },
    { when: "context just over pruneThreshold", older: 30000, newer: 25000, ratio: 0.801, prunes: true },
    { when: "tool outputs exactly 50,000 tokens", older: 25000, newer: 25000, ratio: 0.85, prunes: false },
    { when: "tool outputs 50,001 tokens", older: 25001, newer: 25000, ratio: 0.85, prunes: true },
  ])("$when: prunes = $prunes", async ({ older, newer, ratio, prunes }) => {
    const messages = scene(older, newer);
    const result = await run(messages, ratio);
    if (prunes) {
      expect(result.status).toBe("compacted");
      expect(result.event?.layer).toBe("prune");
      expect(result.messages[OLDER_OUTPUT]).not.toBe(messages[OLDER_OUTPUT]);
    } else {
      expect(result.status).toBe("noop");
      expect(result.messages).toBe(messages);
    }
  });

  /** The older output's size at which pruning with the defaults saves exactly `saved` tokens. */
  function olderOutputSaving(saved: number): number {
    const c = compactorFor(format, []);
    for (let size = saved; size < saved + 200; size++) {
      const messages = scene(size, 35000);
      const pruned = pruneToolOutputs(messages, {
        adapter: c.adapter,
        factsOf: (m) => c.facts.of(m),
        tokensOf: (m) => c.tokens.count(m),
        protectTokens: 40000,
      });
      if (pruned.tokensSaved === saved) return size;
    }
    throw new Error(`no output size saves exactly ${saved} tokens`);
  }

  it("prunes when it saves exactly pruneMinSavings (20,000) tokens", async () => {
    const result = await run(scene(olderOutputSaving(20000), 35000), 0.85);
    expect(result.event?.layer).toBe("prune");
    expect(result.tokensBefore - result.tokensAfter).toBe(20000);
  });

  it("leaves the outputs as they are when pruning would save 19,999 tokens", async () => {
    const messages = scene(olderOutputSaving(19999), 35000);
    const result = await run(messages, 0.85);
    expect(result.status).toBe("noop");
    expect(result.messages).toBe(messages);
  });

  it("keeps the outputs within the newest pruneProtectTokens and prunes the older ones", async () => {
    const messages = scene(30000, 25000);
    const result = await run(messages, 0.85);
    expect(result.messages[NEWER_OUTPUT]).toBe(messages[NEWER_OUTPUT]);
    const c = compactorFor(format, []);
    expect(c.facts.of(result.messages[OLDER_OUTPUT]).text).toMatch(/^\[pruned tool output: bash\(command="npm test"\) — 30,000 tokens\]$/);
  });

  it.each([
    { when: "the messages after it hold exactly pruneProtectTokens", extra: 0, pruned: true },
    { when: "the messages after it hold one token less than pruneProtectTokens", extra: 1, pruned: false },
  ])("an output is pruned when $when: $pruned", async ({ extra, pruned }) => {
    const messages = scene(30000, 25000);
    const c = compactorFor(format, []);
    const newer = c.tokens.total(messages.slice(OLDER_OUTPUT + 1));
    const result = await run(messages, 0.85, { pruneProtectTokens: newer + extra });
    expect(result.messages[OLDER_OUTPUT] !== messages[OLDER_OUTPUT]).toBe(pruned);
  });

  it("reports a prune-only compaction: layer prune, no summary, no cut, the plugin as the strategy", async () => {
    const result = await run(scene(30000, 25000), 0.85);
    expect(result.status).toBe("compacted");
    expect(result.summary).toBeNull();
    expect(result.cut).toBeNull();
    expect(result.event).toMatchObject({ layer: "prune", strategy: "layered", messagesCompacted: 0, trigger: "auto" });
    expect(result.tokensAfter).toBeLessThan(result.tokensBefore - 20000);
  });

  it("keeps every message in place, replacing only the pruned output", async () => {
    const messages = scene(30000, 25000);
    const result = await run(messages, 0.85);
    expect(result.messages).toHaveLength(messages.length);
    result.messages.forEach((m, i) => {
      if (i !== OLDER_OUTPUT) expect(m).toBe(messages[i]);
    });
  });

  it("never prunes a pinned tool output, however old", async () => {
    const messages = scene(30000, 25000);
    messages[OLDER_OUTPUT] = b.pin(messages[OLDER_OUTPUT]);
    const result = await run(messages, 0.85, { pruneProtectTokens: 0 });
    expect(result.messages[OLDER_OUTPUT]).toBe(messages[OLDER_OUTPUT]);
    // with protection off, the newer output is pruned instead
    expect(result.messages[NEWER_OUTPUT]).not.toBe(messages[NEWER_OUTPUT]);
  });

  it("does not change the input messages", async () => {
    const messages = scene(30000, 25000);
    const before = structuredClone(messages);
    await run(messages, 0.85);
    expect(messages).toEqual(before);
  });

  it("prunes nothing again on a second run over its own result", async () => {
    const first = await run(scene(30000, 25000), 0.85);
    const c = compactorFor(format, [layered()]);
    const again = await c.compact({ messages: first.messages, contextWindow: windowFor(first.tokensAfter, 0.85), trigger: "auto" });
    expect(again.status).toBe("noop");
    expect(again.messages).toBe(first.messages);
  });
});
