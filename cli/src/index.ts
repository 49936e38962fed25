/**
 * @compaction/cli: the `compaction` command. `main(argv, io)` runs it and returns the exit code
 * (see exit-codes.ts); bin/compaction.js calls it with the process's arguments.
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import type { CliCommand, CommandRuntime } from "./command-scaffold.js";
import { autocompactCommand } from "./commands/autocompact.js";
import { compactCommand } from "./commands/compact.js";
import { compareCommand } from "./commands/compare.js";
import { configCommand } from "./commands/config.js";
import { contextExportCommand } from "./commands/context-export.js";
import { contextHistoryCommand } from "./commands/context-history.js";
import { contextImportCommand } from "./commands/context-import.js";
import { contextInspectCommand } from "./commands/context-inspect.js";
import { contextStatusCommand } from "./commands/context-status.js";
import { searchCommand } from "./commands/search.js";
import { sessionBranchCommand } from "./commands/session-branch.js";
import { sessionCopyCommand } from "./commands/session-copy.js";
import { sessionListCommand } from "./commands/session-list.js";
import { sessionUpgradeCommand } from "./commands/session-upgrade.js";
import { outputFlagsOf, reportFailure } from "./errors.js";
import { EXIT_CODES_HELP, ExitCode, type ExitCodeValue } from "./exit-codes.js";
import { type CliIo, processIo } from "./io.js";
import { programName, type ProgramName } from "./program-name.js";

export { ExitCode, type ExitCodeValue } from "./exit-codes.js";
export type { JsonErrorReport } from "./errors.js";
export type { CliIo, CliStream } from "./io.js";

/** What `--help` shows after the commands, its commands spelled as the user runs the CLI. */
function examples(program: ProgramName): string {
  return `Examples:
  ${program} context status                      this directory's latest pi session
  ${program} context status --json --session 0194f3a2
  ${program} context status --window 128000      against a 128k model's window instead of the config's
  ${program} compact --dry-run                   show what would be compacted
  ${program} compact --focus "the failing tests" --yes
  ${program} compare --window 128000             replay the session through each preset at 128k, to choose one
  ${program} context history --depth 3           the latest three compactions
  ${program} context inspect                     where the tokens go, what compacting would save
  ${program} session branch --at 1f0e3c2a        a new session file ending at that entry
  ${program} session upgrade                     rewrite a version 1/2 file as version 3 (keeps .bak)
  ${program} session copy s.jsonl sqlite:sessions.db       a session file into a SQLite database
  ${program} session list --db sqlite:sessions.db          the sessions in it, with their --session
  ${program} context status --session sqlite:sessions.db#0194f3a2-...   a session in a database
  ${program} search "user-message-selector"      entries that mention it, compacted ones too
  ${program} autocompact off                     no automatic compaction for this session
  ${program} config --agent coder                the config in force: file, section, preset, plugins, options
  ${program} context export state.json           the session's state as JSON (docs/session-state.md)
  ${program} context import state.json           a new session seeded with it, for any model
  ${program} context status --session ~/.claude/projects/my-app/3f2a.jsonl   Claude Code, read-only
  ${program} context status --session openclaw:main      OpenClaw agent main's latest session, read-only
  ${" ".repeat(program.length + 37)}(SQLite under ~/.openclaw/agents/main/agent/)

Sessions: --session takes a file path or a session id (or its start); without it, the latest
session of the current directory in ~/.pi/agent/sessions/ (or --sessions-dir, or
$COMPACTION_SESSIONS_DIR, or $PI_CODING_AGENT_DIR/sessions). A Claude Code transcript or a Codex
rollout: its path (read-only). An OpenClaw session: openclaw:<agentId>, a session key
agent:<agentId>:<rest>, or an openclaw-agent.sqlite path; OpenClaw keeps one SQLite database per
agent under ~/.openclaw/agents/<agentId>/agent/ ($OPENCLAW_STATE_DIR moves ~/.openclaw), which
compaction only reads. A session in a database: sqlite:<file>#<id>, or
postgres://user@host:port/db#<id> (needs @compaction/store-postgres; the password from
PGPASSWORD or ~/.pgpass). See docs/sessions-in-a-database.md.
Project code: like ESLint, compaction runs the project's code configuration (.compactionrc.mjs,
compaction.config.ts, plugin files and packages it names). In a folder you do not trust, pass
--no-project-code: data-only settings (.compactionrc YAML/JSON, package.json#compaction) still apply.
Colours: off with --no-color or NO_COLOR, on with FORCE_COLOR, else when writing to a terminal.
Counts: each session's token counts are kept in $XDG_CACHE_HOME/compaction/counts (else
~/.cache/compaction/counts), so a later run encodes only new messages, and the built o200k encoder
in .../compaction/encoders (28 MB), so a later run starts it sooner; COMPACTION_NO_COUNT_CACHE=1
turns both off.`;
}

/** Runs the command line `argv` (without `node` and the script) and returns the exit code. */
export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  let code: ExitCodeValue = ExitCode.OK;
  const runtime: CommandRuntime = {
    io,
    exit(value) {
      code = value;
    },
  };
  const program = buildProgram(runtime);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.OK : ExitCode.USAGE;
    // Each command reports its own failures (command-scaffold.ts): this is for anything else.
    return reportFailure(error, io, { ...outputFlagsOf(argv), stdoutWritten: false });
  }
}

/** The program's commands, in the order `--help` lists them; `context` and `session` are groups. */
const COMMANDS: readonly CliCommand[] = [compactCommand, compareCommand, searchCommand, autocompactCommand, configCommand];
const CONTEXT_COMMANDS: readonly CliCommand[] = [contextStatusCommand, contextHistoryCommand, contextInspectCommand, contextExportCommand, contextImportCommand];
const SESSION_COMMANDS: readonly CliCommand[] = [sessionBranchCommand, sessionUpgradeCommand, sessionCopyCommand, sessionListCommand];

function buildProgram(runtime: CommandRuntime): Command {
  const { io } = runtime;
  // `npx compaction` or `compaction`, as the user ran it: the usage lines and every command printed.
  const name = programName(io.env);
  const program = new Command(name);
  program
    .description("See and control context compaction on pi-coding-agent, OpenClaw, Claude Code and Codex sessions (the last three read-only), and choose a preset for them with compare.")
    .version(packageVersion(), "-V, --version", "print the version")
    .helpOption("-h, --help", "show help")
    .option("--sessions-dir <dir>", "folder holding one session folder per project (default ~/.pi/agent/sessions)")
    .option("--skip-corrupt", "read past corrupt lines in the session file, reporting each on stderr")
    .option("--no-color", "no colours (also: NO_COLOR)")
    .option("--no-project-code", "run none of the project's code: no .compactionrc.{js,mjs,cjs,ts} or compaction.config.*, no plugin or preset from the project (also: COMPACTION_NO_PROJECT_CODE=1)")
    .option("--verbose", "on an error, also print the stack of what caused it (e.g. what a plugin threw)")
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: (text, write) => write(`compaction: ${text.replace(/^error: /, "").trimEnd()}\nhint: run '${name} --help' for usage.\n`),
    })
    .addHelpText("after", `\n${examples(name)}\n\n${EXIT_CODES_HELP}\n`);

  for (const command of COMMANDS) command.register(program, runtime);
  const context = program.command("context").description("look at a session's context");
  for (const command of CONTEXT_COMMANDS) command.register(context, runtime);
  const session = program.command("session").description("work with session files and sessions in databases");
  for (const command of SESSION_COMMANDS) command.register(session, runtime);
  return program;
}

function packageVersion(): string {
  const text = readFileSync(new URL("../package.json", import.meta.url), "utf8");
  return (JSON.parse(text) as { version: string }).version;
}
