/**
 * @compaction/cli: the `compaction` command. `main(argv, io)` runs it and returns the exit code
 * (see exit-codes.ts); bin/compaction.js calls it with the process's arguments.
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { registerAutocompact } from "./commands/autocompact.js";
import { registerCompact } from "./commands/compact.js";
import { registerConfig } from "./commands/config.js";
import { registerContextExport } from "./commands/context-export.js";
import { registerContextHistory } from "./commands/context-history.js";
import { registerContextImport } from "./commands/context-import.js";
import { registerContextInspect } from "./commands/context-inspect.js";
import { registerContextStatus } from "./commands/context-status.js";
import { registerSearch } from "./commands/search.js";
import { registerSessionBranch } from "./commands/session-branch.js";
import { registerSessionUpgrade } from "./commands/session-upgrade.js";
import { errorReport, exitCodeFor, renderError } from "./errors.js";
import { EXIT_CODES_HELP, ExitCode, type ExitCodeValue } from "./exit-codes.js";
import { type CliIo, type CliStream, processIo } from "./io.js";
import { colorEnabled, colors } from "./output.js";

export { ExitCode, type ExitCodeValue } from "./exit-codes.js";
export type { JsonErrorReport } from "./errors.js";
export type { CliIo, CliStream } from "./io.js";

const EXAMPLES = `Examples:
  compaction context status                      this directory's latest pi session
  compaction context status --json --session 0194f3a2
  compaction compact --dry-run                   show what would be compacted
  compaction compact --focus "the failing tests" --yes
  compaction context history --depth 3           the latest three compactions
  compaction context inspect                     where the tokens go, what compacting would save
  compaction session branch --at 1f0e3c2a        a new session file ending at that entry
  compaction session upgrade                     rewrite a version 1/2 file as version 3 (keeps .bak)
  compaction search "user-message-selector"      entries that mention it, compacted ones too
  compaction autocompact off                     no automatic compaction for this session
  compaction config --agent coder                the config in force: file, section, preset, plugins, options
  compaction context export state.json           the session's state as JSON (docs/session-state.md)
  compaction context import state.json           a new session seeded with it, for any model
  compaction context status --session ~/.claude/projects/my-app/3f2a.jsonl   Claude Code, read-only
  COMPACTION_SESSIONS_DIR=~/.openclaw/sessions compaction context status

Sessions: --session takes a file path or a session id (or its start); without it, the latest
session of the current directory in ~/.pi/agent/sessions/ (or --sessions-dir, or
$COMPACTION_SESSIONS_DIR, or $PI_CODING_AGENT_DIR/sessions).
Project code: like ESLint, compaction runs the project's code configuration (.compactionrc.mjs,
compaction.config.ts, plugin files and packages it names). In a folder you do not trust, pass
--no-project-code: data-only settings (.compactionrc YAML/JSON, package.json#compaction) still apply.
Colours: off with --no-color or NO_COLOR, on with FORCE_COLOR, else when writing to a terminal.`;

/** Runs the command line `argv` (without `node` and the script) and returns the exit code. */
export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  let code: ExitCodeValue = ExitCode.OK;
  const done = (value: ExitCodeValue): void => {
    code = value;
  };
  const stdout = writeTracking(io.stdout);
  const program = buildProgram({ ...io, stdout }, done);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.OK : ExitCode.USAGE;
    const flag = !argv.includes("--no-color");
    io.stderr.write(renderError(error, colors(colorEnabled(io.stderr, io.env, flag))));
    // A script reading --json output gets one JSON object on stdout either way: the error, unless
    // the command already printed its own report (compact prints its plan with the reason).
    if (argv.includes("--json") && !stdout.written) io.stdout.write(`${JSON.stringify(errorReport(error), null, 2)}\n`);
    return exitCodeFor(error);
  }
}

/** The stream, remembering whether anything was written to it. */
function writeTracking(stream: CliStream): CliStream & { readonly written: boolean } {
  let written = false;
  return {
    write(text: string) {
      written ||= text !== "";
      return stream.write(text);
    },
    get isTTY() {
      return stream.isTTY;
    },
    get written() {
      return written;
    },
  };
}

function buildProgram(io: CliIo, done: (code: ExitCodeValue) => void): Command {
  const program = new Command("compaction");
  program
    .description("See and control context compaction on pi-coding-agent / OpenClaw session files.")
    .version(packageVersion(), "-V, --version", "print the version")
    .helpOption("-h, --help", "show help")
    .option("--sessions-dir <dir>", "folder holding one session folder per project (default ~/.pi/agent/sessions)")
    .option("--skip-corrupt", "read past corrupt lines in the session file, reporting each on stderr")
    .option("--no-color", "no colours (also: NO_COLOR)")
    .option("--no-project-code", "run none of the project's code: no .compactionrc.{js,mjs,cjs,ts} or compaction.config.*, no plugin or preset from the project (also: COMPACTION_NO_PROJECT_CODE=1)")
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: (text, write) => write(`compaction: ${text.replace(/^error: /, "").trimEnd()}\nhint: run 'compaction --help' for usage.\n`),
    })
    .addHelpText("after", `\n${EXAMPLES}\n\n${EXIT_CODES_HELP}\n`);

  registerCompact(program, io, done);
  registerSearch(program, io, done);
  registerAutocompact(program, io, done);
  registerConfig(program, io, done);
  const context = program.command("context").description("look at a session's context");
  registerContextStatus(context, io, done);
  registerContextHistory(context, io, done);
  registerContextInspect(context, io, done);
  registerContextExport(context, io, done);
  registerContextImport(context, io, done);
  const session = program.command("session").description("work with session files");
  registerSessionBranch(session, io, done);
  registerSessionUpgrade(session, io, done);
  return program;
}

function packageVersion(): string {
  const text = readFileSync(new URL("../package.json", import.meta.url), "utf8");
  return (JSON.parse(text) as { version: string }).version;
}
