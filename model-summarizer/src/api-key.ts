/**
 * API keys are read from the environment at call time, by the variable's name, and never
 * written anywhere: not in config, errors, warnings, events or summaries.
 */
import { CompactionError, ErrorCodes } from "@compaction/core";

/** Replaces the key in text a server sent back (some servers echo it in error messages). */
export const REDACTED = "[redacted]";

/**
 * The value of environment variable `name`. Throws COMPACTION_SUMMARIZER_FAILED naming the
 * variable (and nothing else about it) when it is unset or empty.
 */
export function readApiKey(name: string, summarizer: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  if (typeof value === "string" && value.trim() !== "") return value.trim();
  throw new CompactionError(
    ErrorCodes.SUMMARIZER_FAILED,
    `Summarizer '${summarizer}' needs an API key in the environment variable ${name}, but ${name} is not set.`,
    {
      path: "/apiKeyEnv",
      hint: `Set ${name} in the environment of the process that compacts, or set the option apiKeyEnv to the name of the variable that holds the key (null for a local server that needs none).`,
    },
  );
}

/** `text` with every occurrence of each secret replaced by "[redacted]". */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret === undefined || secret.length < 4) continue;
    out = out.split(secret).join(REDACTED);
  }
  return out;
}

/** A URL fit for an error message: without user, password, query or fragment. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    parsed.search = "";
    parsed.hash = "";
    return parsed.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, "//").replace(/[?#].*$/, "");
  }
}
