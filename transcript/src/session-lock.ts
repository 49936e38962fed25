/**
 * The exclusive lock of a session file (proper-lockfile: a `<file>.lock` directory, refreshed
 * while held and taken over once stale). Every write to a session file runs under it.
 */
import lockfile from "proper-lockfile";
import { CompactionError, describeError, ErrorCodes } from "@compaction/core";

export interface SessionLockOptions {
  /**
   * A lock whose holder stopped refreshing it for this long (it crashed) is taken over.
   * Milliseconds, default 10 000; proper-lockfile raises anything below 2 000 to 2 000.
   */
  readonly staleMs?: number;
  /** How long to keep trying for the lock before failing with `COMPACTION_TRANSCRIPT_LOCKED`. Default staleMs + 5 000. */
  readonly timeoutMs?: number;
}

const DEFAULT_STALE_MS = 10_000;

/**
 * Runs `task` while holding the exclusive lock of the session file at `path` (which must exist).
 * Throws `COMPACTION_TRANSCRIPT_LOCKED` when the lock cannot be had in time, or when it was lost
 * (another process took it over as stale); `task` calls `stillHeld()` just before it writes.
 */
export async function withSessionLock<R>(
  path: string,
  task: (stillHeld: () => void) => Promise<R>,
  options: SessionLockOptions = {},
): Promise<R> {
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  const timeoutMs = options.timeoutMs ?? staleMs + 5_000;
  let compromised: Error | undefined;
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(path, {
      stale: staleMs,
      retries: { retries: 100_000, factor: 1.5, minTimeout: 5, maxTimeout: 200, randomize: true, maxRetryTime: timeoutMs },
      onCompromised: (error) => {
        compromised = error;
      },
    });
  } catch (error) {
    throw lockError(path, error, staleMs, timeoutMs);
  }
  const stillHeld = (): void => {
    if (compromised !== undefined) throw lockError(path, compromised, staleMs, timeoutMs);
  };
  try {
    const result = await task(stillHeld);
    stillHeld();
    return result;
  } finally {
    await release().catch(() => undefined);
  }
}

function lockError(path: string, error: unknown, staleMs: number, timeoutMs: number): CompactionError {
  const code = (error as { code?: unknown }).code;
  if (code === "ENOENT") {
    return new CompactionError(ErrorCodes.TRANSCRIPT_NOT_FOUND, `Cannot lock ${path}: the file does not exist.`, {
      file: path,
      hint: "Create the session first (createSession), or check the path.",
      cause: error,
    });
  }
  const held = code === "ELOCKED";
  return new CompactionError(
    ErrorCodes.TRANSCRIPT_LOCKED,
    held
      ? `Could not lock ${path} for writing: another process held ${path}.lock for the whole ${timeoutMs} ms waited.`
      : `Lost or could not take the write lock of ${path}: ${describeError(error)}.`,
    {
      file: path,
      hint: held
        ? `Retry once the other compaction or agent has finished. A lock left by a crashed process is taken over after ${staleMs} ms; if none is running, remove ${path}.lock.`
        : "Retry; if it keeps failing, check that the directory is writable and on a local file system.",
      cause: error,
    },
  );
}
