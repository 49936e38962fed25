// The test files of a package that need a real host (scripts/hosts/<name>/), left out of its
// vitest run when that host is not installed: each package's vitest.config.ts lists them here.
// The host's packages are not part of `npm ci` (scripts/host-install.mjs installs them on demand,
// `npm test` does first), so a file importing them would fail to load. Without the host the files
// are excluded with a warning that names them and the command that installs it; under CI
// (CI=true), where the host tests must run, a missing host is an error instead.
// scripts/typecheck.mjs does the same for a package's typecheck.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import semver from "semver";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Whether the environment is CI's (CI set to anything but "", "0" or "false"), where every host's tests must run. */
export function isCi(env = process.env) {
  return env.CI !== undefined && !["", "0", "false"].includes(env.CI);
}

/**
 * Whether a Node version satisfies a range of the form engines fields use (">=24.16.0 <25 || >=26.1.0");
 * no range is any Node.
 * @param {string | undefined} range
 * @param {string} [version] default: the running Node's
 */
export function nodeSatisfies(range, version = process.versions.node) {
  return !range || semver.satisfies(version, range);
}

/** Whether `name` is installed in the package's own node_modules (where host-install.mjs links it). */
function linkedInto(packageDir, name) {
  return existsSync(join(packageDir, "node_modules", name, "package.json"));
}

/**
 * The hosts of scripts/hosts that link packages into this package and are missing there.
 * @param {string} packageDir the package's folder
 * @param {{ hosts?: string[], installed?: (packageDir: string, name: string) => boolean }} [options]
 *   which hosts to look at (default: every host that links into the package) and how to tell an installed package
 * @returns {{ host: string, missing: string[], message: string }[]}
 */
export function missingHosts(packageDir, options = {}) {
  const consumer = relative(ROOT, packageDir).split("\\").join("/");
  const installed = options.installed ?? linkedInto;
  const names = options.hosts ?? hostNames();
  const result = [];
  for (const host of names) {
    const manifest = JSON.parse(readFileSync(join(ROOT, "scripts", "hosts", host, "package.json"), "utf8"));
    const linked = manifest.compaction.links[consumer];
    if (linked === undefined) {
      if (options.hosts === undefined) continue;
      throw new Error(`scripts/hosts/${host}/package.json links nothing into ${consumer}; add it to compaction.links`);
    }
    const missing = linked.filter((name) => !installed(packageDir, name));
    if (missing.length === 0) continue;
    const main = Object.keys(manifest.dependencies)[0];
    result.push({
      host,
      missing,
      message: `${main}@${manifest.dependencies[main]} (host ${host}) is not installed in ${consumer} (no ${missing.join(", ")}): it is not part of npm ci; run \`node scripts/host-install.mjs ${host}\` at the repository root (npm test does)`,
    });
  }
  return result;
}

/**
 * Globs to add to vitest's `exclude` for the hosts that are missing.
 * @param {string} packageDir the package's folder (its vitest.config.ts's directory)
 * @param {Record<string, string[]>} needs host name -> the package's test files (globs) that need it
 * @param {{ env?: NodeJS.ProcessEnv, installed?: (packageDir: string, name: string) => boolean, warn?: (line: string) => void }} [options]
 * @returns {string[]}
 */
export function missingHostExcludes(packageDir, needs, options = {}) {
  const warn = options.warn ?? ((line) => console.warn(line));
  const excludes = [];
  for (const { host, message } of missingHosts(packageDir, { hosts: Object.keys(needs), installed: options.installed })) {
    if (isCi(options.env)) throw new Error(`CI must run the tests that need ${host}, but ${message}`);
    const files = needs[host] ?? [];
    warn(`SKIPPED ${files.join(", ")}: ${message}`);
    excludes.push(...files);
  }
  return excludes;
}

/** Every host under scripts/hosts (a folder each). */
function hostNames() {
  return readdirSync(join(ROOT, "scripts", "hosts"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
}
