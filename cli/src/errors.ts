/** Turning errors into one line (plus a hint) on stderr and an exit code. */
import { ErrorCodes, isCompactionError } from "@compaction/core";
import { ExitCode, type ExitCodeValue } from "./exit-codes.js";
import type { CliIo } from "./io.js";
import { colorEnabled, colors, type Colors } from "./output.js";
import { type ProgramName, programName, spellCommands } from "./program-name.js";

/** An error the CLI itself raises (a refusal or a bad argument), with the exit code it means. */
export class CliError extends Error {
  readonly exitCode: ExitCodeValue;
  /** What to do. A command it names is written `compaction <command>`; it is shown as the user ran the CLI (program-name.ts). */
  readonly hint: string | undefined;

  /** `cause`: the error behind it (a failed compaction's CompactionError), shown with `--verbose` and in `--json`. */
  constructor(exitCode: ExitCodeValue, message: string, hint?: string, options?: { readonly cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CliError";
    this.exitCode = exitCode;
    this.hint = hint;
  }
}

const SESSION_CODES: ReadonlySet<string> = new Set([
  ErrorCodes.TRANSCRIPT_NOT_FOUND,
  ErrorCodes.TRANSCRIPT_CORRUPT,
  ErrorCodes.TRANSCRIPT_INVALID,
  ErrorCodes.SESSION_STATE_INVALID,
]);

const CONFIG_CODES: ReadonlySet<string> = new Set([
  ErrorCodes.CONFIG_INVALID,
  ErrorCodes.CONFIG_UNREADABLE,
  ErrorCodes.PLUGIN_NOT_FOUND,
  ErrorCodes.PLUGIN_INVALID,
  ErrorCodes.PLUGIN_OPTIONS_INVALID,
  ErrorCodes.ENCODING_UNKNOWN,
]);

/** The exit code for a thrown value (see exit-codes.ts). */
export function exitCodeFor(error: unknown): ExitCodeValue {
  if (error instanceof CliError) return error.exitCode;
  if (isCompactionError(error)) {
    if (SESSION_CODES.has(error.code)) return ExitCode.SESSION;
    if (CONFIG_CODES.has(error.code)) return ExitCode.CONFIG;
    if (error.code === ErrorCodes.INPUT_INVALID) return ExitCode.USAGE;
    if (error.code === ErrorCodes.STORE_UNAVAILABLE) return ExitCode.UNAVAILABLE;
  }
  return ExitCode.FAILED;
}

/** The stable code of a CliError, by what its exit code means (library errors carry their own). */
const CLI_ERROR_CODES: Readonly<Record<ExitCodeValue, string>> = {
  [ExitCode.OK]: "COMPACTION_OK",
  [ExitCode.FAILED]: "COMPACTION_REFUSED",
  [ExitCode.USAGE]: "COMPACTION_USAGE",
  [ExitCode.SESSION]: "COMPACTION_SESSION",
  [ExitCode.CONFIG]: "COMPACTION_CONFIG_INVALID",
  [ExitCode.UNAVAILABLE]: "COMPACTION_STORE_UNAVAILABLE",
};

/**
 * What an error says beyond its message, where it says it: the plugin and the hook it failed in
 * (COMPACTION_PLUGIN_FAILED), and what was thrown underneath (a plugin's own error), with its stack.
 */
export interface ErrorSource {
  readonly plugin?: string;
  readonly hook?: string;
  readonly cause?: { readonly message: string; readonly stack: string | null };
}

/** What a command run with `--json` prints on stdout when it fails (and prints nothing else). */
export interface JsonErrorReport {
  readonly error: {
    /** A stable code: the library's (`COMPACTION_TRANSCRIPT_CORRUPT`, ...) or the CLI's (`COMPACTION_USAGE`, `COMPACTION_SESSION`, `COMPACTION_REFUSED`). */
    readonly code: string;
    readonly message: string;
    readonly hint: string | null;
    readonly exitCode: ExitCodeValue;
  } & ErrorSource;
}

/**
 * The JSON error object for a thrown value; the hint's commands spelled as `program` runs the CLI,
 * and `command` (`compare`, `context status`) the command that failed, when one did.
 */
export function errorReport(error: unknown, program: ProgramName, command?: string): JsonErrorReport {
  const exitCode = exitCodeFor(error);
  const code = isCompactionError(error) ? error.code : error instanceof CliError ? CLI_ERROR_CODES[error.exitCode] : "COMPACTION_UNEXPECTED";
  const hint = hintOf(error, program, command);
  return { error: { code, message: error instanceof Error ? error.message : String(error), hint: hint === undefined || hint === "" ? null : hint, exitCode, ...errorSource(error) } };
}

/** The plugin and hook the error (or an error behind it) names, and the innermost error behind it. */
export function errorSource(error: unknown): ErrorSource {
  const chain = causeChain(error);
  const named = chain.find((link) => isCompactionError(link) && link.plugin !== undefined);
  const plugin = isCompactionError(named) ? named.plugin : undefined;
  const hook = isCompactionError(named) ? named.hook : undefined;
  const innermost = chain.length > 1 ? chain.at(-1) : undefined;
  return {
    ...(plugin === undefined ? {} : { plugin }),
    ...(hook === undefined ? {} : { hook }),
    ...(innermost === undefined ? {} : { cause: { message: innermost instanceof Error ? innermost.message : String(innermost), stack: innermost instanceof Error ? (innermost.stack ?? null) : null } }),
  };
}

/** The error, then each `cause` behind it, in order (a cycle ends it). */
function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let link: unknown = error; link !== undefined && !chain.includes(link); link = link instanceof Error ? link.cause : undefined) chain.push(link);
  return chain;
}

/**
 * The hint shown for an error. The library's hint for a corrupt line names its option
 * (`skipCorrupt`); on the command line the flag is what to pass, to the command that met the line
 * (a `context status` example would read the file but not do what was asked). Hints, the CLI's
 * and the libraries', name commands as `compaction <command>`: they are shown as `program` runs
 * the CLI.
 */
function hintOf(error: unknown, program: ProgramName, command?: string): string | undefined {
  if (isCompactionError(error) && error.code === ErrorCodes.TRANSCRIPT_CORRUPT) {
    const rerun = command === undefined ? `e.g. ${program} --skip-corrupt context status` : `${program} ${command} … --skip-corrupt`;
    return `Pass --skip-corrupt to read past it (${rerun}); the file is not changed.`;
  }
  const hint = error instanceof CliError || isCompactionError(error) ? error.hint : undefined;
  return hint === undefined ? undefined : spellCommands(hint, program);
}

/**
 * `compaction: <message>` then, when there is one, `hint: <hint>`; newline-terminated. With
 * `verbose`, the stack of what was thrown (the innermost cause; an unexpected error's own);
 * without it, a plugin's failure says that `--verbose` shows it.
 */
export function renderError(error: unknown, c: Colors, verbose: boolean, program: ProgramName, command?: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const hint = hintOf(error, program, command);
  const known = error instanceof CliError || isCompactionError(error);
  const lines = [`${c.red("compaction:")} ${known ? "" : "unexpected error: "}${message}`];
  if (hint !== undefined && hint !== "") lines.push(`${c.dim("hint:")} ${hint}`);
  const source = errorSource(error);
  const stack = source.cause?.stack ?? (known || !(error instanceof Error) ? null : (error.stack ?? null));
  if (verbose && stack !== null) lines.push(`${c.dim("stack:")} ${stack}`);
  else if (!verbose && source.cause?.stack != null && causeChain(error).some((link) => isCompactionError(link) && link.code === ErrorCodes.PLUGIN_FAILED)) {
    lines.push(c.dim(`(--verbose shows the stack of what plugin '${source.plugin ?? "?"}' threw${source.hook === undefined ? "" : ` in ${source.hook}`})`));
  }
  return `${lines.join("\n")}\n`;
}

/** How the command line asked for output: `--json`; `color` is false with `--no-color`; `verbose` with `--verbose`. */
export interface OutputFlags {
  readonly json: boolean;
  readonly color: boolean;
  readonly verbose?: boolean;
}

/**
 * The output flags as written on a command line that was not parsed (a failure outside any
 * command): the words `--json` and `--no-color` before a `--`, after which words are arguments.
 * A command's own failures use its parsed options instead, so an option's value spelled
 * `--json` (`--session --json`) asks for nothing.
 */
export function outputFlagsOf(argv: readonly string[]): OutputFlags {
  const end = argv.indexOf("--");
  const words = end < 0 ? argv : argv.slice(0, end);
  return { json: words.includes("--json"), color: !words.includes("--no-color"), verbose: words.includes("--verbose") };
}

/**
 * A failure as the user sees it: `renderError` on stderr (coloured unless `--no-color`) and, with
 * `--json`, the JSON error on stdout, so that a script reading the output gets one JSON object
 * either way, unless the command already printed its own report (compact prints its plan with
 * the reason). `command` is the command that failed (`context status`), when one did. Returns the
 * exit code.
 */
export function reportFailure(error: unknown, io: CliIo, line: OutputFlags & { readonly stdoutWritten: boolean; readonly command?: string }): ExitCodeValue {
  const program = programName(io.env);
  io.stderr.write(renderError(error, colors(colorEnabled(io.stderr, io.env, line.color)), line.verbose === true, program, line.command));
  if (line.json && !line.stdoutWritten) io.stdout.write(`${JSON.stringify(errorReport(error, program, line.command), null, 2)}\n`);
  return exitCodeFor(error);
}
