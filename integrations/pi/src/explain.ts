/** Error text for messages to the user. */
import { describeError, isCompactionError } from "@compaction/core";
import { installBesideHint } from "./install-hint.js";

/** The error's message, with its stable code when it has one. */
export function explain(error: unknown): string {
  return isCompactionError(error) ? `${error.message} [${error.code}]` : describeError(error);
}

/**
 * The error's hint (what to do), or "" when it has none. A plugin or preset package that is not
 * installed gets the command that installs it where the extension can load it.
 */
export function hintOf(error: unknown): string {
  const install = installBesideHint(error);
  if (install !== undefined) return install;
  return isCompactionError(error) && error.hint !== undefined ? error.hint : "";
}
