/**
 * The one scaffold every `compaction` command runs on. A command says what it takes and what it
 * does (`defineCommand`); the scaffold does the rest, the same way for every command:
 *
 * 1. Declares the options: `--session` first (a command that works on a session), `--agent`
 *    (one that builds a compactor), the command's own, `--json` last.
 * 2. Sets up the command context (io, global options, colours) and runs `parse`: the command's
 *    checks of its own arguments, so a usage error comes before anything is read.
 * 3. Resolves the session `--session` names (or the current directory's latest).
 * 4. Runs `run`, which reads the session, asks for compactors (`scope.compactor()`: the config
 *    with `--agent` applied, counting through the session's count cache; all disposed when `run`
 *    returns or throws, and the cache written) and returns its result.
 * 5. Prints the result on stdout: with `--json` as one JSON object (`json`, default the result
 *    itself), else `text`; the exit code is `exitCode(result)`, default 0.
 * 6. On an error: `compaction: <message>` and the hint on stderr; with `--json` also the JSON
 *    error on stdout, unless the command already printed its own report (`scope.fail`); the
 *    error's exit code (errors.ts).
 */
import type { Compactor } from "@compaction/core";
import { sessionParent } from "@compaction/transcript";
import type { Command } from "commander";
import { AGENT_OPTION, commandContext, type CommandContext, SESSION_OPTION, sessionSelection } from "./command-context.js";
import { type CountCache, openCountCache } from "./count-cache.js";
import { reportFailure } from "./errors.js";
import { ExitCode, type ExitCodeValue } from "./exit-codes.js";
import type { CliIo, CliStream } from "./io.js";
import { type CompactorChoice, loadCompactor } from "./load-compactor.js";
import { programName, spellCommands } from "./program-name.js";
import { TargetSession } from "./session-target.js";

/** What `main` gives every command: the streams, the command line as typed, and where the exit code goes. */
export interface CommandRuntime {
  readonly io: CliIo;
  exit(code: ExitCodeValue): void;
}

/** `[flags, description]` of an option, or `[name, description]` of an argument, as commander takes them. */
export type Declaration = readonly [string, string];

/** The options every command has: `--json`, and `--session` / `--agent` when it declares them. */
export interface CommonOptions {
  readonly json?: boolean;
  readonly session?: string;
  readonly agent?: string;
}

/** The command line as the command sees it before anything is read. */
export interface CommandCall<A extends readonly unknown[], O> {
  readonly context: CommandContext;
  /** The arguments, in the order declared (`undefined` for an optional one left out). */
  readonly args: A;
  readonly options: O;
}

/** What `run` (and `text`, `json`) get: the call, the parsed input, the session, compactors. */
export interface CommandScope<O, I> {
  readonly context: CommandContext;
  readonly options: O;
  /** What `parse` returned. */
  readonly input: I;
  /** The session `--session` names; only for a command declared with `session: true`. */
  readonly session: TargetSession;
  /** A compactor for this directory's config, with `--agent` applied; disposed when `run` is done. */
  compactor(choice?: Omit<CompactorChoice, "agent">): Promise<Compactor<unknown>>;
  /** Disposes `resource` when `run` is done, before the compactors asked for earlier (a compactor derived from one). */
  disposeWhenDone(resource: { dispose(): void }): void;
  /** Prints text now, before the result (compact's plan before it asks); nothing with `--json`. */
  say(text: string): void;
  /**
   * Fails with `error`, having printed `report` as is with `--json` (so a script gets the report
   * with its reason instead of the bare error); the error still goes to stderr and sets the exit code.
   */
  fail(error: unknown, report: unknown): never;
}

export interface CommandSpec<A extends readonly unknown[], O extends CommonOptions, I, R> {
  readonly name: string;
  readonly description: string;
  readonly arguments?: readonly Declaration[];
  /** Takes `--session`: `run` gets the session it names as `scope.session`. */
  readonly session?: boolean;
  /** Takes `--agent`: the compactors `run` asks for apply that agent's section of the config. */
  readonly agent?: boolean;
  /** The command's own options, shown after `--session` and `--agent`, before `--json`. */
  readonly options?: readonly Declaration[];
  /** The help line of `--json`. */
  readonly jsonHelp?: string;
  /** Text `--help` shows after the options (a rule the output follows, an example); `compaction <command>` in it, and in the descriptions, is shown as the user runs the CLI. */
  readonly help?: string;
  /** Checks the arguments and options before anything is read (usage errors); the result is `scope.input`. */
  parse?(call: CommandCall<A, O>): I;
  run(scope: CommandScope<O, I>): Promise<R>;
  /** The result as text (colours from `scope.context.out`), newline-terminated, or "" for nothing. */
  text(result: R, scope: CommandScope<O, I>): string;
  /** What `--json` prints (default: the result as is). */
  json?(result: R, scope: CommandScope<O, I>): unknown;
  /** The exit code for a result (default 0). */
  exitCode?(result: R): ExitCodeValue;
}

/** A command, ready to be added to the program or a command group. */
export interface CliCommand {
  register(parent: Command, runtime: CommandRuntime): void;
}

const JSON_HELP = "print one JSON object instead of text";

/** A command on the scaffold (see the top of this file). */
export function defineCommand<A extends readonly unknown[], O extends CommonOptions, I, R>(spec: CommandSpec<A, O, I, R>): CliCommand {
  return {
    register(parent, runtime) {
      // The help names commands as `compaction <command>`; it shows them as the user runs the CLI.
      const program = programName(runtime.io.env);
      const spelled = (text: string) => spellCommands(text, program);
      const command = parent.command(spec.name);
      for (const [name, description] of spec.arguments ?? []) command.argument(name, spelled(description));
      command.description(spelled(spec.description));
      if (spec.session === true) command.option(...SESSION_OPTION);
      if (spec.agent === true) command.option(...AGENT_OPTION);
      for (const [flags, description] of spec.options ?? []) command.option(flags, spelled(description));
      command.option("--json", spelled(spec.jsonHelp ?? JSON_HELP));
      if (spec.help !== undefined) command.addHelpText("after", `\n${spelled(spec.help)}\n`);
      command.action(async (...values: unknown[]) => {
        const own = values.at(-1) as Command;
        const args = values.slice(0, -2) as unknown as A;
        runtime.exit(await runCommand(spec, runtime, own, args, own.opts<O>()));
      });
    },
  };
}

/** Steps 2 to 6 for one command line; the exit code. */
async function runCommand<A extends readonly unknown[], O extends CommonOptions, I, R>(
  spec: CommandSpec<A, O, I, R>,
  runtime: CommandRuntime,
  command: Command,
  args: A,
  options: O,
): Promise<ExitCodeValue> {
  const stdout = writeTracking(runtime.io.stdout);
  const io: CliIo = { ...runtime.io, stdout };
  const json = options.json === true;
  const resources: { dispose(): void }[] = [];
  try {
    const context = commandContext(command, io);
    const input = spec.parse === undefined ? (undefined as I) : spec.parse({ context, args, options });
    const session = spec.session === true ? await TargetSession.resolve(sessionSelection(context, options.session), io) : undefined;
    // Opened with the first compactor, written after the last one is disposed.
    let counts: CountCache | undefined | null = null;
    const countStore = (): CountCache | undefined => {
      if (counts === null) {
        counts = session === undefined ? undefined : openCountCache(io, session.path, { parentSession: () => sessionParent(session.path) });
        if (counts !== undefined) resources.push({ dispose: () => counts?.save() });
      }
      return counts;
    };
    const scope: CommandScope<O, I> = {
      context,
      options,
      input,
      get session(): TargetSession {
        if (session === undefined) throw new Error(`'${spec.name}' reads a session but is not declared with session: true`);
        return session;
      },
      async compactor(choice = {}) {
        const compactor = await loadCompactor(context, { countStore: countStore(), ...choice, ...(spec.agent === true ? { agent: options.agent } : {}) });
        resources.push(compactor);
        return compactor;
      },
      disposeWhenDone(resource) {
        resources.push(resource);
      },
      say(text) {
        if (!json) stdout.write(text);
      },
      fail(error, report) {
        if (json) stdout.write(jsonText(report));
        throw error;
      },
    };
    let result: R;
    try {
      result = await spec.run(scope);
    } finally {
      for (const resource of resources.reverse()) resource.dispose();
    }
    stdout.write(json ? jsonText(spec.json === undefined ? result : spec.json(result, scope)) : spec.text(result, scope));
    return spec.exitCode?.(result) ?? ExitCode.OK;
  } catch (error) {
    const globals = command.optsWithGlobals<{ color?: boolean; verbose?: boolean }>();
    return reportFailure(error, runtime.io, { json, color: globals.color !== false, verbose: globals.verbose === true, stdoutWritten: stdout.written, command: commandPath(command) });
  }
}

/** The command's words after the program's (`compare`, `context status`). */
function commandPath(command: Command): string {
  const words: string[] = [];
  for (let at: Command | null = command; at?.parent != null; at = at.parent) words.unshift(at.name());
  return words.join(" ");
}

/** `--json` output: the value, indented two spaces, newline-terminated. */
function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
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
