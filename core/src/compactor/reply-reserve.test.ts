import { describe, expect, it } from "vitest";
import { ErrorCodes } from "../errors.js";
import { createPiAdapter, type PiMessage } from "../messages/pi-adapter.js";
import { createEstimateCounter } from "../tokens/estimate-counter.js";
import type { Summarizer } from "../summarizer/summarizer.js";
import { Compactor } from "./compactor.js";
import { DEFAULT_RESERVE_TOKENS, defaultReserveTokens, replyReserveTokens } from "./reply-reserve.js";
import { autoCompactTokens, compactedTargetTokens } from "./usable-window.js";

/** A summary of the first words of what it summarises, within the length asked for. */
const shortSummarizer: Summarizer = {
  name: "short",
  summarize: async (req) => req.messages.map((m) => m.text.slice(0, 40)).join("\n").slice(0, req.maxTokens * 2),
};

const compactor = (options: { reserveTokens?: number; maxOutputTokens?: number; contextWindow?: number } = {}) =>
  new Compactor<PiMessage>({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), summarizer: shortSummarizer, ...options });

describe("defaultReserveTokens", () => {
  it.each<[number, number]>([
    [8_000, 1_000],
    [16_000, 2_000],
    [32_000, 4_000],
    [64_000, 8_000],
    [128_000, 16_000],
    [200_000, DEFAULT_RESERVE_TOKENS],
    [1_000_000, DEFAULT_RESERVE_TOKENS],
  ])("at a %i-token window is %i (an eighth of the window, at most pi's 16,384)", (window, reserve) => {
    expect(defaultReserveTokens(window)).toBe(reserve);
  });

  it("is the model's reply limit where known, at most a quarter of the window", () => {
    expect(defaultReserveTokens(200_000, 4_096)).toBe(4_096);
    expect(defaultReserveTokens(200_000, 64_000)).toBe(50_000);
    expect(defaultReserveTokens(8_000, 8_192)).toBe(2_000);
  });

  it("leaves every window from 8k to 1M a threshold and a target that are many turns apart", () => {
    for (const window of [8_000, 16_000, 32_000, 64_000, 128_000, 200_000, 1_000_000]) {
      const reserve = defaultReserveTokens(window);
      const trigger = autoCompactTokens(window, reserve, 0.8);
      // A compaction frees at least a quarter of the window (the storm bound: one compaction per
      // quarter of the window appended), and the trigger leaves the request room below the budget.
      expect(trigger - compactedTargetTokens(window, reserve, 0.8)).toBeGreaterThanOrEqual(window / 4);
      expect(trigger).toBeLessThan(window - reserve);
    }
  });
});

describe("replyReserveTokens", () => {
  it("uses a reserve the user set when it fits the window", () => {
    expect(replyReserveTokens(32_000, { reserveTokens: 4_000 })).toBe(4_000);
    expect(replyReserveTokens(32_000, { reserveTokens: 0 })).toBe(0);
    expect(replyReserveTokens(32_000, { reserveTokens: 16_000 })).toBe(16_000);
  });

  it("refuses a reserve over half the window, naming the option and the window's own reserve", () => {
    try {
      replyReserveTokens(8_000, { reserveTokens: 16_384, source: { name: "the reserveTokens option of createContextManager" } });
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ code: ErrorCodes.INPUT_INVALID });
      expect((error as Error).message).toBe(
        "The reply's reserve (the reserveTokens option of createContextManager) is 16384 tokens, which does not fit the 8,000-token context window: a reserve for the reply may take at most half of it (4,000), so that the context keeps room to work in.",
      );
      expect((error as { hint: string }).hint).toContain("1,000 tokens here");
    }
  });

  it("names the config file and the key when the reserve came from one", () => {
    expect(() => replyReserveTokens(8_000, { reserveTokens: 5_000, source: { name: "reserveTokens", file: "/p/.compactionrc", path: "/agents/coder/reserveTokens" } })).toThrow(
      expect.objectContaining({ code: ErrorCodes.CONFIG_INVALID, file: "/p/.compactionrc", path: "/agents/coder/reserveTokens", message: expect.stringMatching(/^The reply's reserve \(reserveTokens in \/p\/\.compactionrc, \/agents\/coder\/reserveTokens\) is 5000 tokens/) }),
    );
  });
});

describe("Compactor.reserveFor", () => {
  it("follows the window when nothing sets a reserve, so compact() works at 8k", async () => {
    const c = compactor({ contextWindow: 8_000 });
    expect(c.reserveFor()).toBe(1_000);
    expect(c.reserveFor(200_000)).toBe(16_384);
    const messages = Array.from({ length: 12 }, (_, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content: `${i} ${"word ".repeat(900)}`, timestamp: i }) as unknown as PiMessage);
    const result = await c.compact({ messages });
    expect(result.status).toBe("compacted");
    expect(result.tokensAfter).toBeLessThanOrEqual(8_000 - 1_000);
    c.dispose();
  });

  it("takes a host's own reserve over the compactor's, and the host's reply limit over the window's share", () => {
    const c = compactor({ reserveTokens: 2_000 });
    expect(c.reserveFor(32_000)).toBe(2_000);
    expect(c.reserveFor(32_000, { reserveTokens: 3_000 })).toBe(3_000);
    expect(compactor().reserveFor(32_000, { maxOutputTokens: 2_500 })).toBe(2_500);
    expect(compactor({ maxOutputTokens: 6_000 }).reserveFor(32_000)).toBe(6_000);
    // The user's reserve wins over the model's limit.
    expect(c.reserveFor(32_000, { maxOutputTokens: 6_000 })).toBe(2_000);
    c.dispose();
  });

  it("refuses, naming the compactor's source, a reserve set for a window it does not fit", () => {
    const c = new Compactor<PiMessage>({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), reserveTokens: 16_384, reserveSource: { name: "reserveTokens", file: "/p/.compactionrc", path: "/reserveTokens" } });
    expect(c.reserveFor(64_000)).toBe(16_384);
    expect(() => c.reserveFor(16_000)).toThrow(/reserve \(reserveTokens in \/p\/\.compactionrc, \/reserveTokens\) is 16384 tokens/);
    expect(() => c.autoCompactTokens(16_000)).toThrow(/does not fit the 16,000-token context window/);
    c.dispose();
  });
});
