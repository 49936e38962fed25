/**
 * The shipped JSON Schema of a session-state document, loaded once, and its compiled validator.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { ErrorObject, SchemaObject, ValidateFunction } from "ajv";
import { deepFreeze } from "@compaction/core";

/**
 * `transcript/schema/` sits next to both `src/` and `dist/`, so the same relative URL works from
 * `src/state/` (tests) and `dist/state/` (the published package), as for the config schema.
 */
const SCHEMA_URL = new URL("../../schema/session-state.schema.json", import.meta.url);

/** Absolute path of the session-state JSON Schema (also exported as `@compaction/transcript/session-state.schema.json`). */
export const sessionStateSchemaPath: string = fileURLToPath(SCHEMA_URL);

/** The parsed JSON Schema (draft-07) of a session-state document. Deeply frozen. */
export const sessionStateSchema: Readonly<SchemaObject> = deepFreeze(JSON.parse(readFileSync(SCHEMA_URL, "utf8")) as SchemaObject);

// Compiled on first use and kept: compiling is costly and the schema never changes. ajv itself
// is loaded then too, so a process that never imports a session state never loads it.
let compiled: ValidateFunction | undefined;

/** Every schema violation of `data` (ajv errors, compiled with `verbose`), or an empty list. */
export function validateSessionStateData(data: unknown): readonly ErrorObject[] {
  if (compiled === undefined) {
    const { Ajv } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
    const ajv = new Ajv({
      allErrors: true,
      verbose: true, // errors carry the offending value and its schema, for readable messages
      strict: true,
      allowUnionTypes: true, // "string or null" fields
    });
    compiled = ajv.compile(sessionStateSchema);
  }
  if (compiled(data)) return [];
  return [...(compiled.errors ?? [])];
}
