/**
 * The config schema's validator, two ways with the same ajv options: generated at build time as
 * standalone code (`npm run build` writes `dist/config/config-validator.generated.cjs`;
 * scripts/generate-config-validator.mjs), or compiled at run time where no build ran (the core's
 * own tests on `src/`). See standalone-validator.ts.
 */
import type { Options, SchemaObject, ValidateFunction } from "ajv";
import { createAjv, loadGeneratedValidator, standaloneValidatorSource } from "./standalone-validator.js";

/** The options both ways compile with. */
export const CONFIG_AJV_OPTIONS: Readonly<Options> = Object.freeze({
  allErrors: true,
  useDefaults: true,
  verbose: true, // errors carry the offending value and its schema, for readable messages
  strict: true,
  allowUnionTypes: true,
  strictTuples: false, // plugin entries are [name] or [name, options]
});

/** Where the build writes the generated validator: beside this module in `dist/config/`. */
export const GENERATED_VALIDATOR_URL = new URL("./config-validator.generated.cjs", import.meta.url);

/** Compiles the schema now (what runs when no generated validator is found). */
export function compileConfigValidator(schema: SchemaObject): ValidateFunction {
  return createAjv({ ...CONFIG_AJV_OPTIONS }).compile(schema);
}

/** Standalone CommonJS code of the config schema's validator. */
export function configValidatorSource(schema: SchemaObject): string {
  return standaloneValidatorSource(schema, CONFIG_AJV_OPTIONS, "@compaction/core's schema/compaction.schema.json (scripts/generate-config-validator.mjs)");
}

/** The validator the build generated (at `url`), or undefined when there is none. */
export function loadConfigValidator(url: URL = GENERATED_VALIDATOR_URL): ValidateFunction | undefined {
  return loadGeneratedValidator(url);
}
