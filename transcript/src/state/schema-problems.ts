/**
 * Turns ajv's errors for a session-state document into problems people can act on: the JSON
 * path, what was expected and found, and what to do.
 */
import type { ErrorObject } from "ajv";
import { describeValue, escapePointerSegment, suggest } from "@compaction/core";

/** One problem in a session-state document. */
export interface SessionStateProblem {
  /** JSON pointer to the offending value, e.g. `/source/messages`; `""` is the whole document. */
  readonly path: string;
  /** What was expected and what was found. */
  readonly message: string;
  /** What to do about it. */
  readonly hint: string;
}

const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: "a string",
  number: "a number",
  integer: "a whole number",
  boolean: "true or false",
  object: "an object",
  array: "an array",
  null: "null",
};

/**
 * One problem per ajv error (compiled with `verbose: true`). A missing property that an unknown
 * property's name is a likely misspelling of is reported once, as the misspelling.
 */
export function problemsFromAjv(errors: readonly ErrorObject[]): SessionStateProblem[] {
  const misspelt = new Set<string>();
  for (const error of errors) {
    if (error.keyword !== "additionalProperties") continue;
    const nearest = suggestionFor(error);
    if (nearest !== undefined) misspelt.add(`${error.instancePath}/${escapePointerSegment(nearest)}`);
  }
  const problems: SessionStateProblem[] = [];
  for (const error of errors) {
    const problem = problemFromAjv(error);
    if (error.keyword === "required" && misspelt.has(problem.path)) continue;
    problems.push(problem);
  }
  return problems;
}

/** The known property an unknown one is probably a misspelling of. */
function suggestionFor(error: ErrorObject): string | undefined {
  const schema = (error.parentSchema ?? {}) as Record<string, unknown>;
  const name = String((error.params as Record<string, unknown>)["additionalProperty"]);
  return suggest(name, Object.keys((schema["properties"] ?? {}) as object));
}

function problemFromAjv(error: ErrorObject): SessionStateProblem {
  const path = error.instancePath;
  const found = describeValue(error.data);
  const schema = (error.parentSchema ?? {}) as Record<string, unknown>;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required": {
      const name = String(params["missingProperty"]);
      const properties = (schema["properties"] ?? {}) as Record<string, { description?: string; type?: unknown }>;
      const about = properties[name]?.description;
      return {
        path: `${path}/${escapePointerSegment(name)}`,
        message: `missing required property '${name}'${about === undefined ? "" : ` (${lowerFirst(about).replace(/\.$/, "")})`}`,
        hint: `Add '${name}'${emptyValueHint(properties[name]?.type)}; every property of the schema is required.`,
      };
    }
    case "additionalProperties": {
      const name = String(params["additionalProperty"]);
      const allowed = Object.keys((schema["properties"] ?? {}) as object);
      const nearest = suggestionFor(error);
      return {
        path: `${path}/${escapePointerSegment(name)}`,
        message: `unknown property '${name}'; expected one of: ${allowed.join(", ")}`,
        hint: nearest === undefined ? `Remove '${name}'.` : `Did you mean '${nearest}'? Rename it.`,
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
      return { path, message: `expected a number of at least ${String(params["limit"])}, found ${found}`, hint: "Use a count of 0 or more." };
    case "minLength":
      return { path, message: `expected a non-empty string, found ${found}`, hint: `Give a value${example(schema)}.` };
    case "pattern":
      return { path, message: `expected an ISO 8601 time, found ${found}`, hint: `Write it as new Date().toISOString() does${example(schema)}.` };
    default:
      return {
        path,
        message: `${error.message ?? "is not valid"}, found ${found}`,
        hint: "See the description of this property in @compaction/transcript/session-state.schema.json.",
      };
  }
}

/** `(use [] for none)` and the like, for a missing property of this schema type. */
function emptyValueHint(type: unknown): string {
  const types = Array.isArray(type) ? type : [type];
  if (types.includes("array")) return " ([] when there is nothing to list)";
  if (types.includes("null")) return " (null when unknown)";
  return "";
}

function describeTypes(types: unknown): string {
  const list = Array.isArray(types) ? types : String(types).split(",");
  return list.map((type) => TYPE_WORDS[String(type)] ?? String(type)).join(" or ");
}

/** `, e.g. <first example>` from the schema's examples. */
function example(schema: Record<string, unknown>): string {
  const examples = Array.isArray(schema["examples"]) ? (schema["examples"] as unknown[]) : [];
  return examples.length === 0 ? "" : `, e.g. ${JSON.stringify(examples[0])}`;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
