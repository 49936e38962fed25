import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { looksLikeProse } from "./prose.js";

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

describe("looksLikeProse", () => {
  it.each([
    ["This is a plain English sentence.", true],
    ["Ceci est une phrase écrite en français.", true],
    ["これは 日本語の 文章 です。とても長い文章です", true],
    ["x = f(1, 2) + g(3, 4) * 10;", false],
    ["short one", false],
    ["[1, 2, 3, 4, 5, 6, 7, 8]", false],
  ])("%j: %s", (sentence, expected) => {
    expect(looksLikeProse(sentence)).toBe(expected);
  });

  it("is three words or more with at least 55% letters (Unicode \\p{L}, a character outside the BMP once), for any text", () => {
    const reference = (sentence: string): boolean => {
      if (sentence.length < 12 || sentence.split(" ").length < 3) return false;
      return (sentence.match(/\p{L}/gu)?.length ?? 0) >= sentence.length * 0.55;
    };
    fc.assert(fc.property(text, (sentence) => looksLikeProse(sentence) === reference(sentence)), { numRuns: 2000 });
  });
});
