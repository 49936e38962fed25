/**
 * `compaction context export <file>`: the session's state (goal, decisions, open tasks, files,
 * tool operations, identifiers, summary, last exchange) as one JSON document, in the documented
 * session-state schema (docs/session-state.md). Works on pi sessions and on imported Claude Code
 * and Codex transcripts; `-` writes to stdout.
 */
import { type Stats, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { detectTranscriptFormat } from "@compaction/transcript";
import { extractSessionState, type SessionState } from "@compaction/core";
import type { Command } from "commander";
import writeFileAtomic from "write-file-atomic";
import { AGENT_OPTION, commandContext, type CommandContext, SESSION_OPTION, sessionSelection } from "../command-context.js";
import { CliError } from "../errors.js";
import { ExitCode, type ExitCodeValue } from "../exit-codes.js";
import type { CliIo } from "../io.js";
import { configOf, loadCompactor } from "../load-compactor.js";
import { plural, sessionLabel } from "../output.js";
import { loadTranscriptContext, resolveTarget } from "../session-target.js";

interface ExportOptions {
  readonly session?: string;
  readonly agent?: string;
  readonly force?: boolean;
  readonly json?: boolean;
}

/** What `context export <file> --json` prints (with `-`, the document itself is the output). */
export interface ExportReport {
  /** The file written. */
  readonly path: string;
  readonly source: SessionState["source"];
  readonly counts: { readonly goals: number; readonly openTasks: number; readonly decisions: number; readonly filesModified: number; readonly identifiers: number };
}

/** Adds `export` to the `context` command group. */
export function registerContextExport(group: Command, io: CliIo, done: (code: ExitCodeValue) => void): void {
  group
    .command("export")
    .argument("<file>", "where to write the JSON document; - for stdout")
    .description("write the session's state (goal, decisions, open tasks, files, tools, identifiers, summary, last exchange) as JSON")
    .option(...SESSION_OPTION)
    .option(...AGENT_OPTION)
    .option("--force", "replace the file if it exists")
    .option("--json", "print one JSON object (the file written, the source, the counts) instead of text; with - the document is printed as is")
    .action(async (file: string, options: ExportOptions, command: Command) => {
      const context = commandContext(command, io);
      const target = file === "-" ? null : resolve(io.cwd, file);
      if (target !== null) checkTarget(target, options.force === true);
      const state = await exportState(context, options);
      const text = `${JSON.stringify(state, null, 2)}\n`;
      if (target === null) {
        io.stdout.write(text);
      } else {
        // Atomic: a crash leaves the old file or the new one, never half a document.
        try {
          await writeFileAtomic(target, text, { encoding: "utf8", fsync: true });
        } catch (error) {
          throw new CliError(ExitCode.FAILED, `Could not write ${target}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}. Nothing was written.`, "Check that the folder is writable, or pass another file (- for stdout).");
        }
        io.stdout.write(options.json === true ? `${JSON.stringify(exportReport(state, target), null, 2)}\n` : renderExported(state, target, context));
      }
      done(ExitCode.OK);
    });
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

async function exportState(context: CommandContext, options: ExportOptions): Promise<SessionState> {
  const selection = sessionSelection(context, options.session);
  const path = await resolveTarget(selection, context.io);
  const transcript = loadTranscriptContext(path, selection, context.io);
  const compactor = await loadCompactor(context, { agent: options.agent, adapter: transcript.adapter });
  try {
    return extractSessionState(transcript.messages, compactor.adapter, {
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
  } finally {
    compactor.dispose();
  }
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

function renderExported(state: SessionState, path: string, { out: c }: CommandContext): string {
  const source = state.source;
  return [
    `${c.green("Exported:")} ${path}`,
    `${c.bold("From")}      ${sessionLabel({ id: source.session, format: source.format === "messages" ? "pi" : source.format })} (${plural(source.messages, "message")})`,
    `${c.bold("State")}     ${plural(state.goal.length, "goal")}, ${plural(state.openTasks.length, "open task")}, ${plural(state.decisions.length, "decision")}, ${plural(state.files.modified.length, "file")} modified, ${plural(state.identifiers.length, "identifier")}`,
    c.dim("Start a new session from it with: compaction context import <file>"),
    "",
  ].join("\n");
}
