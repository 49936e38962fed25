/**
 * Problems in a session-state document, described as every validated document in this project
 * is (core's describeSchemaErrors), plus the wording of this schema's time pattern.
 */
import { describeSchemaErrors, type SchemaProblem } from "@compaction/core";
import type { ErrorObject } from "ajv";

/** One problem in a session-state document. */
export type SessionStateProblem = SchemaProblem;

/** One problem per ajv error (compiled with `verbose: true`). */
export function problemsFromAjv(errors: readonly ErrorObject[]): SessionStateProblem[] {
  return describeSchemaErrors(errors, { schemaName: "@compaction/transcript/session-state.schema.json", special: timeProblem });
}

/** The schema's one pattern is an ISO 8601 time (`exportedAt`). */
function timeProblem(error: ErrorObject, found: string): SessionStateProblem | undefined {
  if (error.keyword !== "pattern") return undefined;
  const examples = ((error.parentSchema ?? {}) as { examples?: unknown[] }).examples ?? [];
  const example = examples.length === 0 ? "" : `, e.g. ${JSON.stringify(examples[0])}`;
  return {
    path: error.instancePath,
    message: `expected an ISO 8601 time, found ${found}`,
    hint: `Write it as new Date().toISOString() does${example}.`,
  };
}
