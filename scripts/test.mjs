#!/usr/bin/env node
// `npm test`: every package's typecheck and tests through turbo, then one closing line for the
// whole suite (scripts/test-summary.mjs). The running Node's version goes into turbo's hash
// (COMPACTION_NODE_VERSION, an env of the test and typecheck tasks in turbo.json), so a run on Node 24 never replays results
// cached by a run on Node 22.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const env = { ...process.env, COMPACTION_NODE_VERSION: process.version, TURBO_TELEMETRY_DISABLED: "1" };
console.log(`Testing on Node ${process.version}`);
const turbo = spawnSync("npx", ["turbo", "run", "typecheck", "test", "--concurrency=2", ...process.argv.slice(2)], {
  cwd: root,
  env,
  stdio: "inherit",
});
const summary = spawnSync(process.execPath, [fileURLToPath(new URL("test-summary.mjs", import.meta.url))], { cwd: root, stdio: "inherit" });
process.exit(turbo.status !== 0 ? (turbo.status ?? 1) : (summary.status ?? 1));
