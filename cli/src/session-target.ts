/** Finding the session a command works on and reading it, reporting lines left out on stderr. */
import { type AdapterName } from "@compaction/core";
import {
  type BoundaryLoad,
  type ClaudeCodeHistory,
  detectTranscriptFormat,
  importClaudeCode,
  importClaudeCodeHistory,
  importCodexRollout,
  loadBoundary,
  type ParsedSession,
  readSession,
  resolveSession,
  SessionTree,
  type SkippedLine,
  TRANSCRIPT_ADAPTERS,
  type TranscriptFormat,
} from "@compaction/transcript";
import { statSync } from "node:fs";
import { basename } from "node:path";
import { CliError } from "./errors.js";
import { ExitCode } from "./exit-codes.js";
import { databaseOfSnapshot, databaseSnapshot, type DatabaseSession, isDatabaseTarget, refuseDatabaseSnapshot } from "./database-target.js";
import type { CliIo } from "./io.js";
import { openClawSnapshot, parseOpenClawTarget, refuseOpenClawSnapshot } from "./openclaw-target.js";
import { type ByteProgress, progressLine } from "./progress.js";

/** The options every session command shares. */
export interface SessionSelection {
  /**
   * `--session`: a path, an id or the start of one, an OpenClaw session (see openclaw-target.ts),
   * or a session in a database (`sqlite:<file>#<id>`, `postgres://...#<id>`; see database-target.ts).
   */
  readonly session?: string | undefined;
  /** `--sessions-dir`: the folder holding one session folder per project. */
  readonly sessionsDir?: string | undefined;
  /** `--skip-corrupt`: read past corrupt lines. */
  readonly skipCorrupt: boolean;
}

/** The session file's absolute path: `--session` as a path or id, else the cwd's most recent session. */
async function resolveTarget(selection: SessionSelection, io: CliIo): Promise<string> {
  if (isDatabaseTarget(selection.session)) return databaseSnapshot(selection.session, io);
  const openClaw = parseOpenClawTarget(selection.session);
  if (openClaw !== undefined) return openClawSnapshot(openClaw, io);
  return resolveSession(selection.session, {
    cwd: io.cwd,
    env: io.env,
    ...(selection.sessionsDir === undefined ? {} : { sessionsDir: selection.sessionsDir }),
  });
}

/**
 * The session a command works on (the command scaffold resolves it from `--session`), with the
 * readers and checks of this file bound to it.
 */
export class TargetSession {
  readonly path: string;
  readonly selection: SessionSelection;
  readonly #io: CliIo;

  private constructor(path: string, selection: SessionSelection, io: CliIo) {
    this.path = path;
    this.selection = selection;
    this.#io = io;
  }

  /** The session `selection` names (see resolveTarget). */
  static async resolve(selection: SessionSelection, io: CliIo): Promise<TargetSession> {
    return new TargetSession(await resolveTarget(selection, io), selection, io);
  }

  /** The database session this is a snapshot of (`--session sqlite:...#id`), or undefined for a file. */
  get database(): DatabaseSession | undefined {
    return databaseOfSnapshot(this.path);
  }

  /** Where the session is, for the user: the database location, or the file's path. */
  get shown(): string {
    return this.database?.shown ?? this.path;
  }

  /** Refuses a database session: `what` works on session files only. */
  refuseDatabase(what: string): void {
    refuseDatabaseSnapshot(this.path, what);
  }

  /** What wrote the file: pi, Claude Code or Codex. */
  format(): TranscriptFormat {
    return detectTranscriptFormat(this.path);
  }

  /** The context it holds now, whatever wrote it: an import's after its latest compaction (loadTranscriptContext). */
  transcript(): TranscriptContext {
    return loadTranscriptContext(this.path, this.selection, this.#io);
  }

  /**
   * A Claude Code transcript's whole recorded conversation, its own compactions not applied
   * (importClaudeCodeHistory), where `transcript()` gives the context after the latest one.
   */
  claudeCodeHistory(): ClaudeCodeHistory {
    const history = withProgress(this.path, this.#io, (onProgress) => importClaudeCodeHistory(this.path, { skipCorrupt: this.selection.skipCorrupt, ...onProgress }));
    reportSkipped(this.path, history.skipped, this.#io);
    return history;
  }

  /** A pi session's branch by the boundary rule (loadTargetContext). */
  boundary(): BoundaryLoad {
    return loadTargetContext(this.path, this.selection, this.#io);
  }

  /** Every entry of a pi session (readTargetSession). */
  entries(): ParsedSession {
    return readTargetSession(this.path, this.selection, this.#io);
  }

  /** Refuses anything but a pi session before reading it: `what` needs pi entries. */
  requirePiFormat(what: string): void {
    requirePiFormat(this.path, what);
  }

  /** Refuses a snapshot of an OpenClaw session: `what` would write to a copy OpenClaw never reads. */
  refuseOpenClawSnapshot(what: string): void {
    refuseOpenClawSnapshot(this.path, what);
  }

  /** Before writing: refuses when a line skipped with --skip-corrupt breaks the branch (assertWholeBranch). */
  assertWholeBranch(): void {
    assertWholeBranch(this.path, this.selection);
  }
}

/**
 * The context a transcript holds now, whatever wrote it: a pi session's branch by the boundary
 * rule, or the main context of a Claude Code transcript or Codex rollout (read-only imports).
 */
export interface TranscriptContext {
  readonly format: TranscriptFormat;
  readonly path: string;
  /** The message format: the adapter a compactor reads `messages` with. */
  readonly adapter: AdapterName;
  readonly sessionId: string | null;
  readonly cwd: string | null;
  readonly messages: readonly unknown[];
  /** The entry (pi) or line uuid (Claude Code) each message comes from; `line N` for Codex. */
  readonly entryIds: readonly string[];
  /** Compactions the import applied (Claude Code, Codex); null for pi, whose history `readTargetSession` gives. */
  readonly importedCompactions: number | null;
  /**
   * The model's context window the transcript records (a Codex rollout's newest
   * `model_context_window`), or null; see context-window.ts for when it is used.
   */
  readonly contextWindow: number | null;
  /** The pi boundary load, or null for an import. */
  readonly pi: BoundaryLoad | null;
}

/** Reads `path` as the kind of transcript it is (see TranscriptContext). */
function loadTranscriptContext(path: string, selection: SessionSelection, io: CliIo): TranscriptContext {
  const format = detectTranscriptFormat(path);
  const base = { format, path, adapter: TRANSCRIPT_ADAPTERS[format] };
  const options = { skipCorrupt: selection.skipCorrupt };
  if (format === "pi") {
    const loaded = loadTargetContext(path, selection, io);
    const cwd = loaded.header.cwd;
    return { ...base, sessionId: loaded.header.id, cwd: typeof cwd === "string" ? cwd : null, messages: loaded.messages, entryIds: loaded.entryIds, importedCompactions: null, contextWindow: null, pi: loaded };
  }
  if (format === "claude-code") {
    const imported = withProgress(path, io, (onProgress) => importClaudeCode(path, { ...options, ...onProgress }));
    reportSkipped(path, imported.skipped, io);
    return { ...base, sessionId: imported.sessionId ?? null, cwd: imported.cwd ?? null, messages: imported.messages, entryIds: imported.entryIds, importedCompactions: imported.compactions, contextWindow: null, pi: null };
  }
  const imported = withProgress(path, io, (onProgress) => importCodexRollout(path, { ...options, ...onProgress }));
  reportSkipped(path, imported.skipped, io);
  for (const figure of imported.ignoredFigures) io.stderr.write(`compaction: line ${figure.line} of ${path}: ${figure.reason}\n`);
  return {
    ...base,
    sessionId: imported.sessionId ?? null,
    cwd: imported.cwd ?? null,
    messages: imported.messages,
    entryIds: imported.lines.map((line) => `line ${line}`),
    importedCompactions: imported.compactions,
    contextWindow: imported.contextWindow ?? null,
    pi: null,
  };
}

/** For commands that write: the pi boundary load, or a refusal of an imported transcript saying what does work on it. */
export function requirePiSession(context: TranscriptContext, what: string): BoundaryLoad {
  refuseOpenClawSnapshot(context.path, what);
  if (context.pi !== null) return context.pi;
  throw importedRefusal(context.path, context.format, what);
}

/** For commands that read pi session files only: refuses any other transcript before reading it. */
function requirePiFormat(path: string, what: string): void {
  const format = detectTranscriptFormat(path);
  if (format !== "pi") throw importedRefusal(path, format, what);
}

function importedRefusal(path: string, format: TranscriptFormat, what: string): CliError {
  const name = format === "claude-code" ? "a Claude Code transcript" : "a Codex rollout";
  return new CliError(
    ExitCode.SESSION,
    `Cannot ${what}: ${path} is ${name}, not a pi session: this tool reads its context but never writes to it, and it has no pi session entries.`,
    "On imported transcripts, use context status, context inspect, context export and compact --dry-run; 'context export' then 'context import' starts a pi session from one.",
  );
}

/** The branch's context by the boundary rule, reading as little of the file as it can. */
function loadTargetContext(path: string, selection: SessionSelection, io: CliIo): BoundaryLoad {
  const loaded = withProgress(path, io, (onProgress) => loadBoundary(path, { skipCorrupt: selection.skipCorrupt, ...onProgress }));
  reportSkipped(path, loaded.skipped, io);
  return loaded;
}

/** Every entry of the file (migrated to version 3 in memory). */
function readTargetSession(path: string, selection: SessionSelection, io: CliIo): ParsedSession {
  const parsed = withProgress(path, io, (onProgress) => readSession(path, { skipCorrupt: selection.skipCorrupt, ...onProgress }));
  reportSkipped(path, parsed.skipped, io);
  return parsed;
}

/**
 * Runs a reader of `path` with a progress line on stderr (see progress.ts); `read` gets the
 * `{ onProgress }` option to spread into the reader's options, empty when nothing is shown.
 */
function withProgress<R>(path: string, io: CliIo, read: (option: { onProgress?: (progress: ByteProgress) => void }) => R): R {
  let size = 0;
  try {
    size = statSync(path).size;
  } catch {
    // The reader reports an unreadable file itself.
  }
  const line = progressLine(io, `Reading ${basename(path)}`, size);
  try {
    return read(line.onProgress === undefined ? {} : { onProgress: line.onProgress });
  } finally {
    line.done();
  }
}

/** One stderr line per line left out. */
function reportSkipped(path: string, skipped: readonly SkippedLine[], io: CliIo): void {
  for (const line of skipped) io.stderr.write(`compaction: skipped line ${line.line} of ${path}: ${line.reason}\n`);
}

/**
 * Where skipped lines break the current branch's parent chain: the skipped line numbers and how
 * many entries of the file the branch no longer reaches; null when the branch is whole.
 */
export function branchBreak(parsed: ParsedSession): { readonly lines: string; readonly unreachable: number } | null {
  if (parsed.skipped.length === 0) return null;
  const branch = new SessionTree(parsed.entries).branch();
  const first = branch[0];
  if (first === undefined || first.parentId === null) return null;
  return { lines: parsed.skipped.map((line) => line.line).join(", "), unreachable: parsed.entries.length - branch.length };
}

/**
 * Before writing anything derived from a file read with --skip-corrupt: a skipped line can break
 * the branch's parent chain, leaving every earlier entry unreachable. Writing then (a compaction
 * summary of only the tail, a branch of only the tail) would lose history for good, so refuse.
 */
function assertWholeBranch(path: string, selection: SessionSelection): void {
  if (!selection.skipCorrupt) return;
  const broken = branchBreak(readSession(path, { skipCorrupt: true }));
  if (broken === null) return;
  const { unreachable, lines } = broken;
  throw new CliError(
    ExitCode.SESSION,
    `The branch breaks at a skipped line (line ${lines} of ${path}): ${unreachable} earlier entries cannot be reached, so nothing was written.`,
    "Repair or remove that line (keep a copy of the file first), then run the command again; --dry-run shows what the reachable part alone would give.",
  );
}
