import { readFileSync } from "node:fs";
import { extname } from "node:path";
import type { ErrorObject } from "ajv";
import { CompactionError, describeError, ErrorCodes } from "../errors.js";
import { showPointer } from "./pointer.js";
import { describeSchemaErrors, type SchemaProblem } from "./schema-problems.js";

/** One problem in a config file. */
export type ConfigProblem = SchemaProblem;

export interface ConfigErrorDetails {
  /** Absolute path of the config file. */
  readonly file?: string;
  /** 1-based line of a syntax error, when the loader reported one. */
  readonly line?: number;
  readonly column?: number;
  readonly cause?: unknown;
}

type ConfigErrorCode = typeof ErrorCodes.CONFIG_INVALID | typeof ErrorCodes.CONFIG_UNREADABLE;

/**
 * Every problem found in one config file, thrown together: the message lists each on its own
 * line; `errors` has them as data. `path` and `hint` are the first problem's path and all hints.
 */
export class ConfigError extends CompactionError {
  readonly errors: readonly ConfigProblem[];
  readonly line?: number;
  readonly column?: number;

  constructor(code: ConfigErrorCode, problems: readonly ConfigProblem[], details: ConfigErrorDetails = {}) {
    const first = problems[0];
    if (first === undefined) throw new TypeError("ConfigError needs at least one problem");
    super(code, formatMessage(code, problems, details), {
      ...(details.file === undefined ? {} : { file: details.file }),
      path: first.path,
      hint: problems.length === 1 ? first.hint : problems.map((p) => `${showPointer(p.path)}: ${p.hint}`).join("\n"),
      cause: details.cause,
    });
    this.name = "ConfigError";
    this.errors = Object.freeze([...problems]);
    if (details.line !== undefined) this.line = details.line;
    if (details.column !== undefined) this.column = details.column;
  }
}

function formatMessage(code: ConfigErrorCode, problems: readonly ConfigProblem[], details: ConfigErrorDetails): string {
  const file = details.file === undefined ? "" : ` ${details.file}`;
  const at = details.line === undefined ? "" : ` (line ${details.line}${details.column === undefined ? "" : `, column ${details.column}`})`;
  const title = code === ErrorCodes.CONFIG_UNREADABLE ? `Cannot read compaction config${file}${at}` : `Invalid compaction config${file}`;
  // An unreadable file has one problem, about the whole file: no path to show.
  const where = (p: ConfigProblem) => (code === ErrorCodes.CONFIG_UNREADABLE ? "" : `${showPointer(p.path)}: `);
  // The hints are the error's `hint` (shown after the message): not repeated here.
  const line = (p: ConfigProblem) => `${where(p)}${p.message}.`;
  const [first] = problems;
  if (problems.length === 1 && first !== undefined) return `${title}: ${line(first)}`;
  return `${title}: ${problems.length} problems:\n${problems.map((p) => `  ${line(p)}`).join("\n")}`;
}

/** A CONFIG_INVALID error for problems found in `file`. */
export function configInvalid(file: string | undefined, problems: readonly ConfigProblem[]): ConfigError {
  return new ConfigError(ErrorCodes.CONFIG_INVALID, problems, file === undefined ? {} : { file });
}

// ---------------------------------------------------------------------------------------------
// ajv errors -> problems

/** Turns ajv's errors (compiled with `verbose: true`) into one readable problem each (see describeSchemaErrors). */
export function problemsFromAjv(errors: readonly ErrorObject[]): ConfigProblem[] {
  return describeSchemaErrors(errors, { schemaName: "@compaction/core/schema.json", special: pluginEntryProblem });
}

/** A plugin entry written as an array that is not `[name]` or `[name, options]`. */
function pluginEntryProblem(error: ErrorObject, found: string): ConfigProblem | undefined {
  if (error.keyword !== "minItems" && error.keyword !== "additionalItems") return undefined;
  return {
    path: error.instancePath,
    message: `expected [name] or [name, options], found ${found}`,
    hint: "Write a plugin with options as a two-item array: the plugin's name, then one object holding all its options.",
  };
}

// ---------------------------------------------------------------------------------------------
// loader failures -> CONFIG_UNREADABLE

/** A CONFIG_UNREADABLE error for a config file its loader could not parse or run. */
export function configUnreadable(file: string, cause: unknown): ConfigError {
  const reason = loaderReason(file, cause);
  const position = locate(file, cause);
  return new ConfigError(
    ErrorCodes.CONFIG_UNREADABLE,
    [{ path: "", message: reason, hint: unreadableHint(file, cause) }],
    { file, ...position, cause },
  );
}

/** The loader's own words, without cosmiconfig's "<kind> Error in <file>:" prefix or code frames. */
function loaderReason(file: string, cause: unknown): string {
  const yamlReason = (cause as { reason?: unknown } | null)?.reason;
  if (typeof yamlReason === "string" && yamlReason !== "") return yamlReason;
  const raw = describeError(cause).replace(ANSI_COLOUR, "");
  const prefix = /^(?:YAML|JSON|TypeScript) Error in /.exec(raw);
  const text = prefix !== null && raw.startsWith(`${file}:`, prefix[0].length) ? raw.slice(prefix[0].length + file.length + 1) : raw;
  // parse-json repeats its message around code frames ("> 3 | }", "| ^"); keep the sentence.
  const sentence = text
    .split("\n")
    .map((line) => line.trim())
    .find((line) => line !== "" && !CODE_FRAME_LINE.test(line));
  // Node 22's JSON.parse adds "(line 3 column 1)" after the position; the error shows the line once.
  return (sentence ?? text.trim()).replace(/ while parsing .*$/, "").replace(/ \(line \d+ column \d+\)/, "");
}

const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");
const CODE_FRAME_LINE = /^(?:>?\s*\d+\s*\||\|)/;

function locate(file: string, cause: unknown): { line?: number; column?: number } {
  const mark = (cause as { mark?: { line?: unknown; column?: unknown } } | null)?.mark;
  if (mark !== undefined && typeof mark.line === "number") {
    // js-yaml marks are 0-based.
    return { line: mark.line + 1, ...(typeof mark.column === "number" ? { column: mark.column + 1 } : {}) };
  }
  const position = /at position (\d+)/.exec(describeError(cause))?.[1];
  if (position === undefined) return {};
  try {
    const before = readFileSync(file, "utf8").slice(0, Number(position));
    const lines = before.split("\n");
    return { line: lines.length, column: (lines.at(-1)?.length ?? 0) + 1 };
  } catch {
    return {};
  }
}

function unreadableHint(file: string, cause: unknown): string {
  const message = describeError(cause);
  const extension = extname(file);
  if (extension === ".ts" && /Cannot find (?:package|module) 'typescript'/.test(message)) {
    return "Loading a .ts config needs the typescript package (an optional peer dependency of @compaction/core): npm install --save-dev typescript, or write the config as .mjs or .json.";
  }
  if (file.endsWith("package.json") || extension === ".json") {
    return "Fix the JSON syntax at the place shown: JSON allows no comments, no trailing commas and only double-quoted strings.";
  }
  if (extension === "" || extension === ".yaml" || extension === ".yml") {
    return "Fix the YAML (or JSON) syntax at the line shown: check indentation, unclosed brackets and quotes.";
  }
  return "Fix the error in this module (run it with node to see the full stack), and make sure it has a default export.";
}
