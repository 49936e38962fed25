/**
 * The published packages resolve on their own: every public workspace is packed (`npm pack`), and
 * a new project outside the repository installs what the README's library example names from
 * those tarballs (their `@compaction/*` dependencies too, through `overrides`; third-party ones from
 * the npm registry, `--prefer-offline`, install scripts off as pnpm does). There the README's
 * program runs as written: first with core and transcript alone (core ships no preset: it stops
 * with an error naming the preset's package), then with the README's three packages; then, with
 * `@compaction/cli` installed as docs/getting-started.md says, the page's CLI commands, on a copy
 * of the shipped session. Nothing resolves from this repository's node_modules (the project is in
 * the system's temporary folder, and the check below says where `@compaction/core` resolves from).
 *
 * Slow (npm installs): one file, one project for all of its tests, which run in order. Every
 * child process runs asynchronously (support/run-async.ts), each with a time limit of its own
 * below the test's: a slow npm fails naming npm, and never holds the event loop still long
 * enough for the watchdog to take the test for a stuck one.
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeBlocks } from "./support/markdown.js";
import { packPublicWorkspacesAsync, ROOT, type PackedWorkspaces } from "./support/packed-workspaces.js";
import { type Finished, npm, runAsync } from "./support/run-async.js";

const README = "README.md";
const PAGE = "docs/getting-started.md";
const MARKER = "<!-- run-by: test/packed-install.test.ts -->";
const SESSION = join(ROOT, "examples/sessions/pi-large-session.jsonl");
const CLI = "@compaction/cli";
/**
 * Time limits, each process's below its test's, so what outruns one fails naming itself: an `npm
 * install`, `npm query` and `npm pack` (the packing, before the tests), and a command of the
 * README or the page (node, the CLI: seconds, unless the machine is very busy).
 */
const INSTALL_MS = 480_000;
const PACK_MS = 240_000;
const COMMAND_MS = 90_000;
/** A test that installs and runs one command. */
const INSTALL_TEST_MS = INSTALL_MS + COMMAND_MS + 30_000;

const readmeBlocks = codeBlocks(join(ROOT, README)).filter((block) => block.before === MARKER);
const install = readmeBlocks.find((block) => block.lang === "sh");
const program = readmeBlocks.find((block) => block.lang === "js");
const pageBlocks = codeBlocks(join(ROOT, PAGE)).filter((block) => block.before === MARKER);
const commands = pageBlocks.find((block) => block.lang === "sh");
/** The packages the README's install line names (the registry does not have them yet: they come from the tarballs). */
const installed = /^npm install((?: @compaction\/[a-z-]+)+)\n?$/.exec(install?.body ?? "")?.[1]?.trim().split(" ") ?? [];

let packed: PackedWorkspaces;
let project: string;
let tarballOf: (name: string) => string;
let cache: string;
/** The environment of every command in the project: no path into this repository, a cache folder of its own. */
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  packed = await packPublicWorkspacesAsync(PACK_MS);
  project = mkdtempSync(join(tmpdir(), "compaction-user-project-"));
  cache = mkdtempSync(join(tmpdir(), "compaction-user-cache-"));
  tarballOf = (name: string) => `file:${packed.packages.find((pkg) => pkg.name === name)?.tarball ?? `(${name} not packed)`}`;
  copyFileSync(SESSION, join(project, "session.jsonl"));
  writeFileSync(join(project, "compact-session.mjs"), program?.body ?? "");
  const path = (process.env["PATH"] ?? "").split(delimiter).filter((dir) => !dir.startsWith(ROOT));
  env = { ...process.env, PATH: path.join(delimiter), XDG_CACHE_HOME: cache, NODE_PATH: "", npm_config_fund: "false", npm_config_audit: "false" };
  for (const key of Object.keys(env)) if (key.startsWith("npm_package_") || key === "INIT_CWD") delete env[key];
}, 2 * PACK_MS + 60_000);

/** `npm install` in the project with exactly these packages as its dependencies, from their tarballs. */
async function installOnly(names: readonly string[]): Promise<void> {
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify(
      {
        name: "user-project",
        private: true,
        type: "module",
        dependencies: Object.fromEntries(names.map((name) => [name, tarballOf(name)])),
        // The tarballs' own dependencies on each other (`^0.1.0`) are not on the registry yet.
        overrides: Object.fromEntries(packed.packages.map(({ name }) => [name, tarballOf(name)])),
      },
      null,
      2,
    ),
  );
  await npm(["install", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: project, env, timeoutMs: INSTALL_MS });
}

function runProgram(): Promise<Finished> {
  return runAsync(process.execPath, ["compact-session.mjs", "session.jsonl"], { cwd: project, env, timeoutMs: COMMAND_MS });
}

/** A line of the page's commands, as a shell runs it in the project. */
function runLine(line: string): Promise<Finished> {
  return runAsync("sh", ["-c", line], { cwd: project, env, timeoutMs: COMMAND_MS });
}

afterAll(() => {
  packed?.remove();
  if (project !== undefined) rmSync(project, { recursive: true, force: true });
  if (cache !== undefined) rmSync(cache, { recursive: true, force: true });
});

describe(`the packed packages installed in a new project (${README}, ${PAGE})`, () => {
  it("finds the README's install line and program, and the page's CLI commands", () => {
    expect(readmeBlocks.map((block) => block.lang)).toEqual(["sh", "js"]);
    expect(installed).toEqual(["@compaction/core", "@compaction/transcript", "@compaction/preset-safeguard"]);
    expect(pageBlocks.map((block) => block.lang)).toEqual(["sh"]);
    expect(readFileSync(join(ROOT, PAGE), "utf8")).toContain(`\`npm install ${CLI}\``);
  });

  it("with core and transcript alone, the program stops with an error that names the preset's package", async () => {
    await installOnly(installed.filter((name) => !name.includes("/preset-")));
    expect(existsSync(join(project, "node_modules/@compaction/preset-safeguard"))).toBe(false);
    const run = await runProgram();
    expect(run.status).not.toBe(0);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("Cannot find preset 'safeguard'");
    expect(run.stderr).toContain("'safeguard' is a built-in preset, published as its own package (core ships none): install it where core is installed (npm install @compaction/preset-safeguard)");
    expect(run.stderr).toContain("PLUGIN_NOT_FOUND");
  }, INSTALL_TEST_MS);

  it("with the README's packages, they resolve from the project's own node_modules, never from this repository's", async () => {
    await installOnly(installed);
    const resolved = await runAsync(process.execPath, ["--input-type=module", "-e", `for (const name of ${JSON.stringify(installed)}) console.log(import.meta.resolve(name))`], {
      cwd: project,
      env,
      timeoutMs: COMMAND_MS,
    });
    expect(resolved.status, resolved.stderr).toBe(0);
    for (const url of resolved.stdout.trim().split("\n")) expect(url.startsWith(`file://${join(project, "node_modules")}`), url).toBe(true);
    const core = JSON.parse(readFileSync(join(project, "node_modules/@compaction/core/package.json"), "utf8")) as { version: string };
    expect(core.version).toBe(packed.packages.find(({ name }) => name === "@compaction/core")?.version);
    // The CLI and its other presets are not there: the program below runs on the three alone.
    expect(existsSync(join(project, "node_modules/@compaction/cli"))).toBe(false);
    expect(existsSync(join(project, "node_modules/@compaction/preset-rolling"))).toBe(false);
  }, INSTALL_TEST_MS);

  it("run the README's program: the session compacted on the built-in defaults", async () => {
    const run = await runProgram();
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const printed = /^compacted: (\d+) messages, (\d+) tokens -> (\d+) messages, (\d+) tokens\n$/.exec(run.stdout);
    expect(printed, run.stdout).not.toBeNull();
    const [messagesBefore, tokensBefore, messagesAfter, tokensAfter] = (printed ?? []).slice(1).map(Number) as [number, number, number, number];
    // The shipped session: 914 messages, 177,657 tokens by the provider's usage (examples/sessions/README.md).
    expect([messagesBefore, tokensBefore]).toEqual([914, 177_657]);
    expect(messagesAfter).toBeLessThan(messagesBefore);
    expect(tokensAfter).toBeLessThan(tokensBefore / 2);
  }, COMMAND_MS + 30_000);

  it("with the CLI installed too, run the page's CLI commands; the first that counts builds the encoder's image in the cache (no install script), and later runs reuse it", async () => {
    await installOnly([...installed, CLI]);
    const lines = (commands?.body ?? "").split("\n").filter((line) => line.trim() !== "" && !line.trim().startsWith("#"));
    expect(lines).toHaveLength(2);
    const imageDir = join(cache, "compaction", "encoders", "v1");
    expect(existsSync(imageDir)).toBe(false);
    const outputs: string[] = [];
    for (const line of lines) {
      const run = await runLine(line);
      expect(run.stderr, line).toBe("");
      expect(run.status, line).toBe(0);
      outputs.push(run.stdout);
    }
    expect(outputs[0]).toMatch(/\[█+░*\] 89% context \(177,657 \/ 200,000 tokens\)/);
    expect(outputs[1]).toMatch(/^Before +177,657 tokens \(914 messages\)$/m);
    expect(outputs[1]).toMatch(/^Dry run: nothing written\.$/m);
    const images = readdirSync(imageDir).filter((name) => name.endsWith(".image"));
    expect(images).toHaveLength(1);
    const image = join(imageDir, images[0] as string);
    // A saved image is replaced by a rename (a new file); one that is reused stays the same file.
    const built = statSync(image).ino;
    const again = await runLine(lines[1] as string);
    expect(again.stderr).toBe("");
    expect(again.stdout).toBe(outputs[1]);
    expect(statSync(image).ino).toBe(built);
  }, INSTALL_MS + 3 * COMMAND_MS + 30_000);
});
