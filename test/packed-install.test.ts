/**
 * The published packages resolve on their own: every public workspace is packed (`npm pack`), a
 * new project outside the repository installs `@compaction/core`, `@compaction/transcript` and
 * `@compaction/cli` from those tarballs (their `@compaction/*` dependencies too, through
 * `overrides`; third-party ones from the npm registry, `--prefer-offline`, install scripts off as
 * pnpm does), and there the two blocks docs/getting-started.md marks as run by this file run as
 * written: the library program and the CLI commands, on a copy of the shipped session. Nothing
 * resolves from this repository's node_modules (the project is in the system's temporary folder,
 * and the check below says where `@compaction/core` resolves from).
 *
 * Slow (an npm install): one file, one install for all of its tests.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeBlocks } from "./support/markdown.js";
import { packPublicWorkspaces, ROOT } from "./support/packed-workspaces.js";

const PAGE = "docs/getting-started.md";
const MARKER = "<!-- run-by: test/packed-install.test.ts -->";
const SESSION = join(ROOT, "examples/sessions/pi-large-session.jsonl");
/** What the project installs, as the page says to. */
const INSTALLED = ["@compaction/core", "@compaction/transcript", "@compaction/cli"];

const blocks = codeBlocks(join(ROOT, PAGE)).filter((block) => block.before === MARKER);
const program = blocks.find((block) => block.lang === "js");
const commands = blocks.find((block) => block.lang === "sh");

let packed: ReturnType<typeof packPublicWorkspaces>;
let project: string;
let cache: string;
/** The environment of every command in the project: no path into this repository, a cache folder of its own. */
let env: NodeJS.ProcessEnv;

beforeAll(() => {
  packed = packPublicWorkspaces();
  project = mkdtempSync(join(tmpdir(), "compaction-user-project-"));
  cache = mkdtempSync(join(tmpdir(), "compaction-user-cache-"));
  const tarballOf = (name: string) => `file:${packed.packages.find((pkg) => pkg.name === name)?.tarball ?? `(${name} not packed)`}`;
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify(
      {
        name: "user-project",
        private: true,
        type: "module",
        dependencies: Object.fromEntries(INSTALLED.map((name) => [name, tarballOf(name)])),
        // The tarballs' own dependencies on each other (`^0.1.0`) are not on the registry yet.
        overrides: Object.fromEntries(packed.packages.map(({ name }) => [name, tarballOf(name)])),
      },
      null,
      2,
    ),
  );
  copyFileSync(SESSION, join(project, "session.jsonl"));
  const path = (process.env["PATH"] ?? "").split(delimiter).filter((dir) => !dir.startsWith(ROOT));
  env = { ...process.env, PATH: path.join(delimiter), XDG_CACHE_HOME: cache, NODE_PATH: "", npm_config_fund: "false", npm_config_audit: "false" };
  for (const key of Object.keys(env)) if (key.startsWith("npm_package_") || key === "INIT_CWD") delete env[key];
  execFileSync("npm", ["install", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: project, env, stdio: ["ignore", "pipe", "pipe"] });
}, 600_000);

afterAll(() => {
  packed?.remove();
  if (project !== undefined) rmSync(project, { recursive: true, force: true });
  if (cache !== undefined) rmSync(cache, { recursive: true, force: true });
});

describe(`the packed packages installed in a new project (${PAGE})`, () => {
  it("finds the page's two blocks: a program and the CLI commands", () => {
    expect(blocks.map((block) => block.lang)).toEqual(["js", "sh"]);
  });

  it("resolve from the project's own node_modules, never from this repository's", () => {
    const resolved = execFileSync(process.execPath, ["--input-type=module", "-e", `for (const name of ${JSON.stringify(INSTALLED)}) console.log(import.meta.resolve(name))`], {
      cwd: project,
      env,
      encoding: "utf8",
    });
    for (const url of resolved.trim().split("\n")) expect(url.startsWith(`file://${join(project, "node_modules")}`), url).toBe(true);
    const installed = JSON.parse(readFileSync(join(project, "node_modules/@compaction/core/package.json"), "utf8")) as { version: string };
    expect(installed.version).toBe(packed.packages.find(({ name }) => name === "@compaction/core")?.version);
  });

  it("run the page's program: the session compacted on the built-in defaults", () => {
    writeFileSync(join(project, "compact-session.mjs"), program?.body ?? "");
    const run = spawnSync(process.execPath, ["compact-session.mjs", "session.jsonl"], { cwd: project, env, encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    const printed = /^compacted: (\d+) messages, (\d+) tokens -> (\d+) messages, (\d+) tokens\n$/.exec(run.stdout);
    expect(printed, run.stdout).not.toBeNull();
    const [messagesBefore, tokensBefore, messagesAfter, tokensAfter] = (printed ?? []).slice(1).map(Number) as [number, number, number, number];
    // The shipped session: 914 messages, 177,657 tokens by the provider's usage (examples/sessions/README.md).
    expect([messagesBefore, tokensBefore]).toEqual([914, 177_657]);
    expect(messagesAfter).toBeLessThan(messagesBefore);
    expect(tokensAfter).toBeLessThan(tokensBefore / 2);
  });

  it("run the page's CLI commands; the first that counts builds the encoder's image in the cache (no install script), and later runs reuse it", () => {
    const lines = (commands?.body ?? "").split("\n").filter((line) => line.trim() !== "" && !line.trim().startsWith("#"));
    expect(lines).toHaveLength(2);
    const imageDir = join(cache, "compaction", "encoders", "v1");
    expect(existsSync(imageDir)).toBe(false);
    const outputs = lines.map((line) => {
      const run = spawnSync("sh", ["-c", line], { cwd: project, env, encoding: "utf8" });
      expect(run.stderr, line).toBe("");
      expect(run.status, line).toBe(0);
      return run.stdout;
    });
    expect(outputs[0]).toMatch(/\[█+░*\] 89% context \(177,657 \/ 200,000 tokens\)/);
    expect(outputs[1]).toMatch(/^Before +177,657 tokens \(914 messages\)$/m);
    expect(outputs[1]).toMatch(/^Dry run: nothing written\.$/m);
    const images = readdirSync(imageDir).filter((name) => name.endsWith(".image"));
    expect(images).toHaveLength(1);
    const image = join(imageDir, images[0] as string);
    // A saved image is replaced by a rename (a new file); one that is reused stays the same file.
    const built = statSync(image).ino;
    const again = spawnSync("sh", ["-c", lines[1] as string], { cwd: project, env, encoding: "utf8" });
    expect(again.stderr).toBe("");
    expect(again.stdout).toBe(outputs[1]);
    expect(statSync(image).ino).toBe(built);
  });
});
