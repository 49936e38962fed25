import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { collectIdentifiers, IDENTIFIER_SOURCE, nextMatch } from "./identifiers.js";

const identifiersIn = (text: string): string[] => {
  const found: string[] = [];
  collectIdentifiers(text, (identifier) => found.push(identifier));
  return found;
};

describe("collectIdentifiers", () => {
  const found: [string, string, string][] = [
    ["URL without trailing punctuation", "See https://example.com/a?b=1.", "https://example.com/a?b=1"],
    ["UUID", "session d703a1a9-1b7b-4fb1-b512-c9738b1fe617 loaded", "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"],
    ["short commit hash", "reverted 3f2a9c1 today", "3f2a9c1"],
    ["full commit hash", "at 6c2360af0e6d0c0c4bd3b7a3a8b2e1f0c9d8e7f6 now", "6c2360af0e6d0c0c4bd3b7a3a8b2e1f0c9d8e7f6"],
    ["relative path", "edit packages/core/src/index.ts now", "packages/core/src/index.ts"],
    ["absolute path", "open /etc/hosts please", "/etc/hosts"],
    ["home path", "in ~/.config/app.yaml", "~/.config/app.yaml"],
    ["bare file name with extension", "check theme.ts first", "theme.ts"],
    ["issue id", "fixes #123 for good", "#123"],
    ["env var name", "set OPENAI_API_KEY first", "OPENAI_API_KEY"],
    ["shell variable", "echo $HOME there", "$HOME"],
    ["host and port", "curl localhost:3000 now", "localhost:3000"],
    ["port phrase", "listening on port 8080 now", "port 8080"],
    ["duration", "took 250ms in total", "250ms"],
    ["size with unit", "the file is 12 MB large", "12 MB"],
    ["percentage", "coverage is 85% now", "85%"],
    ["function call in backticks", "call `createPiAdapter()` here", "createPiAdapter()"],
    ["camelCase name in backticks", "the `loadTheme` export", "loadTheme"],
    ["dotted member in backticks", "uses `this.ui.invalidate` there", "this.ui.invalidate"],
  ];
  it.each(found)("finds a %s", (_kind, text, expected) => {
    expect(identifiersIn(text)).toContain(expected);
  });

  const ignored: [string, string][] = [
    ["and/or", "use one and/or the other"],
    ["a plain word in backticks", "the `dark` theme"],
    ["a decimal number", "version 1234567 of it"],
    ["an English word of hex letters", "the facade was defaced"],
    ["a lower-case template variable", "uses ${color} there"],
  ];
  it.each(ignored)("ignores %s", (_kind, text) => {
    expect(identifiersIn(text)).toEqual([]);
  });

  it("reports identifiers in order of appearance, each time they appear", () => {
    expect(identifiersIn("a.ts then b.ts then a.ts")).toEqual(["a.ts", "b.ts", "a.ts"]);
  });
});

describe("collectIdentifiers on long runs", () => {
  // Each of these once took quadratic time (minutes for a few hundred kilobytes): a run of
  // `a.a.a…` and of `a-a-a…` in the file-name pattern, a run of `a.ts.a.ts…` in the path tried
  // after every match. Base64, minified code and dotted chains in tool outputs look like them.
  it.each(["a.", "a-", "a.ts.", "L", "a/", "$A"])("finds the identifiers around 400,000 characters of %j", (unit) => {
    const found = identifiersIn(`open src/before.ts then ${unit.repeat(400_000 / unit.length)} and src/after.ts`);
    expect(found[0]).toBe("src/before.ts");
    expect(found.at(-1)).toBe("src/after.ts");
  });
});

describe("nextMatch (the identifier search)", () => {
  /** Every match of the regex as defined, from the start, each after the previous one: index, text and groups. */
  const asDefined = (text: string): unknown[][] => {
    const regex = new RegExp(IDENTIFIER_SOURCE, "gu");
    return [...text.matchAll(regex)].map((match) => [match.index, ...match]);
  };
  const searched = (text: string): unknown[][] => {
    const found: unknown[][] = [];
    for (let from = 0, match = nextMatch(text, from); match !== null; match = nextMatch(text, from)) {
      found.push([match.index, ...match]);
      from = match.index + match[0].length;
    }
    return found;
  };
  /** Pieces of paths, words, numbers, variables, URLs and code spans, run together in every order. */
  const text = fc
    .array(
      fc.oneof(
        fc.constantFrom("~", ".", "..", "/", "$", "${", "}", "@", "+", "-", "_", "#", ":", "`", " ", "\n", "%", "(", ")", "&", "é", "😀"),
        fc.constantFrom("a", "src", "A_B", "HOME", "$AB", "-x.ts", "x.ts", "json", "ts", "0", "12", "3f2a9c1", "deadbeef", "ms", "MB", "k", "port ", "localhost", "127.0.0.1", "http://", "https://e.com/"),
        fc.string({ unit: fc.constantFrom("a", "Z", "1", "f", ".", "/", "~", "-", "@", "+", "_", "$", " ", "`"), maxLength: 8 }),
      ),
      { maxLength: 40 },
    )
    .map((parts) => parts.join(""));

  it.each([
    ["a path right after a shell variable", "$HOME/bin/tool"],
    ["a path inside a word", "x../a/b and c./d/e and f/g/h"],
    ["a home path after a letter", "a~/x/y"],
    ["a path after a hash", "3f2a9c1/src/a.ts"],
    ["a path after a URL", "https://e.com/a(b/c/d"],
    ["a file name starting at a '-' inside a word", "$ABc-d.ts"],
    ["a code span inside a word", "a`b.c`"],
  ])("finds what the regex as defined finds: %s", (_case, input) => {
    expect(searched(input)).toEqual(asDefined(input));
  });

  it("finds what the regex as defined finds, for any text", () => {
    fc.assert(
      fc.property(text, (input) => {
        expect(searched(input)).toEqual(asDefined(input));
      }),
      { numRuns: 5000 },
    );
  });
});
