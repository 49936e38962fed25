/**
 * The names in the part of a text that shrinking removes: what an agent goes on to type
 * verbatim and cannot guess (a file it read, a test it wrote, a function it called, a flag, an
 * error code). Cut to head and tail, an older tool output or a written file keeps its first and
 * last lines, while the names the agent needs next are as often in the middle (the test names in
 * the middle of a test file, the paths in the middle of a listing). Kept as one line beside the
 * marker, in a small share of the same allowance, they stay in the request for a few tokens each.
 *
 * A name here: a path (`src/a.ts`, `/abs/x`, `~/y`) or a file name (`package.json`), a dotted
 * name (`member.name.endswith`), a camelCase, PascalCase (two humps), snake_case or
 * SCREAMING_SNAKE name, a long flag (`--dry-run`), an error code (`ENOENT`, `TS2345`). Plain
 * words are not names: the head and tail's prose says what the text was about.
 */

const NAME = new RegExp(
  [
    String.raw`(?:~|\.{1,2})?\/?[\w@.+-]+(?:\/[\w@.+-]+)+`, // a path
    String.raw`(?<![\w-])--[a-z][\w-]*[a-z0-9]`, // a long flag
    String.raw`\b[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+`, // a dotted name or a file name
    String.raw`\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\b`, // camelCase
    String.raw`\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b`, // PascalCase
    String.raw`\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b`, // snake_case, SCREAMING_SNAKE
    String.raw`\bE[A-Z]{3,}\b|\b[A-Z]{1,3}\d{4,5}\b`, // ENOENT, TS2345
  ].join("|"),
  "g",
);
const HAS_LETTER = /[A-Za-z]/;
/** Sentence ends and abbreviations the dotted-name pattern would take for names. */
const NOT_A_NAME = /^(?:e\.g|i\.e|etc|vs|[A-Za-z]+\.[A-Z][a-z]+)$/;
/** Three characters or fewer say too little to be worth a place in the line. */
const SHORTEST = 4;

/**
 * The names in `text` (see the file's comment), each once, in order of first appearance, that
 * `shown` (the part of the text that stays) does not already hold.
 */
export function elidedNames(text: string, shown: string): string[] {
  const names = new Set<string>();
  for (const match of text.matchAll(NAME)) {
    const name = match[0].replace(/[.,:;]+$/, "");
    if (name.length < SHORTEST || !HAS_LETTER.test(name) || NOT_A_NAME.test(name) || names.has(name)) continue;
    if (shown.includes(name)) continue;
    names.add(name);
  }
  return [...names];
}

/** The line that lists the names (see `namesLine`): its fixed part. */
const LINE_START = "[names in the removed part: ";
const LINE_END = "]";

/**
 * One line listing as many of `names` as fit in `maxChars` (in order), or the empty string when
 * none fits: `[names in the removed part: src/a.ts, test_corrupted_zip, --dry-run]`.
 */
export function namesLine(names: readonly string[], maxChars: number): string {
  let line = "";
  for (const name of names) {
    const next = line === "" ? name : `${line}, ${name}`;
    if (LINE_START.length + next.length + LINE_END.length > maxChars) continue;
    line = next;
  }
  return line === "" ? "" : `${LINE_START}${line}${LINE_END}`;
}
