/**
 * Errors with a stable `code`, so hosts can branch on them without parsing text.
 * Every message says what was expected, what was found, where, and what to do.
 */
export const ErrorCodes = {
  /** A `.compactionrc` (or other config source) failed schema validation. */
  CONFIG_INVALID: "COMPACTION_CONFIG_INVALID",
  /** A config file could not be read or parsed (syntax error, loader failure). */
  CONFIG_UNREADABLE: "COMPACTION_CONFIG_UNREADABLE",
  /** A preset or plugin name did not resolve to a package or file. */
  PLUGIN_NOT_FOUND: "COMPACTION_PLUGIN_NOT_FOUND",
  /** A module resolved but does not export a usable plugin or preset. */
  PLUGIN_INVALID: "COMPACTION_PLUGIN_INVALID",
  /** A plugin factory rejected its options. */
  PLUGIN_OPTIONS_INVALID: "COMPACTION_PLUGIN_OPTIONS_INVALID",
  /** A plugin returned a cut the core could not repair. */
  CUT_REFUSED: "COMPACTION_CUT_REFUSED",
  /** A plugin threw from one of the hooks. */
  PLUGIN_FAILED: "COMPACTION_PLUGIN_FAILED",
  /** The summarizer failed or timed out. */
  SUMMARIZER_FAILED: "COMPACTION_SUMMARIZER_FAILED",
  /** A plugin asked for a summary and the compactor has no summarizer (no summarizer plugin was applied). */
  SUMMARIZER_MISSING: "COMPACTION_SUMMARIZER_MISSING",
  /** The compaction was cancelled by a plugin or an AbortSignal. */
  CANCELLED: "COMPACTION_CANCELLED",
  /** The caller passed arguments the core cannot work with. */
  INPUT_INVALID: "COMPACTION_INPUT_INVALID",
  /** A message could not be read by the configured adapter. */
  MESSAGE_UNREADABLE: "COMPACTION_MESSAGE_UNREADABLE",
  /** A token encoding name is not known to tiktoken. */
  ENCODING_UNKNOWN: "COMPACTION_ENCODING_UNKNOWN",
  /** A session transcript line is not valid JSON or not an entry (file and line number in the message). */
  TRANSCRIPT_CORRUPT: "COMPACTION_TRANSCRIPT_CORRUPT",
  /** A session transcript is readable but not usable: no header, unknown entry id, broken parent chain. */
  TRANSCRIPT_INVALID: "COMPACTION_TRANSCRIPT_INVALID",
  /** A session file's write lock could not be had: another process holds it (or left it behind). */
  TRANSCRIPT_LOCKED: "COMPACTION_TRANSCRIPT_LOCKED",
  /**
   * The store that holds the session cannot be reached: its server refused or dropped the
   * connection, did not answer in time, or refused the login. Nothing was written (a write is
   * one transaction); retrying once the server is back is safe.
   */
  STORE_UNAVAILABLE: "COMPACTION_STORE_UNAVAILABLE",
  /** No session file matched the path, id or id prefix given (the message lists where it looked). */
  TRANSCRIPT_NOT_FOUND: "COMPACTION_TRANSCRIPT_NOT_FOUND",
  /** A session-state document (`compaction context import`) is not JSON, fails its schema, or is another format or a newer version. */
  SESSION_STATE_INVALID: "COMPACTION_SESSION_STATE_INVALID",
  /** The provider rejected a request as too long for the context window, and compacting could not free enough room. */
  CONTEXT_OVERFLOW: "COMPACTION_CONTEXT_OVERFLOW",
  /**
   * A request left out older messages of the context to fit the budget (a compaction failed, was
   * refused or freed too little): the model does not see them; the context and its transcript keep them.
   */
  CONTEXT_TRIMMED: "COMPACTION_CONTEXT_TRIMMED",
  /**
   * A warning, not an error: the project is not trusted (`trusted: false`), so a config file
   * that is code, or a preset or plugin inside the project, was not loaded.
   */
  CONFIG_UNTRUSTED: "COMPACTION_CONFIG_UNTRUSTED",
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

export interface CompactionErrorDetails {
  /** File the problem was found in, when there is one. */
  file?: string;
  /** JSON path inside the file or value, e.g. `/agents/coder/preset`. */
  path?: string;
  /** Plugin that caused the problem, when one did. */
  plugin?: string;
  /** The hook the plugin was running in when it failed (`beforeCompact`, `summarize`, ...; `apply` while it was being applied). */
  hook?: string;
  /** What the user can do about it. */
  hint?: string;
  /** The underlying error, if any. */
  cause?: unknown;
}

export class CompactionError extends Error {
  readonly code: ErrorCode;
  readonly file?: string;
  readonly path?: string;
  readonly plugin?: string;
  readonly hook?: string;
  readonly hint?: string;

  constructor(code: ErrorCode, message: string, details: CompactionErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "CompactionError";
    this.code = code;
    if (details.file !== undefined) this.file = details.file;
    if (details.path !== undefined) this.path = details.path;
    if (details.plugin !== undefined) this.plugin = details.plugin;
    if (details.hook !== undefined) this.hook = details.hook;
    if (details.hint !== undefined) this.hint = details.hint;
  }
}

export function isCompactionError(value: unknown): value is CompactionError {
  return value instanceof CompactionError;
}

/** The message of any thrown value, for reports. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
