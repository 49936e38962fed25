/**
 * `compaction context export <file>`: the session's state (goal, decisions, open tasks, files,
 * tool operations, identifiers, summary, last exchange) as one JSON document, in the documented
 * session-state schema (docs/session-state.md). Works on pi sessions and on imported Claude Code
 * and Codex transcripts; `-` writes to stdout.
 */
import { type Stats, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { detectTranscriptFormat } from "@compaction/transcript";
import { type SessionState } from "@compaction/core";
import { extractSessionState } from "@compaction/plugin-summarizer-extractive";
import writeFileAtomic from "write-file-atomic";
import type { CommandContext } from "../command-context.js";
import { type CommandCall, type CommandScope, type CommonOptions, defineCommand } from "../command-scaffold.js";
import { CliError } from "../errors.js";
import { ExitCode } from "../exit-codes.js";
import { configOf } from "../load-compactor.js";
import { plural, sessionLabel } from "../output.js";

interface ExportOptions extends CommonOptions {
  readonly force?: boolean;
}

/** Where the document goes: a file's absolute path, or null for stdout (`-`). */
type ExportTarget = string | null;

/** What `context export <file> --json` prints (with `-`, the document itself is the output). */
export interface ExportReport {
  /** The file written. */
  readonly path: string;
  readonly source: SessionState["source"];
  readonly counts: { readonly goals: number; readonly openTasks: number; readonly decisions: number; readonly filesModified: number; readonly identifiers: number };
}

/** `compaction context export <file>`. */
export const contextExportCommand = defineCommand({
  name: "export",
  arguments: [["<file>", "where to write the JSON document; - for stdout"]],
  description: "write the session's state (goal, decisions, open tasks, files, tools, identifiers, summary, last exchange) as JSON",
  session: true,
  agent: true,
  options: [["--force", "replace the file if it exists"]],
  jsonHelp: "print one JSON object (the file written, the source, the counts) instead of text; with - the document is printed as is",
  parse: ({ context, args: [file], options }: CommandCall<[string], ExportOptions>): ExportTarget => {
    if (file === "-") return null;
    const target = resolve(context.io.cwd, file);
    checkTarget(target, options.force === true);
    return target;
  },
  run: exportState,
  // With -, the document is the output, --json or not.
  text: (state, { input: target, context }) => (target === null ? documentText(state) : renderExported(state, target, context)),
  json: (state, { input: target }) => (target === null ? state : exportReport(state, target)),
});

function documentText(state: SessionState): string {
  return `${JSON.stringify(state, null, 2)}\n`;
}

/**
 * Refuses a target that cannot take the document, before any work: a missing folder, a
 * directory, an existing file without --force, and, even with --force, a transcript (the
 * session itself, or any other): replacing one with JSON would lose its history.
 */
function checkTarget(path: string, force: boolean): void {
  const folder = statOrNull(dirname(path));
  if (folder === null || !folder.isDirectory()) {
    throw new CliError(ExitCode.USAGE, `Cannot export to ${path}: the folder ${dirname(path)} does not exist.`, "Create it first, or pass a path in an existing folder (- for stdout).");
  }
  const existing = statOrNull(path);
  if (existing === null) return;
  if (existing.isDirectory()) throw new CliError(ExitCode.USAGE, `Cannot export to ${path}: it is a directory.`, "Pass a file name, e.g. state.json.");
  if (isTranscript(path)) {
    throw new CliError(
      ExitCode.FAILED,
      `Not exporting: ${path} is a session transcript, and replacing it with a JSON document would lose its history${force ? " (--force does not apply to transcripts)" : ""}. Nothing was written.`,
      "Choose another file name, e.g. state.json.",
    );
  }
  if (!force) throw new CliError(ExitCode.FAILED, `Not exporting: ${path} already exists, and nothing was written.`, "Pass --force to replace it, or choose another file name.");
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

function isTranscript(path: string): boolean {
  try {
    detectTranscriptFormat(path);
    return true;
  } catch {
    return false;
  }
}

/** Reads the session's state and, for a file, writes it there. */
async function exportState(scope: CommandScope<ExportOptions, ExportTarget>): Promise<SessionState> {
  const { path } = scope.session;
  const transcript = scope.session.transcript();
  const compactor = await scope.compactor({ adapter: transcript.adapter });
  const state = extractSessionState(transcript.messages, compactor.adapter, {
    source: {
      session: transcript.sessionId,
      path,
      format: transcript.format,
      cwd: transcript.cwd,
      leafEntryId: transcript.pi?.leafId ?? null,
    },
    counter: compactor.tokens.counter,
    summaryMaxTokens: configOf(compactor).summarizer.maxTokens,
  });
  const target = scope.input;
  if (target !== null) {
    // Atomic: a crash leaves the old file or the new one, never half a document.
    try {
      await writeFileAtomic(target, documentText(state), { encoding: "utf8", fsync: true });
    } catch (error) {
      throw new CliError(ExitCode.FAILED, `Could not write ${target}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}. Nothing was written.`, "Check that the folder is writable, or pass another file (- for stdout).");
    }
  }
  return state;
}

function exportReport(state: SessionState, path: string): ExportReport {
  return {
    path,
    source: state.source,
    counts: {
      goals: state.goal.length,
      openTasks: state.openTasks.length,
      decisions: state.decisions.length,
      filesModified: state.files.modified.length,
      identifiers: state.identifiers.length,
    },
  };
}

function renderExported(state: SessionState, path: string, { out: c, program }: CommandContext): string {
  const source = state.source;
  return [
    `${c.green("Exported:")} ${path}`,
    `${c.bold("From")}      ${sessionLabel({ id: source.session, format: source.format === "messages" ? "pi" : source.format })} (${plural(source.messages, "message")})`,
    `${c.bold("State")}     ${plural(state.goal.length, "goal")}, ${plural(state.openTasks.length, "open task")}, ${plural(state.decisions.length, "decision")}, ${plural(state.files.modified.length, "file")} modified, ${plural(state.identifiers.length, "identifier")}`,
    c.dim(`Start a new session from it with: ${program} context import <file>`),
    "",
  ].join("\n");
}
