/** Turning errors into one line (plus a hint) on stderr and an exit code. */
import { ErrorCodes, isCompactionError } from "@compaction/core";
import { ExitCode, type ExitCodeValue } from "./exit-codes.js";
import type { Colors } from "./output.js";

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
  }
  return ExitCode.FAILED;
}

/** `compaction: <message>` then, when there is one, `hint: <hint>`; newline-terminated. */
export function renderError(error: unknown, c: Colors): string {
  const message = error instanceof Error ? error.message : String(error);
  const hint = error instanceof CliError || isCompactionError(error) ? error.hint : undefined;
  const known = error instanceof CliError || isCompactionError(error);
  const head = `${c.red("compaction:")} ${known ? "" : "unexpected error: "}${message}`;
  return hint === undefined || hint === "" ? `${head}\n` : `${head}\n${c.dim("hint:")} ${hint}\n`;
}
