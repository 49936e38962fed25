/** A compaction result the context manager makes itself (core's `untouchedResult` makes the others). */
import { type CompactionError, type CompactionResult, untouchedResult } from "@compaction/core";

/** `result` turned into a failure: it compacted, but its new context could not be put in place. */
export function failedResult<T>(result: CompactionResult<T>, input: readonly T[], error: CompactionError): CompactionResult<T> {
  return untouchedResult(input, result.tokensBefore, "failed", error.message, error, result.warnings);
}
