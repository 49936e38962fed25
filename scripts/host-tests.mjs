// The test files of a package that need a real host (scripts/hosts/<name>/), left out of its
// vitest run when that host is not installed: each package's vitest.config.ts lists them here.
// The host's packages are not part of `npm ci` (scripts/host-install.mjs installs them on demand,
// `npm test` does first), so a file importing them would fail to load. Without the host the files
// are excluded with a warning that names them and the command that installs it; under CI
// (CI=true), where the host tests must run, a missing host is an error instead.
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * Globs to add to vitest's `exclude` for the hosts that are missing.
 * @param {string} packageDir the package's folder (its vitest.config.ts's directory)
 * @param {Record<string, string[]>} needs host name -> the package's test files (globs) that need it
 * @returns {string[]}
 */
export function missingHostExcludes(packageDir, needs) {
  const consumer = relative(ROOT, packageDir).split("\\").join("/");
  const ci = process.env.CI !== undefined && !["", "0", "false"].includes(process.env.CI);
  const excludes = [];
  for (const [host, files] of Object.entries(needs)) {
    const manifest = JSON.parse(readFileSync(join(ROOT, "scripts", "hosts", host, "package.json"), "utf8"));
    const names = manifest.compaction.links[consumer];
    if (names === undefined) throw new Error(`scripts/hosts/${host}/package.json links nothing into ${consumer}; add it to compaction.links`);
    const missing = names.filter((name) => !existsSync(join(packageDir, "node_modules", name, "package.json")));
    if (missing.length === 0) continue;
    const main = Object.keys(manifest.dependencies)[0];
    const message = `${main}@${manifest.dependencies[main]} (host ${host}) is not installed in ${consumer} (no ${missing.join(", ")}): it is not part of npm ci; run \`node scripts/host-install.mjs ${host}\` at the repository root (npm test does)`;
    if (ci) throw new Error(`CI must run the tests that need ${host}, but ${message}`);
    console.warn(`SKIPPED ${files.join(", ")}: ${message}`);
    excludes.push(...files);
  }
  return excludes;
}
