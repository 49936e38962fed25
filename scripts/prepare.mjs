#!/usr/bin/env node
// `prepare` (npm runs it after `npm ci` / `npm install` in the repository): builds every package,
// so `npx compaction --help` works right after `npm ci`. turbo caches the build, so a second
// install costs a cache check. Then it saves the image of tiktoken's built encoder in the CLI's
// cache folder (scripts/prepare-encoder.mjs), so the first `compaction` run here starts it from
// there; the published CLI has no install script and saves the image on its first run. Without devDependencies
// (npm ci --omit=dev) there is no turbo and nothing to build with: say so instead of failing the
// install.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
let turbo;
try {
  turbo = require.resolve("turbo/bin/turbo");
} catch {
  process.stderr.write("prepare: turbo is not installed (devDependencies left out?): not building; run 'npm run build' later.\n");
  process.exit(0);
}
const result = spawnSync(process.execPath, [turbo, "run", "build", "--output-logs=errors-only"], {
  stdio: "inherit",
  env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1" },
});
if (result.status !== 0) process.exit(result.status ?? 1);
// Never fails the install (it exits 0 whatever happens, with a note when something went wrong).
spawnSync(process.execPath, [fileURLToPath(new URL("prepare-encoder.mjs", import.meta.url))], { stdio: "inherit" });
