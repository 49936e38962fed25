/** Compaction results the context manager makes itself, for runs that changed nothing. */
import type { CompactionError, CompactionResult } from "@compaction/core";

/** A result that leaves `messages` as they are, saying why. */
export function untouchedResult<T>(
  messages: readonly T[],
  tokens: number,
  status: "noop" | "failed",
  reason: string,
  error: CompactionError | null = null,
  warnings: readonly string[] = [],
): CompactionResult<T> {
  return {
    status,
    messages,
    summary: null,
    cut: null,
    event: null,
    tokensBefore: tokens,
    tokensAfter: tokens,
    warnings,
    reason,
    error,
  };
}

/** `result` turned into a failure: it compacted, but its new context could not be put in place. */
export function failedResult<T>(result: CompactionResult<T>, input: readonly T[], error: CompactionError): CompactionResult<T> {
  return untouchedResult(input, result.tokensBefore, "failed", error.message, error, result.warnings);
}
