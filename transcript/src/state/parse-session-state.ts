/**
 * Reads a session-state document (`compaction context import`): JSON syntax, then the
 * `format` and `version` marks, then the schema. Every failure is a CompactionError with code
 * `COMPACTION_SESSION_STATE_INVALID` naming the file, the JSON path, what was expected and
 * found, and what to do.
 */
import {
  CompactionError,
  describeValue,
  ErrorCodes,
  SESSION_STATE_FORMAT,
  SESSION_STATE_VERSION,
  type SessionState,
  showPointer,
} from "@compaction/core";
import { describeJsonError } from "../parse.js";
import { problemsFromAjv, type SessionStateProblem } from "./schema-problems.js";
import { validateSessionStateData } from "./session-state-schema.js";

/** Problems listed in one message; the rest are counted. */
const MAX_LISTED_PROBLEMS = 10;
const EXPORT_HINT = "Export the session again with `compaction context export <file>`.";

/** Parses and validates a session-state document. `file` is named in errors. */
export function parseSessionState(text: string, file?: string): SessionState {
  const data = parseJson(text, file);
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw invalid(file, [{ path: "", message: `expected a JSON object, found ${describeValue(data)}`, hint: EXPORT_HINT }]);
  }
  const record = data as Record<string, unknown>;
  if (record["format"] !== SESSION_STATE_FORMAT) {
    throw stateError(
      file,
      `${label(file)} is not a compaction session state: expected "format": ${JSON.stringify(SESSION_STATE_FORMAT)}, found ${describeValue(record["format"])}`,
      "/format",
      `Pass a file written by \`compaction context export\`. ${EXPORT_HINT}`,
    );
  }
  const version = record["version"];
  if (typeof version === "number" && version > SESSION_STATE_VERSION) {
    throw stateError(
      file,
      `${label(file)} is a session state of version ${version}, written by a newer compaction; this one reads version ${SESSION_STATE_VERSION}`,
      "/version",
      "Update @compaction/core (and the compaction CLI) to read it, or export the session again with this version.",
    );
  }
  const problems = [...problemsFromAjv(validateSessionStateData(data)), ...toolCountProblems(record)];
  if (problems.length > 0) throw invalid(file, problems);
  return data as SessionState;
}

function parseJson(text: string, file: string | undefined): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const at = jsonErrorPosition(text, error);
    const where = at === undefined ? "" : ` at line ${at.line}, column ${at.column}`;
    throw stateError(
      file,
      `Cannot read session state${file === undefined ? "" : ` ${file}`}: not valid JSON${where}: ${describeJsonError(error)}`,
      "",
      `Fix the JSON syntax there (a trailing comma or an unquoted key is typical), or ${lowerFirst(EXPORT_HINT)}`,
      error,
    );
  }
}

/** 1-based line and column of a JSON.parse error, from "at position N" or "(line L column C)". */
function jsonErrorPosition(text: string, error: unknown): { line: number; column: number } | undefined {
  const message = error instanceof Error ? error.message : "";
  const lineColumn = /\(line (\d+) column (\d+)\)/.exec(message);
  if (lineColumn !== null) return { line: Number(lineColumn[1]), column: Number(lineColumn[2]) };
  const position = /at position (\d+)/.exec(message);
  if (position === null) {
    if (!/end of (?:JSON )?input/i.test(message)) return undefined;
    return positionOf(text, text.length);
  }
  return positionOf(text, Number(position[1]));
}

function positionOf(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf("\n") + 1;
  return { line: before.split("\n").length, column: offset - lineStart + 1 };
}

/** `failed` can never exceed `calls`; the schema cannot say so. */
function toolCountProblems(record: Record<string, unknown>): SessionStateProblem[] {
  const operations = record["toolOperations"] as { tools?: unknown } | undefined;
  const tools = operations?.tools;
  if (!Array.isArray(tools)) return [];
  const problems: SessionStateProblem[] = [];
  tools.forEach((tool: unknown, index) => {
    const { calls, failed } = (tool ?? {}) as { calls?: unknown; failed?: unknown };
    if (typeof calls !== "number" || typeof failed !== "number" || failed <= calls) return;
    problems.push({
      path: `/toolOperations/tools/${index}/failed`,
      message: `expected at most 'calls' (${calls}) failed calls, found ${describeValue(failed)}`,
      hint: "Failed calls are counted among the calls: lower 'failed' or raise 'calls'.",
    });
  });
  return problems;
}

function invalid(file: string | undefined, problems: readonly SessionStateProblem[]): CompactionError {
  const first = problems[0] as SessionStateProblem;
  const line = (p: SessionStateProblem) => `${showPointer(p.path)}: ${p.message}. ${p.hint}`;
  const title = `Invalid session state${file === undefined ? "" : ` ${file}`}`;
  let message: string;
  // One problem: its hint goes in `hint` only (the CLI prints it on its own line).
  if (problems.length === 1) message = `${title}: ${showPointer(first.path)}: ${first.message}.`;
  else {
    const listed = problems.slice(0, MAX_LISTED_PROBLEMS).map((p) => `  ${line(p)}`);
    const more = problems.length - listed.length;
    if (more > 0) listed.push(`  ... and ${more} more`);
    message = `${title}: ${problems.length} problems:\n${listed.join("\n")}`;
  }
  const hint = problems.length === 1 ? first.hint : `Fix each property listed (see docs/session-state.md), or ${lowerFirst(EXPORT_HINT)}`;
  return new CompactionError(ErrorCodes.SESSION_STATE_INVALID, message, {
    ...(file === undefined ? {} : { file }),
    path: first.path,
    hint,
  });
}

function stateError(file: string | undefined, message: string, path: string, hint: string, cause?: unknown): CompactionError {
  return new CompactionError(ErrorCodes.SESSION_STATE_INVALID, `${message}.`, {
    ...(file === undefined ? {} : { file }),
    path,
    hint,
    ...(cause === undefined ? {} : { cause }),
  });
}

function label(file: string | undefined): string {
  return file ?? "The document";
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
