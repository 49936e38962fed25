/**
 * The command scaffold on its own: commands defined with `defineCommand`, run in-process on a
 * program of their own (no built binary), with the real pi session as `--session`.
 */
import { CompactionError, ErrorCodes } from "@compaction/core";
import { Command, CommanderError } from "commander";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type CliCommand, type CommandCall, type CommandRuntime, type CommandScope, type CommonOptions, defineCommand } from "./command-scaffold.js";
import { CliError } from "./errors.js";
import { ExitCode } from "./exit-codes.js";
import { REAL_SESSION } from "./test-support/cli-sandbox.js";

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

let cwd: string;
beforeEach(() => {
  // No config here: compactors get the defaults.
  cwd = mkdtempSync(join(tmpdir(), "compaction-scaffold-"));
});
afterEach(() => rmSync(cwd, { recursive: true, force: true }));

/** Runs `argv` on a program holding `command`, as `main` does; the exit code and what was printed. */
async function run(command: CliCommand, argv: readonly string[]): Promise<Run> {
  let stdout = "";
  let stderr = "";
  let code: number = ExitCode.OK;
  const runtime: CommandRuntime = {
    io: {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      stdin: process.stdin,
      env: { NO_COLOR: "1", HOME: cwd, COMPACTION_SESSIONS_DIR: join(cwd, "sessions") },
      cwd,
    },
    exit(value) {
      code = value;
    },
  };
  const program = new Command("compaction").exitOverride().configureOutput({ writeOut: (text) => (stdout += text), writeErr: (text) => (stderr += text) });
  command.register(program, runtime);
  try {
    await program.parseAsync([...argv], { from: "user" });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
  }
  return { code, stdout, stderr };
}

interface CountOptions extends CommonOptions {
  readonly twice?: boolean;
}

/** A command that counts something and can be made to fail in each step. */
function counting(fail: { readonly in?: "parse" | "run"; readonly error?: unknown } = {}) {
  return defineCommand({
    name: "count",
    arguments: [["<word>", "the word to count"]],
    description: "count a word",
    options: [["--twice", "count it twice"]],
    parse: ({ args: [word] }: CommandCall<[string], CountOptions>) => {
      if (fail.in === "parse") throw fail.error;
      return word;
    },
    run: async ({ input, options }: CommandScope<CountOptions, string>) => {
      if (fail.in === "run") throw fail.error;
      return { word: input, count: options.twice === true ? 2 : 1 };
    },
    text: (result) => `${result.word}: ${result.count}\n`,
  });
}

describe("rendering", () => {
  it("prints the text rendering without --json, and the result as indented JSON with it", async () => {
    const text = await run(counting(), ["count", "tokens", "--twice"]);
    expect(text).toEqual({ code: 0, stdout: "tokens: 2\n", stderr: "" });
    const json = await run(counting(), ["count", "tokens", "--json"]);
    expect(json).toEqual({ code: 0, stdout: `${JSON.stringify({ word: "tokens", count: 1 }, null, 2)}\n`, stderr: "" });
  });

  it("prints what `json` makes of the result, and exits with `exitCode`", async () => {
    const command = defineCommand({
      name: "check",
      description: "check",
      run: async () => ({ ok: false, detail: "internal" }),
      text: () => "not ok\n",
      json: (result) => ({ ok: result.ok }),
      exitCode: (result) => (result.ok ? ExitCode.OK : ExitCode.FAILED),
    });
    expect(await run(command, ["check", "--json"])).toEqual({ code: 1, stdout: '{\n  "ok": false\n}\n', stderr: "" });
    expect(await run(command, ["check"])).toEqual({ code: 1, stdout: "not ok\n", stderr: "" });
  });

  it("prints `say` text before the result without --json, and nothing of it with --json", async () => {
    const command = defineCommand({
      name: "plan",
      description: "plan",
      run: async (scope) => {
        scope.say("the plan\n");
        return { done: true };
      },
      text: () => "done\n",
    });
    expect((await run(command, ["plan"])).stdout).toBe("the plan\ndone\n");
    expect((await run(command, ["plan", "--json"])).stdout).toBe('{\n  "done": true\n}\n');
  });

  it("declares --session, --agent, the command's own options and --json, in that order", async () => {
    const command = defineCommand({ name: "all", description: "all", session: true, agent: true, options: [["--own", "its own"]], jsonHelp: "JSON, please", run: async () => 0, text: () => "" });
    const help = (await run(command, ["all", "--help"])).stdout;
    const order = ["--session", "--agent", "--own", "--json"].map((flag) => help.indexOf(flag));
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(help).toContain("JSON, please");
    expect((await run(counting(), ["count", "--help"])).stdout).not.toContain("--session");
  });
});

describe("errors", () => {
  const cases = [
    { name: "a usage error", error: new CliError(ExitCode.USAGE, "Bad word.", "Pass another."), code: 2, errorCode: "COMPACTION_USAGE", hint: "Pass another." },
    { name: "a refusal", error: new CliError(ExitCode.FAILED, "Not now."), code: 1, errorCode: "COMPACTION_REFUSED", hint: null },
    { name: "a library error", error: new CompactionError(ErrorCodes.TRANSCRIPT_NOT_FOUND, "No such session."), code: 3, errorCode: ErrorCodes.TRANSCRIPT_NOT_FOUND, hint: null },
    { name: "a config error", error: new CompactionError(ErrorCodes.CONFIG_INVALID, "Bad config.", { hint: "Fix it." }), code: 4, errorCode: ErrorCodes.CONFIG_INVALID, hint: "Fix it." },
    {
      name: "an unreachable store",
      error: new CompactionError(ErrorCodes.STORE_UNAVAILABLE, "Could not connect to the Postgres server at db:5432.", { hint: "Is it running?" }),
      code: 5,
      errorCode: ErrorCodes.STORE_UNAVAILABLE,
      hint: "Is it running?",
    },
    { name: "an unexpected error", error: new TypeError("boom"), code: 1, errorCode: "COMPACTION_UNEXPECTED", hint: null },
  ] as const;

  it.each(cases)("maps $name to its exit code, one line (and the hint) on stderr, and the JSON error with --json", async ({ error, code, errorCode, hint }) => {
    for (const step of ["parse", "run"] as const) {
      const text = await run(counting({ in: step, error }), ["count", "tokens"]);
      expect(text.code).toBe(code);
      expect(text.stdout).toBe("");
      const message = (error as Error).message;
      const head = `compaction: ${error instanceof TypeError ? "unexpected error: " : ""}${message}\n`;
      expect(text.stderr).toBe(hint === null ? head : `${head}hint: ${hint}\n`);

      const json = await run(counting({ in: step, error }), ["count", "tokens", "--json"]);
      expect(json.code).toBe(code);
      expect(json.stderr).toBe(text.stderr);
      expect(JSON.parse(json.stdout)).toEqual({ error: { code: errorCode, message, hint, exitCode: code } });
    }
  });

  it("with scope.fail prints the command's report instead of the JSON error, and still exits with the error's code", async () => {
    const command = defineCommand({
      name: "refuse",
      description: "refuse",
      run: async (scope): Promise<{ reason: string | null }> => scope.fail(new CliError(ExitCode.FAILED, "No."), { reason: "No." }),
      text: () => "never\n",
    });
    expect(await run(command, ["refuse", "--json"])).toEqual({ code: 1, stdout: '{\n  "reason": "No."\n}\n', stderr: "compaction: No.\n" });
    expect(await run(command, ["refuse"])).toEqual({ code: 1, stdout: "", stderr: "compaction: No.\n" });
  });

  it("checks the arguments before it resolves the session: a usage error wins over a missing session", async () => {
    const command = defineCommand({
      name: "look",
      description: "look",
      session: true,
      parse: () => {
        throw new CliError(ExitCode.USAGE, "Bad argument.");
      },
      run: async () => 0,
      text: () => "",
    });
    expect((await run(command, ["look", "--session", join(cwd, "missing.jsonl")])).code).toBe(ExitCode.USAGE);
    const withoutParse = defineCommand({ name: "look", description: "look", session: true, run: async () => 0, text: () => "" });
    const missing = await run(withoutParse, ["look", "--session", join(cwd, "missing.jsonl")]);
    expect(missing.code).toBe(ExitCode.SESSION);
    expect(missing.stderr).toMatch(/^compaction: /);
  });
});

describe("session and compactor", () => {
  it("resolves --session and hands the command the session to read", async () => {
    const command = defineCommand({
      name: "read",
      description: "read",
      session: true,
      run: async ({ session }) => ({ path: session.path, format: session.format(), entries: session.entries().entries.length }),
      text: (result) => `${result.entries}\n`,
    });
    const result = await run(command, ["read", "--json", "--session", REAL_SESSION]);
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { path: string; format: string; entries: number };
    expect(report.path).toBe(REAL_SESSION);
    expect(report.format).toBe("pi");
    expect(report.entries).toBeGreaterThan(500);
  });

  it("refuses scope.session to a command not declared with session: true", async () => {
    const command = defineCommand({ name: "nosession", description: "x", run: async ({ session }) => session.path, text: () => "" });
    const result = await run(command, ["nosession"]);
    expect(result.code).toBe(ExitCode.FAILED);
    expect(result.stderr).toContain("not declared with session: true");
  });

  it("builds compactors with --agent applied and disposes them, last first, when run returns or throws", async () => {
    for (const failing of [false, true]) {
      const disposed: string[] = [];
      const command = defineCommand({
        name: "build",
        description: "build",
        agent: true,
        run: async (scope) => {
          const compactor = await scope.compactor();
          const dispose = compactor.dispose.bind(compactor);
          compactor.dispose = () => {
            disposed.push("compactor");
            dispose();
          };
          scope.disposeWhenDone({ dispose: () => disposed.push("derived") });
          expect(disposed).toEqual([]);
          if (failing) throw new CliError(ExitCode.FAILED, "Failed after building.");
          return { agent: (compactor.config as { agent: string | null }).agent };
        },
        text: () => "",
      });
      const result = await run(command, ["build", "--json", "--agent", "coder"]);
      expect(disposed).toEqual(["derived", "compactor"]);
      if (failing) {
        expect(result.code).toBe(ExitCode.FAILED);
      } else {
        expect(result.code, result.stderr).toBe(0);
        expect(JSON.parse(result.stdout)).toEqual({ agent: "coder" });
        // --agent without a config file: said once on stderr, as by every command.
        expect(result.stderr).toBe("compaction: no config file found; agent 'coder' gets the defaults.\n");
      }
    }
  });
});
