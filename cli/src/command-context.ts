/** What each command's action gets: the io, the global options, and colours for its streams. */
import type { Command } from "commander";
import { CliError } from "./errors.js";
import { ExitCode } from "./exit-codes.js";
import type { CliIo } from "./io.js";
import { colorEnabled, colors, type Colors } from "./output.js";
import { programName, type ProgramName } from "./program-name.js";
import type { SessionSelection } from "./session-target.js";

/** `--session`, as every session command declares it: `.option(...SESSION_OPTION)`. */
export const SESSION_OPTION = [
  "-s, --session <id|path>",
  "session file path, or session id (or its start), a session in a database (sqlite:<file>#<id>, postgres://host/db#<id>), or an OpenClaw session (openclaw:<agent>, agent:<agent>:<key>, or an openclaw-agent.sqlite); default: the current directory's latest",
] as const;

/** `--agent`, as every command that builds a compactor declares it: `.option(...AGENT_OPTION)`. */
export const AGENT_OPTION = ["-a, --agent <name>", "apply this agent's section of the config"] as const;

/** The options of the program itself (`compaction --sessions-dir ... <command>`). */
export interface GlobalOptions {
  readonly sessionsDir?: string;
  readonly skipCorrupt?: boolean;
  readonly color: boolean;
  /** False with `--no-project-code`: the project's code configuration and plugin files are not run. */
  readonly projectCode: boolean;
  /** `--verbose`: an error also shows the stack of what caused it. */
  readonly verbose?: boolean;
}

export interface CommandContext {
  readonly io: CliIo;
  /** Colours for stdout. */
  readonly out: Colors;
  /** Colours for stderr. */
  readonly err: Colors;
  readonly globals: GlobalOptions;
  /** How the user ran the CLI (`npx compaction`, `compaction`): the start of every command line a command prints. */
  readonly program: ProgramName;
}

/** The context for the command being run (global options read through `optsWithGlobals`). */
export function commandContext(command: Command, io: CliIo): CommandContext {
  const globals = command.optsWithGlobals<GlobalOptions>();
  return {
    io,
    globals,
    program: programName(io.env),
    out: colors(colorEnabled(io.stdout, io.env, globals.color)),
    err: colors(colorEnabled(io.stderr, io.env, globals.color)),
  };
}

/** The session selection from `--session` and the global options. */
export function sessionSelection(context: CommandContext, session: string | undefined): SessionSelection {
  return { session, sessionsDir: context.globals.sessionsDir, skipCorrupt: context.globals.skipCorrupt === true };
}

/**
 * A count option (`--depth`, `--limit`): a whole number of at least 1, or undefined when left
 * out; anything else is a usage error naming the flag, with `hint` saying what to pass.
 */
export function countOption(text: string | undefined, flag: string, hint: string): number | undefined {
  if (text === undefined) return undefined;
  const count = Number(text);
  if (!Number.isInteger(count) || count < 1) throw new CliError(ExitCode.USAGE, `${flag} expects a whole number of at least 1, but got '${text}'.`, hint);
  return count;
}
