/**
 * How the user ran the CLI, so that every command it prints (in `--help`, its examples, hints and
 * error hints) can be typed as printed. In a project the CLI is a dev dependency, not on the PATH:
 * the user runs `npx compaction …` (or `npm exec compaction …`), and npm says so in the
 * environment it gives the command: npm 10 and 11 set `npm_command=exec` and
 * `npm_lifecycle_event=npx` for both. Anything else (a global install, the bin on the PATH, a
 * package script, where npm puts node_modules/.bin on the PATH) runs it as `compaction`.
 */

/** The words that run the CLI, as the user typed them. */
export type ProgramName = "npx compaction" | "compaction";

/** `npx compaction` when npm's npx / `npm exec` started the CLI, else `compaction`. */
export function programName(env: Readonly<Record<string, string | undefined>>): ProgramName {
  return env["npm_command"] === "exec" || env["npm_lifecycle_event"] === "npx" ? "npx compaction" : "compaction";
}

/**
 * The CLI's command paths, as a hint names them after `compaction `: a group with its command
 * (`context export`, not `context`, which prose has: "the compaction context engine"), or a command.
 */
const COMMAND_PATHS = [
  "context (?:status|history|inspect|export|import)",
  "session (?:branch|upgrade|copy|list)",
  "compact",
  "compare",
  "search",
  "autocompact",
  "config",
] as const;

/**
 * `compaction <command>` at a word's start, not already after `npx ` and not inside a path or a
 * package name (`/srv/compaction context export`, `@compaction/cli`).
 */
const COMMAND_LINE = new RegExp(`(?<![\\w@/.\\\\-])(?<!npx )compaction (?=(?:${COMMAND_PATHS.join("|")})\\b)`, "g");

/**
 * `text` with every command line it names (`compaction <command> …`) starting as the user runs
 * the CLI. For the text the CLI prints but does not write itself with the program's name: the
 * hints of the libraries' errors (`Export the session again with \`compaction context export
 * <file>\``), the context manager's advice, and the CLI's own static help and error hints.
 */
export function spellCommands(text: string, program: ProgramName): string {
  return program === "compaction" ? text : text.replace(COMMAND_LINE, `${program} `);
}
