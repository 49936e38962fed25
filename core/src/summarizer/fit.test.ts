import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TokenCounter } from "../tokens/token-counter.js";
import { createEstimateCounter } from "../tokens/estimate-counter.js";
import { fitToBudget } from "./fit.js";
import { summaryHasContent } from "./has-content.js";
import { type SummaryBlock, parseSections, renderBlocks } from "./sections.js";

const counter = createEstimateCounter();

/** Items oldest first, ranked so newer items are kept longer. */
const block = (heading: string, texts: string[]): SummaryBlock => ({
  heading,
  style: "bullet",
  items: texts.map((text, rank) => ({ text, rank })),
  optional: false,
});

const itemsUnder = (summary: string, title: string): string[] =>
  parseSections(summary).sections.find((s) => s.title === title)?.lines.map((line) => line.slice(2)) ?? [];

describe("fitToBudget", () => {
  it("returns the full rendering when it fits", () => {
    const blocks = [block("## A", ["one", "two"])];
    expect(fitToBudget(blocks, 1000, counter)).toBe(renderBlocks(blocks));
  });

  it("does not count a text far over the cap whole, and counts a long one that fits whole (the counts each costs an encode)", () => {
    const counted: string[] = [];
    const recording: TokenCounter = { name: "recording", count: (text) => (counted.push(text), counter.count(text)), dispose: () => {} };
    const items = Array.from({ length: 40 }, (_, i) => `item ${i}: changed the parser to keep whitespace in quoted strings`);
    const blocks = [block("## Done", items)];
    const full = renderBlocks(blocks);
    const over = fitToBudget(blocks, Math.floor(counter.count(full) / 3), recording);
    expect(counted).not.toContain(full);
    expect(counter.count(over)).toBeLessThanOrEqual(Math.floor(counter.count(full) / 3));
    counted.length = 0;
    // 5+ characters per token of the cap, yet it fits: it is counted whole and returned as it is.
    expect(fitToBudget(blocks, counter.count(full), recording)).toBe(full);
    expect(counted).toContain(full);
  });

  it("drops the oldest items of the largest section first", () => {
    const big = Array.from({ length: 10 }, (_, i) => `big item number ${i} with some words`);
    const blocks = [block("## Small", ["tiny"]), block("## Big", big)];
    const summary = fitToBudget(blocks, 60, counter);
    expect(itemsUnder(summary, "Small")).toEqual(["tiny"]);
    const kept = itemsUnder(summary, "Big");
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(10);
    expect(kept).toEqual(big.slice(big.length - kept.length));
  });

  it("keeps each section's best item before cutting items short, and cuts them with …", () => {
    const long = "x".repeat(400);
    const blocks = [block("## A", [`a ${long}`]), block("## B", [`b ${long}`])];
    const summary = fitToBudget(blocks, 80, counter);
    const a = itemsUnder(summary, "A");
    const b = itemsUnder(summary, "B");
    expect([a.length, b.length]).toEqual([1, 1]);
    expect(a[0]?.endsWith("…")).toBe(true);
    expect(counter.count(summary)).toBeLessThanOrEqual(80);
  });

  it("keeps the best item alone when even its heading does not fit, never the headings alone", () => {
    const blocks = [block("## A very long heading that cannot fit", ["the parser drops the last line"])];
    const summary = fitToBudget(blocks, 3, counter);
    expect(summary).toBe("the parser d"); // 12 characters = 3 tokens at chars/4
  });

  it("keeps the first section's best item, not the best-ranked of a longer list below it", () => {
    const blocks = [
      block("## Goal", ["fix the parser"]),
      block("## Files", Array.from({ length: 30 }, (_, i) => `src/file-${i}.ts`)),
    ];
    expect(fitToBudget(blocks, 6, counter)).toBe("## Goal\n- fix the parser");
  });

  it("tries the next item when the best one says nothing in the room there is", () => {
    // The newer item ranks first; the 4 characters a 1-token cap keeps of it are a rule, nothing.
    const blocks = [block("## A very long heading that cannot fit", ["parser fixed", "------ then the lexer"])];
    expect(fitToBudget(blocks, 1, counter)).toBe("pars");
  });

  it("keeps the best item under its heading when the cap leaves no room for the other sections", () => {
    const blocks = [
      block("## Goal", ["fix the parser", "keep the tests green"]),
      block("## Current Task", ["run the whole suite"]),
      block("## Progress", ["nothing yet"]),
    ];
    const summary = fitToBudget(blocks, 8, counter);
    expect(summary).toBe("## Goal\n- keep the tests green"); // 30 characters = 8 tokens at chars/4; the three headings alone take 10
    expect(summaryHasContent(summary)).toBe(true);
  });

  it("never returns headings alone when some item exists and the cap is at least one token", () => {
    fc.assert(
      fc.property(
        // Items that say something in their first character: a cap of 1 token keeps 4 characters.
        fc.array(fc.array(fc.string({ minLength: 1, maxLength: 60 }).filter((t) => /^[A-Za-z0-9]/.test(t)), { maxLength: 5 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 80 }),
        (sections, cap) => {
          const blocks = sections.map((texts, i) => block(`## Section ${i} with a long heading`, texts));
          const summary = fitToBudget(blocks, cap, counter);
          expect(counter.count(summary)).toBeLessThanOrEqual(cap);
          if (sections.some((texts) => texts.length > 0)) expect(summaryHasContent(summary), JSON.stringify(summary)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("returns an empty string for a cap of zero", () => {
    expect(fitToBudget([block("## A", ["x"])], 0, counter)).toBe("");
  });

  it("never exceeds the cap with a counter whose counts are not additive over lines", () => {
    // Costs 7 extra tokens per call: the sum of line estimates badly under-counts the whole.
    const lumpy: TokenCounter = { name: "lumpy", count: (text) => (text.length === 0 ? 0 : Math.ceil(text.length / 3) + 7), dispose() {} };
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.string({ maxLength: 80 }), { maxLength: 8 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 400 }),
        (sections, cap) => {
          const blocks = sections.map((texts, i) => block(`## S${i}`, texts));
          expect(lumpy.count(fitToBudget(blocks, cap, lumpy))).toBeLessThanOrEqual(cap);
        },
      ),
      { numRuns: 300 },
    );
  });
});
