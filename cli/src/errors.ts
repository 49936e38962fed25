/** Turning errors into one line (plus a hint) on stderr and an exit code. */
import { ErrorCodes, isCompactionError } from "@compaction/core";
import { ExitCode, type ExitCodeValue } from "./exit-codes.js";
import type { CliIo } from "./io.js";
import { colorEnabled, colors, type Colors } from "./output.js";

/** An error the CLI itself raises (a refusal or a bad argument), with the exit code it means. */
export class CliError extends Error {
  readonly exitCode: ExitCodeValue;
  readonly hint: string | undefined;

  constructor(exitCode: ExitCodeValue, message: string, hint?: string) {
    super(message);
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

/** What a command run with `--json` prints on stdout when it fails (and prints nothing else). */
export interface JsonErrorReport {
  readonly error: {
    /** A stable code: the library's (`COMPACTION_TRANSCRIPT_CORRUPT`, ...) or the CLI's (`COMPACTION_USAGE`, `COMPACTION_SESSION`, `COMPACTION_REFUSED`). */
    readonly code: string;
    readonly message: string;
    readonly hint: string | null;
    readonly exitCode: ExitCodeValue;
  };
}

/** The JSON error object for a thrown value. */
export function errorReport(error: unknown): JsonErrorReport {
  const exitCode = exitCodeFor(error);
  const code = isCompactionError(error) ? error.code : error instanceof CliError ? CLI_ERROR_CODES[error.exitCode] : "COMPACTION_UNEXPECTED";
  const hint = hintOf(error);
  return { error: { code, message: error instanceof Error ? error.message : String(error), hint: hint === undefined || hint === "" ? null : hint, exitCode } };
}

/**
 * The hint shown for an error. The library's hint for a corrupt line names its option
 * (`skipCorrupt`); on the command line the flag is what to pass.
 */
function hintOf(error: unknown): string | undefined {
  if (isCompactionError(error) && error.code === ErrorCodes.TRANSCRIPT_CORRUPT) {
    return "Pass --skip-corrupt to read past it (e.g. compaction --skip-corrupt context status); the file is not changed.";
  }
  return error instanceof CliError || isCompactionError(error) ? error.hint : undefined;
}

/** `compaction: <message>` then, when there is one, `hint: <hint>`; newline-terminated. */
export function renderError(error: unknown, c: Colors): string {
  const message = error instanceof Error ? error.message : String(error);
  const hint = hintOf(error);
  const known = error instanceof CliError || isCompactionError(error);
  const head = `${c.red("compaction:")} ${known ? "" : "unexpected error: "}${message}`;
  return hint === undefined || hint === "" ? `${head}\n` : `${head}\n${c.dim("hint:")} ${hint}\n`;
}

/** How the command line asked for output: `--json`; `color` is false with `--no-color`. */
export interface OutputFlags {
  readonly json: boolean;
  readonly color: boolean;
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
  return { json: words.includes("--json"), color: !words.includes("--no-color") };
}

/**
 * A failure as the user sees it: `renderError` on stderr (coloured unless `--no-color`) and, with
 * `--json`, the JSON error on stdout, so that a script reading the output gets one JSON object
 * either way, unless the command already printed its own report (compact prints its plan with
 * the reason). Returns the exit code.
 */
export function reportFailure(error: unknown, io: CliIo, line: OutputFlags & { readonly stdoutWritten: boolean }): ExitCodeValue {
  io.stderr.write(renderError(error, colors(colorEnabled(io.stderr, io.env, line.color))));
  if (line.json && !line.stdoutWritten) io.stdout.write(`${JSON.stringify(errorReport(error), null, 2)}\n`);
  return exitCodeFor(error);
}
