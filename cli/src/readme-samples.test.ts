/**
 * The sample runs cli/README.md quotes (`$ npx compaction …` and what follows, up to the block's
 * end) are what the commands print: each is run as quoted, through npx in a project that has the
 * CLI installed (so the commands the output names are spelled as npx runs them), in the order a
 * reader meets them, on a copy of the session this repository ships (and, for the other agents'
 * formats, on a real Claude Code transcript and a Codex rollout), and compared line by line,
 * figures included. The example command under Development is context history's source.
 *
 * What differs per machine is mapped to what the README shows (the session's folder to
 * `/home/me/.pi/agent/sessions/--home-me-app--`, the project to `/home/me/app`), and what differs
 * per run (times, the ids of entries and sessions made by the run) is masked in the sample and the
 * output alike. `…` in a sample stands for anything within its line, and a line of only `…` for any
 * lines: the README shortens long paths and lists that way.
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { FIXTURES_DIR } from "@compaction/fixtures";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliRun, createSandbox, installCli, REAL_SESSION, runNpx, type Sandbox } from "./test-support/cli-sandbox.js";

const README = readFileSync(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8");
const SHOWN_SESSIONS_DIR = "/home/me/.pi/agent/sessions/--home-me-app--";
const SHOWN_SESSION = `${SHOWN_SESSIONS_DIR}/2025-11-20T23-33-50-805Z_d703a1a9-1b7b-4fb1-b512-c9738b1fe617.jsonl`;
const SHOWN_PROJECT = "/home/me/app";

/** The sample that starts with `$ <command>` (the first such), as its command and its lines. */
function sample(command: string): { args: string[]; lines: string[] } {
  const start = README.indexOf(`\n$ ${command}\n`);
  if (start < 0) throw new Error(`cli/README.md quotes no run of \`${command}\``);
  const body = README.slice(start + 1, README.indexOf("```", start)).trimEnd().split("\n");
  const [first, ...lines] = body;
  return { args: splitArgs((first as string).slice("$ npx compaction ".length)), lines };
}

/** Shell words, with double quotes (all the README's commands use). */
function splitArgs(text: string): string[] {
  return [...text.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? (m[2] as string));
}

/** What differs per run: times, and the ids of entries and sessions the run makes. */
function masked(line: string): string {
  return line
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}[.-]\d{3}Z/g, "<time>")
    .replace(/last \d+ seconds? ago/g, "last <n> seconds ago")
    .replace(/\bentry [0-9a-f]{8}\b/g, "entry <id>")
    .replace(/(?<![0-9a-f-])01[0-9a-f]{6}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, "<new session>");
}

/** Whether the output's lines are the sample's, `…` standing for anything (see the file's comment). */
function matches(sampleLines: readonly string[], outputLines: readonly string[]): boolean {
  const patterns = sampleLines.map((line) =>
    line.trim() === "…" ? null : new RegExp(`^${masked(line).split("…").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`),
  );
  const output = outputLines.map(masked);
  const from = (p: number, o: number): boolean => {
    if (p === patterns.length) return o === output.length;
    const pattern = patterns[p];
    if (pattern === null) {
      for (let skip = o; skip <= output.length; skip++) if (from(p + 1, skip)) return true;
      return false;
    }
    return o < output.length && (pattern as RegExp).test(output[o] as string) && from(p + 1, o + 1);
  };
  return from(0, 0);
}

describe("cli/README.md's sample runs", () => {
  let sandbox: Sandbox;
  /** The output as the README shows it: this machine's paths replaced by the README's. */
  const shown = (sb: Sandbox, text: string) =>
    text
      .replaceAll(sb.sessionPath, SHOWN_SESSION)
      .replaceAll(dirname(sb.sessionPath), SHOWN_SESSIONS_DIR)
      .replaceAll(sb.project, SHOWN_PROJECT)
      .trimEnd()
      .split("\n");
  /** Runs a sample's command (its session paths as this machine has them) and compares. */
  const check = (command: string, env: Record<string, string> = {}) => {
    const { args, lines } = sample(command);
    const run = sandbox.npx(
      args.map((arg) => arg.replace(SHOWN_SESSIONS_DIR.replace("/home/me", "~"), dirname(sandbox.sessionPath))),
      { NO_COLOR: "1", ...env },
    );
    expect(run.code, run.stderr).toBe(0);
    const output = shown(sandbox, run.stdout);
    expect(matches(lines, output), `cli/README.md quotes for \`${command}\`:\n${lines.join("\n")}\nbut it prints:\n${output.join("\n")}`).toBe(true);
  };

  beforeAll(async () => {
    sandbox = await createSandbox();
  });
  afterAll(() => sandbox.remove());

  // In this order: each one's figures depend on what the ones before wrote.
  it("context status", () => check("npx compaction context status"));
  it("context inspect", () => check("npx compaction context inspect"));
  it("search", () => check('npx compaction search "theme selector" --limit 1'));
  it("context export", () => check("npx compaction context export state.json"));
  it("session copy and session list", () => {
    check("npx compaction session copy ~/.pi/agent/sessions/--home-me-app--/2025-11-20T23-33-50-805Z_d703a1a9-1b7b-4fb1-b512-c9738b1fe617.jsonl sqlite:sessions.sqlite");
    check("npx compaction session list --db sqlite:sessions.sqlite");
  });
  it("compact", () => check('npx compaction compact --focus "the failing tests" --yes'));
  it("context status right after compact", () => {
    // The README's second status sample: the one after its compact sample.
    const at = README.indexOf("Right after `compact`:");
    const start = README.indexOf("$ npx compaction context status\n", at);
    const lines = README.slice(start, README.indexOf("```", start)).trimEnd().split("\n").slice(1);
    const run = sandbox.npx(["context", "status"], { NO_COLOR: "1" });
    expect(matches(lines, shown(sandbox, run.stdout)), run.stdout).toBe(true);
  });
  it("context history", () => check("npx compaction context history --depth 1"));
  it("autocompact", () => check("npx compaction autocompact off"));
  it("session branch", () => check("npx compaction session branch --at l00000918"));
  it("context import", () => check("npx compaction context import state.json"));

  it("config, with the .compactionrc the README shows", () => {
    const at = README.indexOf("### `compaction config`");
    const config = /```yaml\n([\s\S]*?)```/.exec(README.slice(at))?.[1];
    expect(config).toBeDefined();
    sandbox.writeConfig(".compactionrc", config as string);
    try {
      check("npx compaction config --agent reseacher");
    } finally {
      rmSync(join(sandbox.project, ".compactionrc"));
    }
  });

  it("session upgrade, on the shipped file where a clone has it", () => {
    const clone = join(sandbox.root, "compaction");
    mkdirSync(join(clone, "examples", "sessions"), { recursive: true });
    copyFileSync(REAL_SESSION, join(clone, "examples", "sessions", "pi-large-session.jsonl"));
    const { args, lines } = sample("npx compaction session upgrade --session examples/sessions/pi-large-session.jsonl");
    const inClone = spawnIn(clone, args);
    expect(inClone.code, inClone.stderr).toBe(0);
    expect(matches(lines, inClone.stdout.replaceAll(clone, "/home/me/compaction").trimEnd().split("\n")), inClone.stdout).toBe(true);
  });

  it("context status of a Claude Code transcript and of a Codex rollout", () => {
    for (const [command, file] of [
      ["npx compaction context status --session ~/.claude/projects/-home-me-app/37f83ec9-….jsonl", "claude-code-log-37f83ec9.jsonl"],
      ["npx compaction context status --session ~/.codex/sessions/2025/10/21/rollout-….jsonl", "codex-pomodoro-example.jsonl"],
    ] as const) {
      const { lines } = sample(command);
      const run = sandbox.npx(["context", "status", "--session", join(FIXTURES_DIR, file)], { NO_COLOR: "1" });
      expect(run.code, run.stderr).toBe(0);
      expect(matches(lines, run.stdout.trimEnd().split("\n")), `${command}:\n${run.stdout}`).toBe(true);
    }
  });

  it("shows a command as its source has it (the context history command, in Development)", () => {
    const shown = /```ts\n(export const contextHistoryCommand = defineCommand\(\{[\s\S]*?)```/.exec(README)?.[1];
    expect(shown).toBeDefined();
    const source = readFileSync(fileURLToPath(new URL("./commands/context-history.ts", import.meta.url)), "utf8");
    // Line for line and in order: the README's lines are a contiguous part of the file.
    expect(source).toContain(shown as string);
  });

  it("tells a sample from an edited one (the matcher itself)", () => {
    const output = ["Before    177,657 tokens (914 messages)", "After     21,903 tokens", "Dry run: nothing written."];
    expect(matches(["Before    177,657 tokens (914 messages)", "…", "Dry run: nothing written."], output)).toBe(true);
    expect(matches(["Before    177,657 tokens (…)", "After     21,903 tokens", "Dry run: nothing written."], output)).toBe(true);
    expect(matches(["Before    177,658 tokens (914 messages)", "…", "Dry run: nothing written."], output)).toBe(false);
    expect(matches(["Before    177,657 tokens (914 messages)", "After     21,903 tokens"], output)).toBe(false);
    expect(matches(["wrote compaction entry cf3696ab at 2025-11-21T10:02:11.412Z"], ["wrote compaction entry 0a1b2c3d at 2026-12-02T06:38:53.547Z"])).toBe(true);
  });
});

/** `npx compaction` in `cwd`, with the CLI installed there as a clone has it (for the upgrade, which runs in a clone). */
function spawnIn(cwd: string, args: readonly string[]): CliRun {
  installCli(cwd);
  return runNpx(cwd, args, { HOME: join(cwd, ".home"), NO_COLOR: "1" });
}
