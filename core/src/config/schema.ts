import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ErrorObject, SchemaObject, ValidateFunction } from "ajv";
import { compileConfigValidator, loadConfigValidator } from "./config-validator.js";
import { deepFreeze } from "./plain-data.js";

/**
 * `core/schema/` sits next to both `src/` and `dist/`, so the same relative URL works from
 * `src/config/schema.ts` (tests) and `dist/config/schema.js` (the published package).
 */
const SCHEMA_URL = new URL("../../schema/compaction.schema.json", import.meta.url);

/** Absolute path of the shipped JSON Schema (usable as `$schema` in a `.compactionrc.json`). */
export const compactionSchemaPath: string = fileURLToPath(SCHEMA_URL);

/** The parsed JSON Schema (draft-07) of a compaction config file. Deeply frozen. */
export const compactionSchema: Readonly<SchemaObject> = deepFreeze(
  JSON.parse(readFileSync(SCHEMA_URL, "utf8")) as SchemaObject,
);

// The one piece of module state: compiling is costly and the schema never changes.
let compiled: ValidateFunction | undefined;

function validator(): ValidateFunction {
  compiled ??= loadConfigValidator() ?? compileConfigValidator(compactionSchema);
  return compiled;
}

/**
 * Validates a config file's contents against the schema, filling in defaults in place (top
 * level only: agent sections keep just the keys they set, apart from defaults inside the
 * nested objects they give). Returns every problem found, or an empty list.
 */
export function validateConfigData(data: unknown): readonly ErrorObject[] {
  const validate = validator();
  if (validate(data)) return [];
  return [...(validate.errors ?? [])];
}
