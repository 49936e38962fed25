import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatCount } from "./format-count.js";

describe("formatCount", () => {
  it.each([
    [0, "0"],
    [7, "7"],
    [999, "999"],
    [1000, "1,000"],
    [6240, "6,240"],
    [177657, "177,657"],
    [1234567.4, "1,234,567"],
    [-1234.5, "-1,234"],
    [-0.2, "-0"],
    [Number.MAX_SAFE_INTEGER, "9,007,199,254,740,991"],
  ])("%d -> %s", (n, expected) => {
    expect(formatCount(n)).toBe(expected);
  });

  it("writes what toLocaleString('en-US') writes for the rounded number, for any number", () => {
    const number = fc.oneof(fc.integer({ min: -1e9, max: 1e9 }), fc.maxSafeInteger(), fc.double({ noNaN: false }), fc.double({ min: -1e7, max: 1e7 }));
    fc.assert(
      fc.property(number, (n) => {
        expect(formatCount(n)).toBe(Math.round(n).toLocaleString("en-US"));
      }),
      { numRuns: 5000 },
    );
  });
});
