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
    // A path, from the start of a run only: started anywhere inside a long run it would try every
    // start, each to the run's end, which is quadratic.
    String.raw`(?<![\w@.+-])(?:~|\.{1,2})?\/?[\w@.+-]+(?:\/[\w@.+-]+)+`,
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
/** The characters a name is made of: a run of them longer than LONGEST holds no name. */
const RUN = /[\w@.+~\/$-]+/g;
/**
 * Longer than this, a run of name characters is a blob (base64, a minified line, a hash), not
 * something an agent types: it is skipped whole, which also keeps the scan linear in the text.
 */
const LONGEST = 256;

/** A name found in a text, and where its run starts and ends. */
interface FoundName {
  readonly name: string;
  readonly runStart: number;
  readonly runEnd: number;
}

/**
 * The texts scanned last, newest last: shrinking tries several sizes of the same text (and the
 * same message again at the next send), and each try asks for the names of a different middle.
 */
const scanned = new Map<string, readonly FoundName[]>();
const SCANNED_KEPT = 32;

/** Every name in `text` (see the file's comment), in order, each with its run's bounds. */
function namesOf(text: string): readonly FoundName[] {
  const known = scanned.get(text);
  if (known !== undefined) {
    scanned.delete(text);
    scanned.set(text, known);
    return known;
  }
  const found: FoundName[] = [];
  // Run by run: a name never spans two (every character NAME matches is a run character, and
  // what precedes a run is not one, as NAME's word boundaries and lookbehinds expect).
  for (const run of text.matchAll(RUN)) {
    if (run[0].length > LONGEST) continue;
    const runStart = run.index;
    const runEnd = runStart + run[0].length;
    for (const match of run[0].matchAll(NAME)) {
      const name = match[0].replace(/[.,:;]+$/, "");
      if (name.length < SHORTEST || !HAS_LETTER.test(name) || NOT_A_NAME.test(name)) continue;
      found.push({ name, runStart, runEnd });
    }
  }
  scanned.set(text, found);
  if (scanned.size > SCANNED_KEPT) scanned.delete(scanned.keys().next().value as string);
  return found;
}

/**
 * The names in `text` (see the file's comment) between `from` and `to` (the removed middle;
 * the whole text by default, a run cut by either end left out), each once, in order of first
 * appearance, that `shown` (the part of the text that stays) does not already hold.
 */
export function elidedNames(text: string, shown: string, from = 0, to = text.length): string[] {
  const names = new Set<string>();
  const skipped = new Set<string>();
  for (const { name, runStart, runEnd } of namesOf(text)) {
    if (runStart < from || runEnd > to || names.has(name) || skipped.has(name)) continue;
    if (shown.includes(name)) skipped.add(name);
    else names.add(name);
  }
  return [...names];
}

/**
 * Every name in `text` (see the file's comment), each once, in order of first appearance: the
 * paths, file names, code names, long flags and error codes a reader would type again.
 */
export function namesIn(text: string): string[] {
  return elidedNames(text, "");
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
