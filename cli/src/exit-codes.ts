/** The `compaction` command's exit codes (also listed in README.md and `--help`). */
export const ExitCode = {
  /** Done. */
  OK: 0,
  /** The compaction failed or was refused: status failed/cancelled/noop, the user declined, or a dry run's After would not fit the window. */
  FAILED: 1,
  /** Usage error: unknown command or option, a missing or bad argument. */
  USAGE: 2,
  /**
   * The session was not found, its transcript cannot be read, a skipped line breaks the branch
   * before a write, a write or pi-entry read was asked of an imported transcript, or a session
   * state to import is invalid.
   */
  SESSION: 3,
  /** The compaction config (`.compactionrc`) is invalid, or a preset/plugin in it does not load. */
  CONFIG: 4,
  /**
   * The session's store cannot be reached (a database server that is down, does not answer,
   * refuses the login or dropped the connection): nothing was written, and a retry once it is
   * back may succeed.
   */
  UNAVAILABLE: 5,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** The exit-code table as shown at the end of `--help`. */
export const EXIT_CODES_HELP = `Exit codes:
  0  ok
  1  the compaction failed or was refused (nothing to compact, declined, no terminal without --yes),
     or compact --dry-run's After would not fit the window
  2  usage error
  3  session not found, its transcript is unreadable, a write asked of a Claude Code or
     Codex transcript (read-only), or an invalid session state to import
  4  invalid config (.compactionrc), or a preset or plugin in it does not load
  5  the session's database cannot be reached (server down, no answer, login refused,
     connection lost); nothing was written, retry once it is back`;
