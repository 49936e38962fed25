import { Ajv, type SchemaObject, type ValidateFunction } from "ajv";
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
export function createOptionsValidator<O>(pluginName: string, schema: SchemaObject): (options?: unknown) => O {
  let compiled: ValidateFunction | undefined;
  return (options?: unknown): O => {
    compiled ??= new Ajv({ allErrors: true, useDefaults: true, verbose: true, strict: false }).compile(schema);
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
