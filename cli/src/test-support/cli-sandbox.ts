/**
 * Test support: runs the BUILT `compaction` binary as a user would, in a temporary project with
 * its own HOME and sessions folder, on a version 3 copy of a real pi session.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Readable } from "node:stream";
import { sessionDirForCwd, upgradeSession } from "@compaction/transcript";
import { FIXTURES_DIR } from "@compaction/fixtures";
import { main } from "../index.js";
import type { CliIo } from "../io.js";

const BIN = fileURLToPath(new URL("../../bin/compaction.js", import.meta.url));
const CLI_PACKAGE = fileURLToPath(new URL("../../", import.meta.url));
/** The real pi session (version 1) the sandboxes start from. Read-only. */
export const REAL_SESSION = join(FIXTURES_DIR, "pi-large-session.jsonl");
/** A real Claude Code transcript (read-only imports). */
export const CLAUDE_TRANSCRIPT = join(FIXTURES_DIR, "claude-code-log-37f83ec9.jsonl");
/** Its session id. */
export const REAL_SESSION_ID = "d703a1a9-1b7b-4fb1-b512-c9738b1fe617";

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Sandbox {
  readonly root: string;
  /** The working directory the binary runs in. */
  readonly project: string;
  readonly sessionsDir: string;
  /** The session file (the project's latest session). */
  readonly sessionPath: string;
  /** Runs `node bin/compaction.js ...args` in the project; stdin is empty and not a terminal. */
  run(args: readonly string[], env?: Readonly<Record<string, string>>): CliRun;
  /** Runs `npx compaction ...args` in the project, the CLI installed in it (`installCli`), as `run` does the binary. */
  npx(args: readonly string[], env?: Readonly<Record<string, string>>): CliRun;
  /** Runs the CLI's `main` in this process, as `run` does the binary (NO_COLOR set, stdin empty). */
  runMain(args: readonly string[], env?: Readonly<Record<string, string>>): Promise<CliRun>;
  bytes(): Buffer;
  writeConfig(name: string, text: string): void;
  remove(): void;
}

/** A new sandbox holding a version 3 copy of the real session in the project's session folder. */
export async function createSandbox(options: { readonly version1?: boolean } = {}): Promise<Sandbox> {
  const root = mkdtempSync(join(tmpdir(), "compaction-cli-"));
  const project = join(root, "project");
  const sessionsDir = join(root, "sessions");
  mkdirSync(project, { recursive: true });
  mkdirSync(join(root, "home"), { recursive: true });
  const sessionPath = join(sessionDirForCwd(project, { sessionsDir }), `2025-11-20T23-33-50-805Z_${REAL_SESSION_ID}.jsonl`);
  mkdirSync(dirname(sessionPath), { recursive: true });
  copyFileSync(REAL_SESSION, sessionPath);
  // Version 1 files cannot be appended to: upgrade the copy as pi does when it opens one.
  if (options.version1 !== true) {
    await upgradeSession(sessionPath);
    rmSync(`${sessionPath}.bak`);
  }
  return {
    root,
    project,
    sessionsDir,
    sessionPath,
    run(args, env = {}) {
      const result = spawnSync(process.execPath, [BIN, ...args], {
        cwd: project,
        input: "",
        encoding: "utf8",
        env: { PATH: process.env["PATH"] ?? "", HOME: join(root, "home"), COMPACTION_SESSIONS_DIR: sessionsDir, ...env },
      });
      return { code: result.status, stdout: result.stdout, stderr: result.stderr };
    },
    npx(args, env = {}) {
      installCli(project);
      return runNpx(project, args, { HOME: join(root, "home"), COMPACTION_SESSIONS_DIR: sessionsDir, ...env });
    },
    async runMain(args, env = {}) {
      let stdout = "";
      let stderr = "";
      const io: CliIo = {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stderr += text) },
        stdin: Readable.from([]),
        env: { NO_COLOR: "1", HOME: join(root, "home"), COMPACTION_SESSIONS_DIR: sessionsDir, ...env },
        cwd: project,
      };
      const code = await main(args, io);
      return { code, stdout, stderr };
    },
    bytes: () => readFileSync(sessionPath),
    writeConfig: (name, text) => writeFileSync(join(project, name), text),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

/**
 * Makes `dir` a project with @compaction/cli installed as a dev dependency, as `npm install -D
 * @compaction/cli` leaves it: the package in node_modules (a link to this one) and its bin in
 * node_modules/.bin, which is what `npx compaction` runs. Once per folder.
 */
export function installCli(dir: string): void {
  const bin = join(dir, "node_modules", ".bin", "compaction");
  if (existsSync(bin)) return;
  const version = (JSON.parse(readFileSync(join(CLI_PACKAGE, "package.json"), "utf8")) as { version: string }).version;
  if (!existsSync(join(dir, "package.json"))) {
    writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "app", private: true, devDependencies: { "@compaction/cli": `^${version}` } }, null, 2)}\n`);
  }
  mkdirSync(join(dir, "node_modules", "@compaction"), { recursive: true });
  mkdirSync(dirname(bin), { recursive: true });
  symlinkSync(CLI_PACKAGE, join(dir, "node_modules", "@compaction", "cli"), "dir");
  symlinkSync(join("..", "@compaction", "cli", "bin", "compaction.js"), bin);
}

/**
 * Runs `npx compaction ...args` in `dir` (a project `installCli` set up) with npm's own npx on the
 * PATH, in an environment of only PATH and `env`: none of the npm_* variables of the npm that
 * started the tests. npm's update check is off (it would ask the registry). stdin is empty.
 */
export function runNpx(dir: string, args: readonly string[], env: Readonly<Record<string, string>>): CliRun {
  const result = spawnSync("npx", ["compaction", ...args], {
    cwd: dir,
    input: "",
    encoding: "utf8",
    env: { PATH: process.env["PATH"] ?? "", npm_config_update_notifier: "false", ...env },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Installs the @compaction/pi extension where pi discovers it for the sandbox's user
 * (`~/.pi/agent/extensions/compaction/index.ts`), so the agent has `memory_search`.
 * Returns the file's path.
 */
export function giveAgentRecall(sandbox: Sandbox): string {
  const dir = join(sandbox.root, "home", ".pi", "agent", "extensions", "compaction");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "index.ts");
  writeFileSync(file, 'export { default } from "@compaction/pi";\n');
  return file;
}
