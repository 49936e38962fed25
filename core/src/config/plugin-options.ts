import { createRequire } from "node:module";
import type { Ajv, SchemaObject, ValidateFunction } from "ajv";
import { CompactionError, ErrorCodes } from "../errors.js";
import { problemsFromAjv } from "./config-error.js";
import { showPointer } from "./pointer.js";

/**
 * A validator for a plugin's options, compiled once from a JSON Schema (draft-07): it fills in
 * defaults, and throws COMPACTION_PLUGIN_OPTIONS_INVALID naming the plugin, each bad option,
 * what was expected and a suggestion ("did you mean 'minKeepMessages'?").
 *
 * ```ts
 * const validate = createOptionsValidator<RollingOptions>("rolling", ROLLING_OPTIONS_SCHEMA);
 * export function rolling(options?: Partial<RollingOptions>) { const o = validate(options); ... }
 * ```
 */
const require = createRequire(import.meta.url);
// One ajv instance for every plugin's options, made on the first validation (loading ajv and
// building an instance cost more than compiling a plugin's small schema).
let shared: Ajv | undefined;

function compileOptionsSchema(schema: SchemaObject): ValidateFunction {
  const { Ajv } = require("ajv") as typeof import("ajv");
  const options = { allErrors: true, useDefaults: true, verbose: true, strict: false };
  shared ??= new Ajv(options);
  // Two plugins' schemas with the same $id cannot share an instance: the later gets its own.
  const id = typeof schema["$id"] === "string" ? schema["$id"] : undefined;
  if (id !== undefined && shared.getSchema(id) !== undefined && shared.getSchema(id)?.schema !== schema) return new Ajv(options).compile(schema);
  return shared.compile(schema);
}

export function createOptionsValidator<O>(pluginName: string, schema: SchemaObject): (options?: unknown) => O {
  let compiled: ValidateFunction | undefined;
  return (options?: unknown): O => {
    compiled ??= compileOptionsSchema(schema);
    // A private copy: defaults are written into it, never into the caller's object.
    const data: unknown = options === undefined ? {} : structuredClone(options);
    if (compiled(data)) return data as O;
    const problems = problemsFromAjv(compiled.errors ?? []);
    const lines = problems.map((p) => `${showPointer(p.path)}: ${p.message}. ${p.hint}`);
    throw new CompactionError(
      ErrorCodes.PLUGIN_OPTIONS_INVALID,
      `Invalid options for plugin '${pluginName}': ${lines.length === 1 ? lines[0] : `\n  ${lines.join("\n  ")}`}`,
      {
        plugin: pluginName,
        ...(problems[0] ? { path: problems[0].path } : {}),
        hint: `See the '${pluginName}' options in @compaction/core/schema.json.`,
      },
    );
  };
}
