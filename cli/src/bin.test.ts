/**
 * bin/compaction.js when the build is missing (a fresh clone before `npm run build`, or npm ci
 * with scripts turned off): one line saying what is missing and a hint, exit 1, no stack trace.
 * And its start-up (Node's compile cache), a reader that closes the pipe early, Node's warnings, and
 * the commands it prints, spelled as it was run (`npx compaction` or `compaction`).
 */
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { installCli, runNpx } from "./test-support/cli-sandbox.js";

const BIN = fileURLToPath(new URL("../bin/compaction.js", import.meta.url));
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the package's bin/ beside a dist/ set up by `makeDist` (or none). */
function runCopy(makeDist: (distDir: string) => void = () => undefined) {
  dir = mkdtempSync(join(tmpdir(), "compaction-bin-"));
  mkdirSync(join(dir, "bin"));
  copyFileSync(BIN, join(dir, "bin", "compaction.js"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  makeDist(join(dir, "dist"));
  return spawnSync(process.execPath, [join(dir, "bin", "compaction.js"), "--help"], { encoding: "utf8" });
}

describe("bin/compaction.js without a build", () => {
  it("says the CLI is not built and how to build it, without a stack trace", () => {
    const run = runCopy();
    expect(run.status).toBe(1);
    const lines = run.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^compaction: the CLI is not built: .*dist\/index\.js is missing\.$/);
    expect(lines[1]).toMatch(/^hint: in the repository, run 'npm run build'/);
    expect(run.stdout).toBe("");
  });

  it("says so too when the CLI is built but a package it imports is not", () => {
    const run = runCopy((distDir) => {
      mkdirSync(distDir);
      writeFileSync(join(distDir, "index.js"), 'export { main } from "@compaction/not-built-here";\n');
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^compaction: the CLI is not built: @compaction\/not-built-here is missing\.\nhint: /);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it("is built on install: the repository's prepare script builds every package", () => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
    expect(scripts["prepare"]).toBe("node scripts/prepare.mjs");
    expect(readFileSync(join(ROOT, "scripts", "prepare.mjs"), "utf8")).toMatch(/\[turbo, "run", "build"/);
  });
});

describe("bin/compaction.js start-up", () => {
  /** The CLI's `--version` with a new folder as the system's temporary folder (and `extra` in its environment). */
  const run = (extra: Record<string, string> = {}) => {
    dir = mkdtempSync(join(tmpdir(), "compaction-bin-"));
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: dir };
    delete env["NODE_COMPILE_CACHE"];
    delete env["NODE_DISABLE_COMPILE_CACHE"];
    return spawnSync(process.execPath, [BIN, "--version"], { encoding: "utf8", env: { ...env, ...extra } });
  };
  const cached = (cacheDir: string): string[] => readdirSync(cacheDir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => entry.name);

  it("keeps its modules' compiled code in Node's compile cache, in the temporary folder", () => {
    const result = run();
    const cacheDir = join(dir as string, "node-compile-cache");
    expect(result.status).toBe(0);
    expect(result.stderr).toBe("");
    expect(cached(cacheDir).length).toBeGreaterThan(0);
  });

  it("leaves the cache alone with NODE_DISABLE_COMPILE_CACHE=1", () => {
    const result = run({ NODE_DISABLE_COMPILE_CACHE: "1" });
    expect(result.status).toBe(0);
    expect(existsSync(join(dir as string, "node-compile-cache"))).toBe(false);
  });
});

describe("bin/compaction.js writing to a pipe its reader closed", () => {
  it("stops quietly, without Node's EPIPE stack trace (as in `npx compaction --help | head -3`)", async () => {
    // The reader closes its end at once, long before the CLI has loaded and writes its help.
    const child = spawn(process.execPath, [BIN, "--help"], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(stderr).toBe("");
    expect(code).toBe(0);
  });
});

describe("bin/compaction.js and Node's warnings", () => {
  /** Runs the CLI in a new folder holding `files`. */
  function runIn(files: Record<string, string>, args: readonly string[]) {
    dir = mkdtempSync(join(tmpdir(), "compaction-warnings-"));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return spawnSync(process.execPath, [BIN, ...args], { cwd: dir, encoding: "utf8", env: { ...process.env, HOME: dir, NO_COLOR: "1" } });
  }

  it("does not print Node's SQLite ExperimentalWarning on a database session", () => {
    const session = fileURLToPath(new URL("../../examples/sessions/pi-large-session.jsonl", import.meta.url));
    const run = runIn({}, ["session", "copy", session, "sqlite:sessions.sqlite"]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).not.toContain("ExperimentalWarning");
    expect(run.stderr).not.toContain("--trace-warnings");
  });

  it("still prints every other warning, as Node prints it (a plugin's own)", () => {
    const plugin = 'export default () => ({ name: "noisy", apply() { process.emitWarning("noisy plugin says hello"); } });\n';
    const run = runIn({ "package.json": '{ "type": "module" }', "noisy.mjs": plugin, ".compactionrc": "plugins: [./noisy.mjs]\n" }, ["config"]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^\(node:\d+\) Warning: noisy plugin says hello$/m);
  });
});

describe("bin/compaction.js prints its commands as the user ran it", () => {
  /** A project with the CLI installed, as `npm install -D @compaction/cli` leaves it. */
  const project = () => {
    dir = mkdtempSync(join(tmpdir(), "compaction-program-"));
    installCli(dir);
    return dir;
  };
  /** The three ways to run it: npx and `npm exec` (npm sets npm_command=exec), and the bin on the PATH. */
  const WAYS = [
    ["npx compaction", "npx compaction", (cwd: string, args: readonly string[]) => runNpx(cwd, args, { HOME: cwd, NO_COLOR: "1" })],
    ["npm exec compaction --", "npx compaction", (cwd: string, args: readonly string[]) => spawnClean(cwd, "npm", ["exec", "compaction", "--", ...args])],
    ["compaction (on the PATH)", "compaction", (cwd: string, args: readonly string[]) => spawnClean(cwd, "compaction", args, join(cwd, "node_modules", ".bin"))],
  ] as const;

  it.each(WAYS)("run as `%s`, --help shows `%s` in its usage line and every example", (_how, program, run) => {
    const help = run(project(), ["--help"]);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(new RegExp(`^Usage: ${program} \\[options\\] \\[command\\]$`, "m"));
    const examples = help.stdout.slice(help.stdout.indexOf("Examples:\n"), help.stdout.indexOf("\n\nSessions:")).split("\n").slice(1);
    const commands = examples.filter((line) => !line.trimStart().startsWith("("));
    expect(commands.length).toBeGreaterThan(10);
    for (const line of commands) expect(line.startsWith(`  ${program} `), line).toBe(true);
  });

  it.each(WAYS)("run as `%s`, a hint names `%s`: the CLI's own, a library's, and the usage error's", (_how, program, run) => {
    const cwd = project();
    const empty = run(cwd, ["search", " "]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe(`compaction: The query is empty.\nhint: Pass the words to look for: ${program} search "failing test".\n`);
    writeFileSync(join(cwd, "state.json"), "{}");
    // @compaction/transcript's hint, which names the command as `compaction context export`.
    const imported = run(cwd, ["context", "import", "state.json", "--json"]);
    expect(imported.code).toBe(3);
    expect((JSON.parse(imported.stdout) as { error: { hint: string } }).error.hint).toBe(`Pass a file written by \`${program} context export\`. Export the session again with \`${program} context export <file>\`.`);
    expect(run(cwd, ["nope"]).stderr).toContain(`\nhint: run '${program} --help' for usage.\n`);
  });
});

/** `command args` in `cwd` with only PATH (`binDir` first) and HOME set: none of the npm_* variables of the npm that started the tests. */
function spawnClean(cwd: string, command: string, args: readonly string[], binDir?: string) {
  const path = binDir === undefined ? (process.env["PATH"] ?? "") : `${binDir}${delimiter}${process.env["PATH"] ?? ""}`;
  const result = spawnSync(command, args, { cwd, input: "", encoding: "utf8", env: { PATH: path, HOME: cwd, NO_COLOR: "1", npm_config_update_notifier: "false" } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}
