/**
 * `compaction context import <file>`: a new pi session (version 3) seeded with a session state
 * from `context export`: one user message holding its goal, open tasks, decisions, files, ...
 * and the last exchange, with nothing model- or provider-specific, so any model continues it.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import {
  createSession,
  createSessionId,
  detectTranscriptFormat,
  parseSessionState,
  renderSessionSeed,
  sessionDirForCwd,
  sessionFileName,
  sessionSeedEntries,
} from "@compaction/transcript";
import { formatCount, type SessionState } from "@compaction/core";
import type { CommandContext } from "../command-context.js";
import { type CommandCall, type CommandScope, type CommonOptions, defineCommand } from "../command-scaffold.js";
import { CliError } from "../errors.js";
import { ExitCode } from "../exit-codes.js";
import type { ProgramName } from "../program-name.js";

interface ImportOptions extends CommonOptions {
  readonly cwd?: string;
}

/** What `context import` did (`--json` prints it as is). */
export interface ImportedSession {
  readonly path: string;
  readonly id: string;
  readonly cwd: string;
  /** The seed message's entry id. */
  readonly entryId: string;
  readonly from: { readonly session: string | null; readonly format: string; readonly exportedAt: string };
  /** Length of the seed text in characters. */
  readonly seedChars: number;
}

/** `compaction context import <file>`. */
export const contextImportCommand = defineCommand({
  name: "import",
  arguments: [["<file>", "a session state written by 'compaction context export'"]],
  description: "start a new pi session seeded with an exported session state (for any model or provider)",
  options: [["--cwd <dir>", "the project the new session belongs to (default: the current directory)"]],
  parse: ({ context, args: [file] }: CommandCall<[string], ImportOptions>) => resolve(context.io.cwd, file),
  run: importState,
  text: (imported, { context }) => renderImported(imported, context),
});

/** Reads the state in the file and starts a session seeded with it. */
async function importState({ context, options, input: file }: CommandScope<ImportOptions, string>): Promise<ImportedSession> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      throw new CliError(ExitCode.SESSION, `Cannot import ${file}: there is no such file.`, "Pass the path of a file written by 'compaction context export' (relative paths are read from the current directory).");
    }
    const why = code === "EISDIR" ? "it is a directory" : code === "EACCES" ? "permission denied" : (error as Error).message;
    throw new CliError(ExitCode.SESSION, `Cannot read ${file}: ${why}.`, "Pass the path of a file written by 'compaction context export'.");
  }
  const state = parseStateFile(text, file, context.program);
  const cwd = resolve(context.io.cwd, options.cwd ?? ".");
  if (!existsSync(cwd)) context.io.stderr.write(`compaction: note: ${cwd} does not exist; the session is filed under it anyway.\n`);
  const now = new Date();
  const id = createSessionId(now.getTime());
  const dir = sessionDirForCwd(cwd, {
    env: context.io.env,
    ...(context.globals.sessionsDir === undefined ? {} : { sessionsDir: context.globals.sessionsDir }),
  });
  const created = await createSession(join(dir, sessionFileName(id, now.toISOString())), { cwd, id }, sessionSeedEntries(state, now));
  return {
    path: created.path,
    id: created.header.id,
    cwd,
    entryId: created.entries[0]?.id ?? "",
    from: { session: state.source.session, format: state.source.format, exportedAt: state.exportedAt },
    seedChars: renderSessionSeed(state).length,
  };
}

/**
 * The state in `file`; a transcript or an empty file gets its own message instead of a JSON error.
 * The messages name `export` as `program` runs it (a hint's commands are spelled when it is shown).
 */
function parseStateFile(text: string, file: string, program: ProgramName): SessionState {
  if (text.trim() === "") {
    throw new CliError(ExitCode.SESSION, `${file} is empty: expected a session state written by '${program} context export'.`, "Export a session first: compaction context export state.json.");
  }
  try {
    return parseSessionState(text, file);
  } catch (error) {
    let format: string | undefined;
    try {
      format = detectTranscriptFormat(file);
    } catch {
      throw error;
    }
    throw new CliError(
      ExitCode.SESSION,
      `${file} is a ${format} transcript, not a session state: import takes the JSON document '${program} context export' writes.`,
      `Export it first: compaction context export state.json --session ${file}, then compaction context import state.json.`,
    );
  }
}

function renderImported(imported: ImportedSession, { out: c, program }: CommandContext): string {
  const from = imported.from.session === null ? `a ${imported.from.format} session` : `${imported.from.format} session ${imported.from.session}`;
  return [
    `${c.green("Imported:")} ${imported.path}`,
    `${c.bold("Session")}   ${imported.id} (for ${imported.cwd})`,
    `${c.bold("Seeded")}    with the state of ${from}, exported ${imported.from.exportedAt} (${formatCount(imported.seedChars)} characters, one user message)`,
    c.dim(`It is now the most recent session of ${imported.cwd}: 'pi --continue' there opens it; '${program} context status' there shows it.`),
    "",
  ].join("\n");
}
