#!/usr/bin/env node
// `npm run release`: publishes the packages Changesets has versioned (docs/releasing.md), after
// the checks a release must pass, in this order:
// 1. No published package.json (nor the root's) still has the placeholder repository URL: the
//    repository has no public home yet, and a package on the registry would point users at a
//    URL that is not this project's. Replace it everywhere first (the message says where).
// 2. Every package built (turbo), then the release tests: publint and "are the types wrong" on
//    every packed package (test/packed-packages.test.ts) and the packed tarballs installed in a
//    clean project and run there (test/packed-install.test.ts).
// 3. `changeset publish` (each package whose version is not on the registry yet, then git tags).
// `--check` runs step 1 alone; `--root <dir>` checks another checkout (for the tests).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository URL every package.json carries until the project has a public home. */
export const PLACEHOLDER_REPOSITORY_URL = "git+https://github.com/compaction/compaction.git";

const args = process.argv.slice(2);
const rootArg = args.indexOf("--root");
const root = rootArg >= 0 ? args[rootArg + 1] : fileURLToPath(new URL("..", import.meta.url));
if (root === undefined) fail("--root needs a folder");

const readJson = (file) => JSON.parse(readFileSync(file, "utf8"));

/** The root package.json and every public workspace package.json (the root's `workspaces`, `dir/*` globs expanded). */
function publishedManifests() {
  const rootManifest = join(root, "package.json");
  const patterns = readJson(rootManifest).workspaces ?? [];
  const dirs = patterns.flatMap((pattern) => {
    if (!pattern.endsWith("/*")) return [join(root, pattern)];
    const parent = join(root, pattern.slice(0, -2));
    return existsSync(parent) ? readdirSync(parent, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => join(parent, entry.name)) : [];
  });
  const manifests = dirs.map((dir) => join(dir, "package.json")).filter((file) => existsSync(file) && readJson(file).private !== true);
  return [rootManifest, ...manifests];
}

function fail(message) {
  process.stderr.write(`release: ${message}\n`);
  process.exit(1);
}

const placeholders = publishedManifests().filter((file) => {
  const { repository, homepage, bugs } = readJson(file);
  const urls = [typeof repository === "string" ? repository : repository?.url, homepage, typeof bugs === "string" ? bugs : bugs?.url];
  return urls.some((url) => typeof url === "string" && url.includes(PLACEHOLDER_REPOSITORY_URL.replace(/^git\+/, "").replace(/\.git$/, "")));
});
if (placeholders.length > 0) {
  fail(
    `refusing to publish: ${placeholders.length} package.json files still have the placeholder repository URL ${PLACEHOLDER_REPOSITORY_URL}:\n` +
      placeholders.map((file) => `  ${relative(root, file) || "package.json"}\n`).join("") +
      "Replace it with the project's real repository in each of them (the same URL, each package keeping its `directory`), then run npm run release again (docs/releasing.md).",
  );
}
if (args.includes("--check")) {
  process.stdout.write("release: the repository URL is set (no placeholder left).\n");
  process.exit(0);
}

function run(command, commandArgs, cwd = root) {
  process.stdout.write(`release: ${command} ${commandArgs.join(" ")}\n`);
  const result = spawnSync(command, commandArgs, { cwd, stdio: "inherit", env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1" } });
  if (result.status !== 0) fail(`\`${command} ${commandArgs.join(" ")}\` failed (exit ${result.status ?? result.signal}): nothing was published.`);
}

run("npx", ["turbo", "run", "build", "--output-logs=errors-only"]);
run("npx", ["vitest", "run", "packed-packages.test.ts", "packed-install.test.ts"], join(root, "test"));
run("npx", ["changeset", "publish"]);
