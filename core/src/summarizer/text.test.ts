import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { collapseWhitespace } from "./text.js";

/** Texts of every kind of character the helpers treat apart: ASCII, white space of each kind, letters and symbols of other scripts, emoji, lone surrogates. */
const text = fc
  .array(
    fc.oneof(
      fc.constantFrom(" ", "  ", "\n", "\t", "\r\n", "\u00a0", "\u2028", "\u3000", "\ufeff", "\ud800", "\udc00", "😀", "é", "漢", "Ω", "ß", "1", ".", "/"),
      fc.string({ unit: "grapheme", maxLength: 6 }),
      fc.string({ maxLength: 6 }),
    ),
    { maxLength: 30 },
  )
  .map((parts) => parts.join(""));

describe("collapseWhitespace", () => {
  it.each([
    ["a  b", "a b"],
    [" a\n\tb ", "a b"],
    ["a\u00a0b", "a b"],
    ["a b", "a b"],
    ["", ""],
  ])("%j -> %j", (input, expected) => {
    expect(collapseWhitespace(input)).toBe(expected);
  });

  it("turns every white space run into one space and trims, for any text", () => {
    fc.assert(fc.property(text, (input) => collapseWhitespace(input) === input.replace(/\s+/g, " ").trim()), { numRuns: 2000 });
  });
});
