/** Error text for messages to the user. */
import { describeError, isCompactionError } from "@compaction/core";

/** The error's message, with its stable code when it has one. */
export function explain(error: unknown): string {
  return isCompactionError(error) ? `${error.message} [${error.code}]` : describeError(error);
}

/** The error's hint (what to do), or "" when it has none. */
export function hintOf(error: unknown): string {
  return isCompactionError(error) && error.hint !== undefined ? error.hint : "";
}
