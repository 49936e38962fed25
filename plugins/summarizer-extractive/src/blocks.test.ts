import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { keepable, rankedBlock, type RankPolicy } from "./blocks.js";

/** A block's items as text and the order of their ranks (what fitting drops first), nothing else. */
function shape(items: readonly { text: string; rank: number }[]): { texts: string[]; rankOrder: string[] } {
  return { texts: items.map((item) => item.text), rankOrder: [...items].sort((a, b) => a.rank - b.rank).map((item) => item.text) };
}

describe("keepable", () => {
  it("gives a newest-kept block the same items, in the same order and rank order, as every passing item would", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ unit: fc.constantFrom("a", "b", "c", "x", "y"), minLength: 1, maxLength: 4 }), { maxLength: 40 }),
        fc.func(fc.boolean()),
        fc.func(fc.boolean()),
        fc.integer({ min: 0, max: 12 }),
        (items, shows, focus, max) => {
          const policy: RankPolicy = { keep: "newest", max, matchesFocus: (item) => focus(item) };
          const some = keepable(items, (item) => shows(item), max, (item) => focus(item));
          const all = items.filter((item) => shows(item));
          expect(shape(rankedBlock("## X", "code", some, policy).items)).toEqual(shape(rankedBlock("## X", "code", all, policy).items));
          // Only passing items, in their order; and none when the block keeps none.
          expect(some.every((item) => all.includes(item))).toBe(true);
          expect(some).toEqual(all.filter((item) => some.includes(item)));
          if (max === 0) expect(some).toEqual([]);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("tests about max items of each kind, newest first, instead of all of them", () => {
    const items = Array.from({ length: 500 }, (_, i) => `id${i}`);
    const tested: string[] = [];
    const kept = keepable(items, (item) => (tested.push(item), true), 40, () => false);
    expect(kept).toEqual(items.slice(-40));
    expect(tested).toEqual(items.slice(-40).reverse());
  });

  it("still finds every focus match among older items", () => {
    const items = Array.from({ length: 100 }, (_, i) => (i % 30 === 0 ? `focus${i}` : `id${i}`));
    const kept = keepable(items, () => true, 5, (item) => item.startsWith("focus"));
    expect(kept.filter((item) => item.startsWith("focus"))).toEqual(["focus0", "focus30", "focus60", "focus90"]);
    expect(kept.length).toBe(9);
  });
});
