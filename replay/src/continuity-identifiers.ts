/**
 * The identifier rule of the continuity measure: the exact strings an agent cannot guess and must
 * have in its context to go on (a path it edits, a name in the code it changes, the command that
 * fails, a commit, an error code). Plain words are not identifiers: any context "holds" them.
 *
 * The rule, in the order the kinds are tried (each identifier counts once, as written):
 * 1. **Paths**: a word of path characters with a `/` in it that starts with `/`, `./`, `../` or
 *    `~/`, or has at least two `/`, or ends in a file name with an extension
 *    (`src/a.ts`, `/home/x/y`, `~/.config/app`), and a bare file name with an extension of
 *    letters after a name of at least two characters (`package.json`, `README.md`). URLs are
 *    paths too. `and/or` and `input/output` are not.
 * 2. **Code identifiers**: camelCase (`tokensBefore`), PascalCase of two humps or more
 *    (`MessageFacts`), snake_case and SCREAMING_SNAKE_CASE of two parts or more
 *    (`keep_recent`, `COMPACTION_CONFIG_INVALID`), and code spans in backticks of 3 to 60
 *    characters on one line (`` `npm test` ``), except a span of several words made of letters
 *    only, which is prose in backticks.
 * 3. **Commands and flags**: long flags (`--dry-run`), and in a tool call's `command` (or `cmd`)
 *    argument, each command's program and subcommand (`git diff`, `npx vitest`) when the second
 *    word is a plain word (not a flag, path or quoted text); after `run`, `exec` or `x` the
 *    script's name too (`npm run build`), since `npm run` alone names nothing.
 * 4. **Hashes**: UUIDs, and runs of 7 to 40 hex digits holding a digit and a letter (`64f203a`).
 * 5. **Error codes**: Node's `E…` error names (`ENOENT`, `EADDRINUSE`, ...), compiler codes of a
 *    few capitals and four digits or more (`TS2345`, `E0308`); `ERR_…` names fall under rule 2.
 *
 * Every identifier has at least three characters and a letter; trailing `.,:;` is dropped.
 * Whether a context *holds* an identifier is verbatim containment in the context's text (message
 * text, thinking, tool-call arguments, tool output, summaries): see `contextText`.
 */
import type { MessageFacts } from "@compaction/core";

const PATH = String.raw`(?:https?:\/\/)?(?:~|\.{1,2})?\/?[\w@.+-]+(?:\/[\w@.+-]+)+\/?`;
const FILE_NAME = String.raw`\b[\w-]{2,}(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,9}\b`;
const UUID = String.raw`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`;
const HASH = String.raw`\b[0-9a-f]{7,40}\b`;
const CAMEL = String.raw`\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\b`;
const PASCAL = String.raw`\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b`;
const SNAKE = String.raw`\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b`;
const BACKTICKED = String.raw`\x60([^\x60\n]{3,60})\x60`;
const FLAG = String.raw`(?<![\w-])--[a-z][\w-]*[a-z0-9]`;
const ERRNO = String.raw`\bE(?:NOENT|ACCES|ADDRINUSE|ADDRNOTAVAIL|EXIST|PERM|CONNREFUSED|CONNRESET|CONNABORTED|TIMEDOUT|NOTDIR|ISDIR|MFILE|PIPE|NOTEMPTY|NOTFOUND|AGAIN|BUSY|INVAL|NOSPC|ROFS|XDEV|LOOP|NAMETOOLONG)\b`;
const COMPILER_CODE = String.raw`\b[A-Z]{1,3}\d{4,5}\b`;

/** Known file extensions are not needed: a file name is a name, a dot and a short extension. */
const HAS_LETTER = /[A-Za-z]/;
const HAS_DIGIT = /\d/;
/** A code span of several plain words is prose in backticks (`inline code`), not a name. */
const PROSE = /^[A-Za-z]+(?: [A-Za-z]+)+$/;
const FILE_EXTENSION = /\.[A-Za-z][A-Za-z0-9]{0,9}\/?$/;
/** A bare file name that is really a sentence's end and the next word ("done.Then") or a number. */
const NOT_A_FILE = /^(?:\d+(?:\.\d+)+|[A-Za-z]+\.[A-Z][a-z]+|e\.g|i\.e|etc\..*)$/;

const pattern = (source: string): RegExp => new RegExp(source, "g");
const PATTERNS = {
  uuid: pattern(UUID),
  path: pattern(PATH),
  file: pattern(FILE_NAME),
  hash: pattern(HASH),
  camel: pattern(CAMEL),
  pascal: pattern(PASCAL),
  snake: pattern(SNAKE),
  backticked: pattern(BACKTICKED),
  flag: pattern(FLAG),
  errno: pattern(ERRNO),
  compiler: pattern(COMPILER_CODE),
};

function isPath(word: string): boolean {
  if (/^https?:\/\//.test(word)) return true;
  if (/^(?:~|\.{1,2})?\//.test(word)) return true;
  if ((word.match(/\//g) ?? []).length >= 2) return true;
  return FILE_EXTENSION.test(word) && !/^\d/.test(word.split("/").pop() ?? "");
}

function clean(value: string): string {
  return value.trim().replace(/[.,:;]+$/, "");
}

/** The identifiers of `text` by the rule above, each once, in order of kind then appearance. */
export function identifiersOf(text: string): string[] {
  const found = new Set<string>();
  const add = (value: string): void => {
    const identifier = clean(value);
    if (identifier.length >= 3 && HAS_LETTER.test(identifier)) found.add(identifier);
  };
  for (const match of text.matchAll(PATTERNS.uuid)) add(match[0]);
  for (const match of text.matchAll(PATTERNS.path)) if (isPath(clean(match[0]))) add(match[0]);
  for (const match of text.matchAll(PATTERNS.file)) if (!NOT_A_FILE.test(match[0]) && !/^\d/.test(match[0])) add(match[0]);
  for (const name of ["camel", "pascal", "snake"] as const) for (const match of text.matchAll(PATTERNS[name])) add(match[0]);
  for (const match of text.matchAll(PATTERNS.backticked)) if (!PROSE.test(match[1] ?? "")) add(match[1] ?? "");
  for (const match of text.matchAll(PATTERNS.flag)) add(match[0]);
  for (const match of text.matchAll(PATTERNS.hash)) if (HAS_DIGIT.test(match[0])) add(match[0]);
  for (const match of text.matchAll(PATTERNS.errno)) add(match[0]);
  for (const match of text.matchAll(PATTERNS.compiler)) add(match[0]);
  return [...found];
}

const COMMAND_KEYS = new Set(["command", "cmd"]);
const PROGRAM = /^[a-z][\w.-]*$/;
const SUBCOMMAND = /^[a-z][\w:-]*$/;
const RUNS_A_SCRIPT = new Set(["run", "exec", "x", "run-script"]);

/** Program and subcommand of each command in a shell command line (split at `&&`, `||`, `;`, `|`, newlines). */
export function commandsOf(commandLine: string): string[] {
  const found = new Set<string>();
  for (const part of commandLine.split(/&&|\|\||[;|\n]/)) {
    const words = part.trim().split(/\s+/);
    // `cd x && npm test`, `FOO=1 npm test`, `sudo npm test`: the command is after the prefix.
    while (words.length > 0 && (/^[A-Z_][A-Z0-9_]*=/.test(words[0] ?? "") || words[0] === "sudo" || words[0] === "env" || words[0] === "time")) words.shift();
    const [program, subcommand] = words;
    if (program === undefined || subcommand === undefined) continue;
    if (!PROGRAM.test(program) || !SUBCOMMAND.test(subcommand) || program === "cd" || program === "echo") continue;
    const script = words[2];
    if (RUNS_A_SCRIPT.has(subcommand) && script !== undefined && SUBCOMMAND.test(script)) found.add(`${program} ${subcommand} ${script}`);
    else found.add(`${program} ${subcommand}`);
  }
  return [...found];
}

/** String values of a tool call's arguments, nested ones too (a JSON string argument is read as JSON). */
function argumentStrings(value: unknown, key: string | undefined, strings: string[], commands: string[]): void {
  if (typeof value === "string") {
    strings.push(value);
    if (key !== undefined && COMMAND_KEYS.has(key)) commands.push(value);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) argumentStrings(item, key, strings, commands);
    return;
  }
  if (typeof value === "object" && value !== null) {
    for (const [name, item] of Object.entries(value as Record<string, unknown>)) argumentStrings(item, name, strings, commands);
  }
}

/** Everything a message says, as the model sees it: text, thinking and tool-call arguments. */
export interface MessageWords {
  readonly text: string;
  /** Shell command lines among the tool-call arguments. */
  readonly commands: readonly string[];
}

/** The words of one message (see `MessageWords`). */
export function wordsOf(facts: MessageFacts): MessageWords {
  const strings: string[] = [facts.text, facts.thinking];
  const commands: string[] = [];
  for (const call of facts.toolCalls) {
    let args: unknown = call.arguments;
    if (typeof args === "string") {
      try {
        args = JSON.parse(args);
      } catch {
        // Arguments that are not JSON are one string, as written.
      }
    }
    argumentStrings(args, undefined, strings, commands);
  }
  return { text: strings.filter((s) => s !== "").join("\n"), commands };
}

/** The identifiers a message's words hold: rule 1–5 on its text, and the commands of its command lines. */
export function messageIdentifiers(words: MessageWords): string[] {
  const found = new Set(identifiersOf(words.text));
  for (const line of words.commands) for (const command of commandsOf(line)) found.add(command);
  return [...found];
}

/** The text a context holds, for "does it hold this identifier": every message's words, one per line. */
export function contextText(facts: readonly MessageFacts[]): string {
  return facts.map((one) => wordsOf(one).text).join("\n");
}
