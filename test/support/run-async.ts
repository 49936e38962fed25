/**
 * Child processes for the slow tests (npm installs), run without blocking the event loop: a
 * `spawnSync` of `npm install` stands still for as long as npm takes, and on a busy machine that
 * was long enough for scripts/vitest-watchdog.mjs to kill the test as stuck. Each run has a time
 * limit of its own, below the test's, so a slow or hung npm fails with an error that names the
 * command and what it printed, not with vitest's timeout or the watchdog's kill.
 */
import { spawn } from "node:child_process";

export interface Finished {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  readonly cwd: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Killed (with everything it started) after this long; the promise then rejects naming the command. */
  readonly timeoutMs: number;
}

/** The last `chars` of a command's output, for an error message. */
function tail(text: string, chars = 4_000): string {
  return text.length <= chars ? text : `…${text.slice(-chars)}`;
}

/**
 * Runs `command args` and resolves with how it ended, whatever its exit code; rejects only when
 * it cannot start or outruns `timeoutMs`. It runs in a process group of its own, so a timeout
 * also ends what it started (npm's own children).
 */
export function runAsync(command: string, args: readonly string[], options: RunOptions): Promise<Finished> {
  const shown = [command, ...args].join(" ");
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"], detached: process.platform !== "win32" });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (child.pid !== undefined && process.platform !== "win32") process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }, options.timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`${shown} (in ${options.cwd}) did not start: ${error.message}`, { cause: error }));
    });
    child.on("close", (status, signal) => {
      clearTimeout(timer);
      if (timedOut) {
        const limit = (options.timeoutMs / 1000).toFixed(options.timeoutMs < 10_000 ? 1 : 0);
        reject(new Error(`${shown} (in ${options.cwd}) did not finish within ${limit} s and was killed; its output so far:\n${tail(stderr || stdout)}`));
        return;
      }
      resolve({ status, signal, stdout, stderr });
    });
  });
}

/** `npm args`: its stdout; rejects, naming npm, the arguments and its output, when it fails or outruns `timeoutMs`. */
export async function npm(args: readonly string[], options: RunOptions): Promise<string> {
  const run = await runAsync("npm", args, options);
  if (run.status !== 0) {
    throw new Error(`npm ${args.join(" ")} (in ${options.cwd}) failed (${run.signal === null ? `exit ${run.status}` : `killed by ${run.signal}`}):\n${tail(run.stderr || run.stdout)}`);
  }
  return run.stdout;
}
