import fc from "fast-check";
import { type Tiktoken, get_encoding } from "tiktoken";
import { afterAll, describe, expect, it } from "vitest";
import { forEachLineSegment } from "./line-segments.js";
import { tiktokenEncodingNames } from "./tiktoken-counter.js";

function segments(text: string): string[] {
  const parts: string[] = [];
  forEachLineSegment(text, (part) => parts.push(part));
  return parts;
}

describe("forEachLineSegment: where a text is cut", () => {
  it.each([
    ["a line break between two words", "one\ntwo", ["one\n", "two"]],
    ["every such line break", "- a\n- b\n## c", ["- a\n", "- b\n", "## c"]],
    ["not before an indented line", "one\n  two", ["one\n  two"]],
    ["not before a tab", "one\n\ttwo", ["one\n\ttwo"]],
    ["not before a line starting with '/' (o200k takes '.\\n/' as one piece)", "end.\n/usr/bin", ["end.\n/usr/bin"]],
    ["not after trailing white space (gpt2 takes ' \\n' as one piece at the end)", "one \ntwo", ["one \ntwo"]],
    ["not inside a blank line", "one\n\ntwo", ["one\n\ntwo"]],
    ["not after a carriage return", "one\r\ntwo", ["one\r\ntwo"]],
    ["not before a no-break space", "one\n\u00a0two", ["one\n\u00a0two"]],
    ["not beside a next-line character (white space to tiktoken, not to JavaScript)", "one\u0085\ntwo", ["one\u0085\ntwo"]],
    ["not at a line break that starts the text", "\ntwo", ["\ntwo"]],
    ["not at a line break that ends the text", "one\n", ["one\n"]],
    ["never in a text without line breaks", "one two", ["one two"]],
    ["the empty text whole", "", [""]],
  ])("%s", (_name, text, expected) => {
    expect(segments(text)).toEqual(expected);
  });
});

describe("forEachLineSegment: counts add up for every tiktoken encoding", () => {
  const encoders = new Map<string, Tiktoken>(tiktokenEncodingNames().map((name) => [name, get_encoding(name as Parameters<typeof get_encoding>[0])]));
  afterAll(() => encoders.forEach((encoder) => encoder.free()));
  const count = (encoder: Tiktoken, text: string) => encoder.encode_ordinary(text).length;

  // Pieces that meet at line breaks in every way the encodings' regexes treat differently:
  // white space of each kind, punctuation runs, slashes, contractions, digits, letters of each
  // case and script, combining marks, characters outside the BMP, lone surrogates.
  const piece = fc.constantFrom(
    "\n", "\n\n", "\r\n", "\r", " ", "  ", "\t", "\u00a0", "\u0085", "\u2028", "\u3000", "\ufeff",
    "/", "//", ".", "...", ":", "-", "- ", "## ", "`", "'s", "'ll", "'T", "#", "*", "|", "{", "}",
    "a", "word", "Word", "WORD", "é", "e\u0301", "ß", "İ", "漢字", "한국어", "Ωμέγα", "ك", "😀", "👍🏽", "\ud800", "\udc00",
    "1", "12", "1234", "3.14", "0x1F", "_", "x_y", "http://a.b/c", "src/a.ts", "<|endoftext|>",
  );
  const text = fc.array(piece, { maxLength: 40 }).map((parts) => parts.join(""));

  it("joined, the parts are the text", () => {
    fc.assert(fc.property(text, (generated) => segments(generated).join("") === generated), { numRuns: 500 });
  });

  it.each([...encoders.keys()])("%s: the count of the text is the sum of its parts' counts", (name) => {
    const encoder = encoders.get(name) as Tiktoken;
    fc.assert(
      fc.property(text, (generated) => {
        const parts = segments(generated).reduce((sum, part) => sum + count(encoder, part), 0);
        expect(parts).toBe(count(encoder, generated));
      }),
      { numRuns: 400 },
    );
  });
});
