import { describe, expect, it } from "vitest";
import { createPiAdapter, type PiMessage } from "../messages/pi-adapter.js";
import { createEstimateCounter } from "../tokens/estimate-counter.js";
import { Compactor } from "./compactor.js";
import { autoCompactTokens, compactedTargetTokens, USABLE_SHARE, usableWindow } from "./usable-window.js";

describe("usableWindow", () => {
  it.each([
    // window, reserve, usable
    [200_000, 16_384, 200_000],
    [200_000, 20_000, 200_000],
    [128_000, 16_384, 124_017.77],
    [64_000, 16_384, 52_906.66],
    [32_000, 16_384, 17_351.11],
    [10_000, 0, 10_000],
  ])("of a %i-token window with %i reserved is %d", (window, reserve, usable) => {
    expect(usableWindow(window, reserve)).toBeCloseTo(usable, 1);
  });

  it.each([
    [200_000, 16_384, 0.8],
    [128_000, 16_384, 0.8],
    [64_000, 16_384, 0.8],
    [32_000, 16_384, 0.9],
    [8_000, 4_000, 0.9],
    [100_000, 99_000, 0.5],
  ])("puts any threshold up to USABLE_SHARE of it within the window less the reserve (%i, %i, %d)", (window, reserve, threshold) => {
    expect(threshold).toBeLessThanOrEqual(USABLE_SHARE);
    expect(autoCompactTokens(window, reserve, threshold)).toBeLessThanOrEqual(window - reserve);
  });

  it("leaves the presets' thresholds where they were at a 200k window and the default reserve", () => {
    expect(autoCompactTokens(200_000, 16_384, 0.8)).toBe(160_000);
    expect(autoCompactTokens(200_000, 16_384, 0.9)).toBe(180_000);
  });

  it("targets 0.6 of the auto-compaction threshold for what a compaction leaves", () => {
    expect(compactedTargetTokens(200_000, 16_384, 0.8)).toBe(96_000);
    expect(compactedTargetTokens(64_000, 16_384, 0.8)).toBe(Math.floor(0.6 * Math.floor(0.8 * ((64_000 - 16_384) / 0.9))));
  });

  it("targets 0.75 of it for a context larger than the whole window (half the window at the defaults)", () => {
    expect(compactedTargetTokens(200_000, 16_384, 0.8, 200_000)).toBe(96_000);
    expect(compactedTargetTokens(200_000, 16_384, 0.8, 200_001)).toBe(120_000);
    expect(compactedTargetTokens(32_000, 8_000, 0.8, 60_000)).toBe(Math.floor(0.75 * Math.floor(0.8 * (24_000 / 0.9))));
    expect(compactedTargetTokens(32_000, 8_000, 0.8, 60_000)).toBeCloseTo(16_000, -1);
  });
});

describe("Compactor.autoCompactTokens", () => {
  const compactor = (reserveTokens: number, threshold = 0.8) =>
    new Compactor<PiMessage>({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), contextWindow: 64_000, reserveTokens, autoCompact: { enabled: true, threshold } });

  it("is the threshold's share of the usable window, below what a request can hold", () => {
    expect(compactor(16_384).autoCompactTokens()).toBe(autoCompactTokens(64_000, 16_384, 0.8));
    expect(compactor(16_384).autoCompactTokens()).toBeLessThan(64_000 - 16_384);
    expect(compactor(1_000).autoCompactTokens()).toBe(51_200);
  });

  it("takes another window, and refuses one that is not positive", () => {
    expect(compactor(16_384).autoCompactTokens(200_000)).toBe(160_000);
    expect(() => compactor(16_384).autoCompactTokens(0)).toThrow(/positive contextWindow/);
  });

  it("gives every compaction run the usable window and its target", async () => {
    const seen: { usable: number; target: number }[] = [];
    const c = new Compactor<PiMessage>({
      adapter: createPiAdapter(),
      tokenCounter: createEstimateCounter(),
      contextWindow: 32_000,
      reserveTokens: 12_000,
      plugins: [{ name: "probe", apply: (x) => x.hooks.beforeCompact.tap("probe", (run) => void seen.push({ usable: run.usableWindow, target: run.targetTokens })) }],
    });
    await c.compact({ messages: [{ role: "user", content: "hi", timestamp: 1 } as PiMessage] });
    expect(seen).toEqual([{ usable: usableWindow(32_000, 12_000), target: compactedTargetTokens(32_000, 12_000, 0.8) }]);
  });
});

describe("CompactionRun.overWindow and overWindowKeepTokens", () => {
  // A pinned message (always kept) and turns of about 1,000 tokens each by the chars/4 counter.
  const messages = (turns: number): PiMessage[] => [
    { role: "user", content: "pinned ".repeat(60), timestamp: 0, pinned: true } as PiMessage,
    ...Array.from({ length: turns }, (_, i) => ({ role: "user", content: `${i} ${"word ".repeat(800)}`, timestamp: i + 1 }) as PiMessage),
  ];
  async function probe(turns: number, contextWindow: number) {
    const seen: { over: boolean; keep: number; target: number; budget: number; always: number }[] = [];
    const c = new Compactor<PiMessage>({
      adapter: createPiAdapter(),
      tokenCounter: createEstimateCounter(),
      contextWindow,
      reserveTokens: 1_000,
      plugins: [
        {
          name: "probe",
          apply: (x) =>
            x.hooks.beforeCompact.tap("probe", (run) => {
              seen.push({ over: run.overWindow, keep: run.overWindowKeepTokens(500), target: run.countedTokens(run.targetTokens), budget: run.budget, always: run.view.tokens[0] ?? 0 });
            }),
        },
      ],
    });
    const input = messages(turns);
    await c.compact({ messages: input });
    return { seen: seen[0]!, total: c.tokens.total(input) };
  }

  it("is false, and keeps nothing extra, for a context within the window", async () => {
    const { seen, total } = await probe(9, 10_000);
    expect(total).toBeLessThanOrEqual(10_000);
    expect(seen.over).toBe(false);
    expect(seen.keep).toBe(0);
  });

  it("is true for a context larger than the window, and keeps what the target leaves beside the summary and the pinned message", async () => {
    const { seen, total } = await probe(30, 10_000);
    expect(total).toBeGreaterThan(10_000);
    expect(seen.over).toBe(true);
    expect(seen.always).toBeGreaterThan(0);
    expect(seen.keep).toBe(Math.min(seen.budget, seen.target) - 500 - seen.always);
    expect(seen.keep).toBeGreaterThan(0);
  });
});
