/** Finding the session a command works on and reading it, reporting lines left out on stderr. */
import { type BoundaryLoad, loadBoundary, readSession, resolveSession, type ParsedSession, type SkippedLine } from "@compaction/core";
import type { CliIo } from "./io.js";

/** The options every session command shares. */
export interface SessionSelection {
  /** `--session`: a path, an id or the start of one. */
  readonly session?: string | undefined;
  /** `--sessions-dir`: the folder holding one session folder per project. */
  readonly sessionsDir?: string | undefined;
  /** `--skip-corrupt`: read past corrupt lines. */
  readonly skipCorrupt: boolean;
}

/** The session file's absolute path: `--session` as a path or id, else the cwd's most recent session. */
export async function resolveTarget(selection: SessionSelection, io: CliIo): Promise<string> {
  return resolveSession(selection.session, {
    cwd: io.cwd,
    env: io.env,
    ...(selection.sessionsDir === undefined ? {} : { sessionsDir: selection.sessionsDir }),
  });
}

/** The branch's context by the boundary rule, reading as little of the file as it can. */
export function loadTargetContext(path: string, selection: SessionSelection, io: CliIo): BoundaryLoad {
  const loaded = loadBoundary(path, { skipCorrupt: selection.skipCorrupt });
  reportSkipped(path, loaded.skipped, io);
  return loaded;
}

/** Every entry of the file (migrated to version 3 in memory). */
export function readTargetSession(path: string, selection: SessionSelection, io: CliIo): ParsedSession {
  const parsed = readSession(path, { skipCorrupt: selection.skipCorrupt });
  reportSkipped(path, parsed.skipped, io);
  return parsed;
}

/** One stderr line per line left out. */
function reportSkipped(path: string, skipped: readonly SkippedLine[], io: CliIo): void {
  for (const line of skipped) io.stderr.write(`compaction: skipped line ${line.line} of ${path}: ${line.reason}\n`);
}
