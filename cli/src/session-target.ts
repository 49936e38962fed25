/** Finding the session a command works on and reading it, reporting lines left out on stderr. */
import {
  type BoundaryLoad,
  loadBoundary,
  type ParsedSession,
  readSession,
  resolveSession,
  SessionTree,
  type SkippedLine,
} from "@compaction/core";
import { CliError } from "./errors.js";
import { ExitCode } from "./exit-codes.js";
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

/**
 * Before writing anything derived from a file read with --skip-corrupt: a skipped line can break
 * the branch's parent chain, leaving every earlier entry unreachable. Writing then (a compaction
 * summary of only the tail, a branch of only the tail) would lose history for good, so refuse.
 */
export function assertWholeBranch(path: string, selection: SessionSelection): void {
  if (!selection.skipCorrupt) return;
  const parsed = readSession(path, { skipCorrupt: true });
  if (parsed.skipped.length === 0) return;
  const branch = new SessionTree(parsed.entries).branch();
  const first = branch[0];
  if (first === undefined || first.parentId === null) return;
  const unreachable = parsed.entries.length - branch.length;
  const lines = parsed.skipped.map((line) => line.line).join(", ");
  throw new CliError(
    ExitCode.SESSION,
    `The branch breaks at a skipped line (line ${lines} of ${path}): ${unreachable} earlier entries cannot be reached, so nothing was written.`,
    "Repair or remove that line (keep a copy of the file first), then run the command again; --dry-run shows what the reachable part alone would give.",
  );
}
