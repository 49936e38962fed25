/**
 * Finds exact identifiers in text: URLs, UUIDs, file paths, commit hashes, issue ids, env var
 * names, host:port pairs, numbers with units and names in backticks. One regex pass per text.
 */

const FILE_EXTENSIONS =
  "ts|tsx|mts|cts|js|jsx|mjs|cjs|json|jsonl|md|mdx|py|rs|go|java|kt|swift|c|h|cc|cpp|hpp|cs|rb|php|sh|bash|zsh|yml|yaml|toml|ini|lock|css|scss|html|vue|svelte|sql|txt|csv|xml|env|proto|graphql|dockerfile";

/**
 * The most dots a file name's stem may hold (`jquery.min.js` has one). Unbounded, a long run of
 * `a.a.a.a…` made the file-name pattern try every word to the run's end: quadratic time.
 */
const MOST_DOTS = 16;
/**
 * Where a file name starts: at the first word character of a run of `[\w-]` (after any leading
 * `-`), the only place such a match can start first. Starting at every `-` inside the run, as
 * `\b` allows, a run of `a-a-a-a…` made the pattern try every start to the run's end: quadratic.
 */
const FILE_NAME_START = String.raw`(?=\w)(?<=(?:^|[^\w-])-*)`;

/** What an identifier is, in the order the regex tries them: the first that matches at a place wins. */
const KINDS = ["url", "uuid", "code", "path", "hostport", "hash", "issue", "env", "port", "quantity"] as const;
type Kind = (typeof KINDS)[number];

const PATTERNS: Readonly<Record<Kind, string>> = {
  url: String.raw`\bhttps?:\/\/[^\s<>"'\x60()\[\]{}]+`,
  uuid: String.raw`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`,
  code: String.raw`\x60[^\x60\n]{1,120}\x60`,
  path: String.raw`(?:~|\.{1,2})?\/?(?:[\w@.+-]+\/)+[\w@.+-]*[\w@+-]|${FILE_NAME_START}[\w-]+(?:\.[\w-]+){0,${MOST_DOTS}}\.(?:${FILE_EXTENSIONS})\b`,
  hostport: String.raw`\b(?:localhost|\d{1,3}(?:\.\d{1,3}){3}):\d{2,5}\b`,
  hash: String.raw`\b[0-9a-f]{7,40}\b`,
  issue: String.raw`(?<![\w&#])#\d{1,7}\b`,
  env: String.raw`\$\{?[A-Z_][A-Z0-9_]*\}?|\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b`,
  port: String.raw`\bport\s+\d{2,5}\b`,
  quantity: String.raw`\b\d+(?:\.\d+)?\s?(?:ms|µs|ns|secs?|seconds?|minutes?|mins?|hours?|[KMGT]i?B|kB|bytes|px|rem|tokens?)\b|\b\d+(?:\.\d+)?(?:s|h|k)\b|\b\d+(?:\.\d+)?%`,
};

/** Characters a path's words are made of (the path pattern's `[\w@.+-]`). */
const PATH_CHARACTER = String.raw`[\w@.+-]`;

/**
 * The path pattern's first alternative, starting only where no path character precedes it
 * (except at a `~`). Where one does, the same alternative also matches a character earlier:
 * `c` + `./x/` is the word `c./` then `x/`, and `c` + `/x/` the word `c/` then `x/`. So a search
 * from where the previous match ended finds the same first match with or without this condition,
 * except one starting right there (see `nextMatch`). Without it, the regex tries the path at every
 * character of every word and runs to the word's end each time: most of the scan's time.
 */
const PATH_AT_WORD_START = PATTERNS.path.replace(String.raw`(?:~|\.{1,2})?`, String.raw`(?:~|(?<!${PATH_CHARACTER})\.{0,2})`);
if (PATH_AT_WORD_START === PATTERNS.path) throw new Error("identifiers: the path pattern no longer starts as PATH_AT_WORD_START expects");

/**
 * Every kind as one alternative, capture group `i + 1` for `KINDS[i]`: numbered groups, since a
 * match with named groups also builds a `groups` object, a quarter of the scan's time.
 */
const alternatives = (path: string): string => KINDS.map((kind) => `(${kind === "path" ? path : PATTERNS[kind]})`).join("|");
/**
 * Where a search may find an identifier: not after a word character (`\w`), except at one of
 * `` ` $ ~ - ``. After a word character every other alternative fails at once: they start with
 * `\b` and a word character, or with a lookbehind that refuses one (the issue id's, the path's
 * above); only a code span, a `$VARIABLE`, a `~/` path and a file name after `-` may start there.
 * Checked first, it spares the search trying ten alternatives inside every word.
 */
const MAY_START = String.raw`(?:(?<!\w)|(?=[\x60$~-]))`;
/** The identifier regex, searching (paths only from a word's start: see PATH_AT_WORD_START and MAY_START). */
const IDENTIFIER = new RegExp(`${MAY_START}(?:${alternatives(PATH_AT_WORD_START)})`, "gu");
/** @internal The identifier regex as defined (the search above finds the same matches faster). */
export const IDENTIFIER_SOURCE = alternatives(PATTERNS.path);
/** The identifier regex as defined, tried at one place only: where the previous match ended. */
const IDENTIFIER_HERE = new RegExp(IDENTIFIER_SOURCE, "yu");
const PATH_CHARACTER_BEFORE = new RegExp(`${PATH_CHARACTER}$`);

/** The kind whose alternative matched. */
function kindOf(match: RegExpExecArray): Kind {
  for (let group = 1; group < KINDS.length; group++) if (match[group] !== undefined) return KINDS[group - 1] as Kind;
  return KINDS[KINDS.length - 1] as Kind;
}

const FUNCTION_LIKE = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*(?:\(\))?$/;
/** Marks of a code name, as opposed to a plain word in backticks: `()`, `.`, `_`, `$`, camelCase, ALLCAPS. */
const CODE_NAME_MARK = /[().$_]|[a-z][A-Z]|^[A-Z][A-Z0-9]{3,}$/;
const HAS_DIGIT = /\d/;
const HAS_HEX_LETTER = /[a-f]/;
const FILE_NAME = /\.[A-Za-z0-9]{1,10}$/;
const HAS_LETTER = /[A-Za-z]/;
const TRAILING_URL_PUNCTUATION = /[.,;:!?]+$/;

/** Calls `sink` with every identifier in `text`, in order of appearance, exactly as written. */
export function collectIdentifiers(text: string, sink: (identifier: string) => void): void {
  scan(text, sink, true);
}

function scan(text: string, sink: (identifier: string) => void, allowCode: boolean): void {
  // Where the next search starts is kept here, not in the shared regex: the inner scan of a
  // backtick span uses the regex too.
  let from = 0;
  for (;;) {
    const match = nextMatch(text, from);
    if (match === null) return;
    from = match.index + match[0].length;
    const found = match[0];
    switch (kindOf(match)) {
      case "url":
        sink(found.replace(TRAILING_URL_PUNCTUATION, ""));
        break;
      case "code": {
        const inner = found.slice(1, -1).trim();
        if (FUNCTION_LIKE.test(inner)) {
          if (CODE_NAME_MARK.test(inner)) sink(inner);
        } else if (allowCode) {
          scan(inner, sink, false);
        }
        break;
      }
      case "path":
        if (isLikelyPath(found)) sink(found);
        break;
      case "hash":
        if (HAS_DIGIT.test(found) && HAS_HEX_LETTER.test(found)) sink(found);
        break;
      default:
        sink(found);
    }
  }
}

/**
 * @internal The first match of the identifier regex at or after `from`. Where a path character
 * precedes `from` (the previous match ended inside a word), a path may start right there, as in
 * `$HOME` + `/bin/x`: the regex as defined is tried there first, when a path can start there at
 * all (see `pathMayStartAt`).
 */
export function nextMatch(text: string, from: number): RegExpExecArray | null {
  if (from > 0 && PATH_CHARACTER_BEFORE.test(text[from - 1] as string) && pathMayStartAt(text, from)) {
    IDENTIFIER_HERE.lastIndex = from;
    const here = IDENTIFIER_HERE.exec(text);
    if (here !== null) return here;
  }
  IDENTIFIER.lastIndex = from;
  return IDENTIFIER.exec(text);
}

/** The end of the last run of path characters measured (see `pathMayStartAt`). */
let measured = { text: "", from: -1, end: -1 };
const PATH_CHARACTERS = new RegExp(`${PATH_CHARACTER}*`, "y");

/**
 * Whether a path can start at `from` inside a word: at a `~` or a `/`, or where the path
 * characters from `from` on end at a `/` (a path inside a word needs one; a file name cannot start
 * there, see FILE_NAME_START). Every other alternative of the regex starts at a word boundary or
 * after a lookbehind that a path character before `from` refuses, so the search below finds them.
 * Without this, a run of `a.ts.a.ts…` tried the path from every match to the run's end:
 * quadratic. The run's end is remembered while the next `from` is inside it, so each character is
 * measured once.
 */
function pathMayStartAt(text: string, from: number): boolean {
  const first = text[from];
  if (first === "~" || first === "/") return true;
  if (measured.text !== text || from < measured.from || from > measured.end) {
    PATH_CHARACTERS.lastIndex = from;
    PATH_CHARACTERS.exec(text);
    measured = { text, from, end: PATH_CHARACTERS.lastIndex };
  }
  return text[measured.end] === "/";
}

/**
 * A slash-separated word is a path when it starts like one (`/`, `./`, `../`, `~/`), has at
 * least two slashes, or ends in a file name with an extension; this keeps "and/or" and
 * "read/write" out.
 */
function isLikelyPath(candidate: string): boolean {
  if (!HAS_LETTER.test(candidate)) return false;
  if (!candidate.includes("/")) return true; // a bare file name with a known extension
  if (/^(?:\/|\.{1,2}\/|~\/)/.test(candidate)) return candidate.length > 2;
  let slashes = 0;
  for (let i = 0; i < candidate.length; i++) if (candidate.charCodeAt(i) === 47) slashes++;
  if (slashes >= 2) return true;
  return FILE_NAME.test(candidate);
}
