/**
 * src/pi-types.ts declares the part of pi's extension API the extension uses, so the package builds
 * without pi; this compiles type-checks/pi-types-match.ts, which checks those declarations against
 * pi's own types (0.87 and 0.73), whenever pi is installed (scripts/host-install.mjs). Without pi it
 * skips naming the command; under CI (CI=true), where pi is installed, a missing pi fails.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));
const NEEDED = [
  ["pi-0.87", "@earendil-works/pi-coding-agent"],
  ["pi-0.73", "@mariozechner/pi-coding-agent"],
] as const;
const missing = NEEDED.filter(([, name]) => !existsSync(`${PACKAGE_DIR}node_modules/${name}/package.json`));
const SKIP =
  missing.length === 0
    ? undefined
    : `${missing.map(([, name]) => name).join(" and ")} not installed: not part of npm ci; run \`node scripts/host-install.mjs ${missing.map(([host]) => host).join(" ")}\` at the repository root (npm test does)`;
if (SKIP !== undefined && process.env.CI !== undefined && !["", "0", "false"].includes(process.env.CI)) {
  throw new Error(`CI must check src/pi-types.ts against pi's types, but ${SKIP}`);
}
if (SKIP !== undefined) console.warn(`pi-types.test: skipped: ${SKIP}`);

describe.skipIf(SKIP !== undefined)("src/pi-types.ts against pi's own types", () => {
  it("type-checks/pi-types-match.ts compiles: pi's values fit the local types and the extension fits pi's ExtensionFactory", () => {
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    const run = spawnSync(process.execPath, [tsc, "-p", "type-checks/tsconfig.json"], { cwd: PACKAGE_DIR, encoding: "utf8" });
    expect(run.stdout + run.stderr).toBe("");
    expect(run.status).toBe(0);
  }, 120_000);
});
