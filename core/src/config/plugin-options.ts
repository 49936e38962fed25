import type { Ajv, Options, SchemaObject, ValidateFunction } from "ajv";
import { CompactionError, ErrorCodes } from "../errors.js";
import { problemsFromAjv } from "./config-error.js";
import { showPointer } from "./pointer.js";
import { createAjv, loadGeneratedValidator, standaloneValidatorSource } from "./standalone-validator.js";

/** The ajv options every plugin's options are compiled with, at run time or at build time. */
export const OPTIONS_AJV_OPTIONS: Readonly<Options> = Object.freeze({ allErrors: true, useDefaults: true, verbose: true, strict: false });

// One ajv instance for every plugin's options compiled at run time, made on the first one
// (loading ajv and building an instance cost more than compiling a plugin's small schema).
let shared: Ajv | undefined;

function compileOptionsSchema(schema: SchemaObject): ValidateFunction {
  shared ??= createAjv({ ...OPTIONS_AJV_OPTIONS });
  // Two plugins' schemas with the same $id cannot share an instance: the later gets its own.
  const id = typeof schema["$id"] === "string" ? schema["$id"] : undefined;
  if (id !== undefined && shared.getSchema(id) !== undefined && shared.getSchema(id)?.schema !== schema) return createAjv({ ...OPTIONS_AJV_OPTIONS }).compile(schema);
  return shared.compile(schema);
}

/**
 * Standalone code of a plugin's options validator, for its build to write next to its compiled
 * module (scripts/generate-options-validator.mjs does it for the built-in plugins).
 */
export function optionsValidatorSource(pluginName: string, schema: SchemaObject): string {
  return standaloneValidatorSource(schema, OPTIONS_AJV_OPTIONS, `the options schema of plugin '${pluginName}'`);
}

export interface OptionsValidatorOptions {
  /**
   * Where the plugin's build wrote its validator as standalone code (`optionsValidatorSource`);
   * used when the file is there, else the schema is compiled on first use.
   */
  readonly generated?: URL;
}

/**
 * A validator for a plugin's options, compiled once from a JSON Schema (draft-07): it fills in
 * defaults, and throws COMPACTION_PLUGIN_OPTIONS_INVALID naming the plugin, each bad option,
 * what was expected and a suggestion ("did you mean 'minKeepMessages'?").
 *
 * ```ts
 * const validate = createOptionsValidator<RollingOptions>("rolling", ROLLING_OPTIONS_SCHEMA, {
 *   generated: new URL("./options-validator.generated.cjs", import.meta.url), // optional
 * });
 * export function rolling(options?: Partial<RollingOptions>) { const o = validate(options); ... }
 * ```
 */
export function createOptionsValidator<O>(pluginName: string, schema: SchemaObject, how: OptionsValidatorOptions = {}): (options?: unknown) => O {
  let compiled: ValidateFunction | undefined;
  return (options?: unknown): O => {
    compiled ??= (how.generated === undefined ? undefined : loadGeneratedValidator(how.generated)) ?? compileOptionsSchema(schema);
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
