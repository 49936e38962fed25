/**
 * An old Node is stopped before `npm ci` installs anything (issue 43: on Node 20 it printed
 * EBADENGINE warnings and went on): `.nvmrc` names the major the root's `engines` starts at, the
 * engines exclude Node 20, and the repository's `.npmrc` turns on `engine-strict`, so npm refuses
 * a Node the engines exclude instead of warning. (npm checks the Node it runs on; a project whose
 * engines exclude this one stands in for Node 20 against the real ones.)
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT } from "./support/packed-workspaces.js";
import { runAsync } from "./support/run-async.js";

/** The part of semver (a root devDependency, which ships no types) used here. */
const semver = createRequire(import.meta.url)("semver") as {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { readonly major: number } | null;
  major(version: string): number;
};

const root = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } };

let project: string | undefined;
afterEach(() => {
  if (project !== undefined) rmSync(project, { recursive: true, force: true });
});

/** `npm install --dry-run` in a project of no dependencies with these engines, with the repository's `.npmrc` or none. */
async function installWith(engines: { node: string }, npmrc: boolean) {
  project = mkdtempSync(join(tmpdir(), "compaction-engines-"));
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "engines-check", version: "0.0.0", private: true, engines }));
  if (npmrc) copyFileSync(join(ROOT, ".npmrc"), join(project, ".npmrc"));
  // Run under npm (`npm test`, `npx vitest`), the environment carries the repository's settings (npm_config_engine_strict): not here.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_config_engine_strict$/i.test(key)));
  return runAsync("npm", ["install", "--dry-run", "--offline", "--no-audit", "--no-fund"], { cwd: project, env, timeoutMs: 120_000 });
}

describe("the Node version a clone needs", () => {
  it(".nvmrc names the major the root's engines start at; they exclude Node 20 and accept CI's majors", () => {
    const major = readFileSync(join(ROOT, ".nvmrc"), "utf8").trim();
    expect(major).toMatch(/^\d+$/);
    expect(semver.minVersion(root.engines.node)?.major).toBe(Number(major));
    expect(semver.satisfies("20.99.0", root.engines.node)).toBe(false);
    const majors = /for major in ([\d ]+); do/.exec(readFileSync(join(ROOT, ".ci/run"), "utf8"))?.[1]?.trim().split(" ") ?? [];
    expect(majors).toContain(major);
    for (const each of majors) expect(semver.satisfies(`${each}.99.0`, root.engines.node), each).toBe(true);
  });

  it("with the repository's .npmrc, npm refuses a Node the engines exclude, before it installs anything; without it, it only warns", async () => {
    expect(readFileSync(join(ROOT, ".npmrc"), "utf8")).toMatch(/^engine-strict=true$/m);
    const excluded = { node: `>=${semver.major(process.version) + 1}` };
    const strict = await installWith(excluded, true);
    expect(strict.status).not.toBe(0);
    expect(strict.stderr).toContain("npm error code EBADENGINE");
    expect(strict.stderr).toContain(`Required: {"node":"${excluded.node}"}`);
    const lax = await installWith(excluded, false);
    expect(lax.status, lax.stderr).toBe(0);
    expect(lax.stderr).toContain("npm warn EBADENGINE");
  }, 150_000);

  it("and installs on the Node this runs on under the root's engines", async () => {
    const run = await installWith(root.engines, true);
    expect(run.stderr).not.toContain("EBADENGINE");
    expect(run.status, run.stderr).toBe(0);
  }, 150_000);
});
