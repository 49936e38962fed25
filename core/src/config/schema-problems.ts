/**
 * One description of JSON Schema errors for every document this project validates (the
 * `.compactionrc` config, plugin options, session-state documents): ajv's errors become problems
 * people can act on, each with the JSON path, what was expected and found, and what to do.
 */
import type { ErrorObject } from "ajv";
import { escapePointerSegment } from "./pointer.js";
import { suggest } from "./suggest.js";

/** One problem in a validated document. */
export interface SchemaProblem {
  /** JSON pointer to the offending value, e.g. `/agents/coder/preset`; `""` is the whole document. */
  readonly path: string;
  /** What was expected and what was found. */
  readonly message: string;
  /** What to do about it. */
  readonly hint: string;
}

export interface DescribeSchemaErrorsOptions {
  /** Where the schema's descriptions can be read (named in the hint of a problem with no better one). */
  readonly schemaName: string;
  /**
   * Wording for a schema's own shapes (a tuple of plugin name and options, a time pattern): a
   * problem, `null` to leave the error out, or `undefined` for the common wording.
   */
  readonly special?: (error: ErrorObject, found: string) => SchemaProblem | null | undefined;
}

/**
 * One problem per ajv error (compiled with `verbose: true`). A missing property that an unknown
 * property's name is a likely misspelling of is reported once, as the misspelling; `if` errors
 * are left out (the failed `then`/`else` branch reports its own, more precise, errors).
 */
export function describeSchemaErrors(errors: readonly ErrorObject[], options: DescribeSchemaErrorsOptions): SchemaProblem[] {
  const misspelt = new Set<string>();
  for (const error of errors) {
    if (error.keyword !== "additionalProperties") continue;
    const nearest = suggestionFor(error);
    if (nearest !== undefined) misspelt.add(`${error.instancePath}/${escapePointerSegment(nearest)}`);
  }
  const problems: SchemaProblem[] = [];
  for (const error of errors) {
    const problem = describeError(error, options);
    if (problem === null) continue;
    if (error.keyword === "required" && misspelt.has(problem.path)) continue;
    problems.push(problem);
  }
  return problems;
}

function describeError(error: ErrorObject, options: DescribeSchemaErrorsOptions): SchemaProblem | null {
  const path = error.instancePath;
  const found = describeValue(error.data);
  const special = options.special?.(error, found);
  if (special !== undefined) return special;
  const schema = (error.parentSchema ?? {}) as Record<string, unknown>;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "if":
      return null;
    case "required": {
      const name = String(params["missingProperty"]);
      const properties = (schema["properties"] ?? {}) as Record<string, { description?: string; type?: unknown }>;
      const about = properties[name]?.description;
      return {
        path: `${path}/${escapePointerSegment(name)}`,
        message: `missing required property '${name}'${about === undefined ? "" : ` (${lowerFirst(about).replace(/\.$/, "")})`}`,
        hint: `Add '${name}'${emptyValueHint(properties[name]?.type)}.`,
      };
    }
    case "additionalProperties": {
      const name = String(params["additionalProperty"]);
      const allowed = Object.keys((schema["properties"] ?? {}) as object);
      const nearest = suggestionFor(error);
      return {
        path: `${path}/${escapePointerSegment(name)}`,
        message: `unknown property '${name}'; expected one of: ${allowed.join(", ")}`,
        hint: nearest === undefined ? `Remove '${name}' or rename it to one of the properties listed.` : `Did you mean '${nearest}'?`,
      };
    }
    case "type": {
      const expected = describeTypes(params["type"]);
      return { path, message: `expected ${expected}, found ${found}`, hint: `Use ${expected}${example(schema)}.` };
    }
    case "const": {
      const expected = JSON.stringify(params["allowedValue"]);
      return { path, message: `expected ${expected}, found ${found}`, hint: `Set it to ${expected}.` };
    }
    case "enum": {
      const allowed = (params["allowedValues"] ?? []) as unknown[];
      const list = allowed.map((value) => JSON.stringify(value)).join(", ");
      const nearest = typeof error.data === "string" ? suggest(error.data, allowed.map(String)) : undefined;
      return {
        path,
        message: `expected one of ${list}, found ${found}`,
        hint: `${nearest === undefined ? "" : `Did you mean '${nearest}'? `}Allowed values: ${list}.`,
      };
    }
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum": {
      const bound = `${COMPARISON_WORDS[String(params["comparison"])] ?? String(params["comparison"])} ${String(params["limit"])}`;
      return { path, message: `expected a number ${bound}, found ${found}`, hint: `Use a value ${bound}${example(schema)}.` };
    }
    case "minLength":
      return { path, message: `expected a non-empty string, found ${found}`, hint: `Give a value${example(schema)}.` };
    default:
      return {
        path,
        message: `${error.message ?? "is not valid"}, found ${found}`,
        hint: `See the description of this property in ${options.schemaName}.`,
      };
  }
}

/** A value as an error message shows it: its type and, when short, the value itself. */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return value.length === 0 ? "an empty array" : `an array of ${value.length} item${value.length === 1 ? "" : "s"}`;
  if (typeof value === "function") return "a function";
  if (typeof value === "object") return "an object";
  // JSON.stringify writes Infinity and NaN as null: a number too large for JSON (1e400) or YAML's .inf.
  if (typeof value === "number" && !Number.isFinite(value)) return `number ${String(value)} (not a finite number)`;
  const text = JSON.stringify(value);
  const shown = text.length > 40 ? `${text.slice(0, 37)}...` : text;
  if (typeof value === "string") return `string ${shown}`;
  if (typeof value === "number") return Number.isInteger(value) ? `integer ${shown}` : `number ${shown}`;
  return `${typeof value} ${shown}`;
}

/** `, e.g. <first example> or <second example>` from the schema's examples (or its default). */
export function example(schema: Record<string, unknown>): string {
  const examples = Array.isArray(schema["examples"]) ? (schema["examples"] as unknown[]).slice(0, 2) : [];
  if (examples.length === 0 && schema["default"] !== undefined) examples.push(schema["default"]);
  return examples.length === 0 ? "" : `, e.g. ${examples.map((value) => JSON.stringify(value)).join(" or ")}`;
}

const COMPARISON_WORDS: Readonly<Record<string, string>> = {
  ">=": "of at least",
  ">": "greater than",
  "<=": "of at most",
  "<": "less than",
};

const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: "a string",
  number: "a number",
  integer: "a whole number",
  boolean: "true or false",
  object: "an object",
  array: "an array",
  null: "null",
};

function describeTypes(types: unknown): string {
  const list = (Array.isArray(types) ? types : String(types).split(",")).map((type) => TYPE_WORDS[String(type)] ?? String(type));
  return list.join(" or ");
}

/** The known property an unknown one is probably a misspelling of. */
function suggestionFor(error: ErrorObject): string | undefined {
  const schema = (error.parentSchema ?? {}) as Record<string, unknown>;
  const name = String((error.params as Record<string, unknown>)["additionalProperty"]);
  return suggest(name, Object.keys((schema["properties"] ?? {}) as object));
}

/** ` ([] when there is nothing to list)` and the like, for a missing property of this schema type. */
function emptyValueHint(type: unknown): string {
  const types = Array.isArray(type) ? type : [type];
  if (types.includes("array")) return " ([] when there is nothing to list)";
  if (types.includes("null")) return " (null when unknown)";
  return "";
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
