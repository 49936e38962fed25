#!/usr/bin/env node
// `npm test`: every package's typecheck and tests through turbo, then one closing line for the
// whole suite (scripts/test-summary.mjs). The running Node's version goes into turbo's hash
// (COMPACTION_NODE_VERSION, an env of the test and typecheck tasks in turbo.json), so a run on Node 24 never replays results
// cached by a run on Node 22.
// First it installs the real hosts the host tests run against (scripts/host-install.mjs: OpenClaw
// on a Node it supports, the OpenAI Agents SDK), which `npm ci` leaves out; which hosts are
// installed goes into turbo's hash too (COMPACTION_HOSTS), so a run that skipped a host's tests is
// never replayed once the host is there. Under CI (CI=true) a failed host install fails the run;
// elsewhere the run goes on and those tests skip, naming the command that installs them.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const hostInstall = fileURLToPath(new URL("host-install.mjs", import.meta.url));
const ci = process.env.CI !== undefined && !["", "0", "false"].includes(process.env.CI);
console.log(`Testing on Node ${process.version}`);
const hosts = spawnSync(process.execPath, [hostInstall], { cwd: root, stdio: "inherit" });
if (hosts.status !== 0) {
  if (ci) {
    console.error("npm test: installing the real hosts failed (above); CI must run their tests.");
    process.exit(hosts.status ?? 1);
  }
  console.error("npm test: installing the real hosts failed (above); their tests will skip. Retry with: node scripts/host-install.mjs");
}
const installed = spawnSync(process.execPath, [hostInstall, "--list"], { cwd: root, encoding: "utf8" }).stdout ?? "";
const env = { ...process.env, COMPACTION_NODE_VERSION: process.version, COMPACTION_HOSTS: installed.trim(), TURBO_TELEMETRY_DISABLED: "1" };
const turbo = spawnSync("npx", ["turbo", "run", "typecheck", "test", "--concurrency=2", ...process.argv.slice(2)], {
  cwd: root,
  env,
  stdio: "inherit",
});
const summary = spawnSync(process.execPath, [fileURLToPath(new URL("test-summary.mjs", import.meta.url))], { cwd: root, stdio: "inherit" });
process.exit(turbo.status !== 0 ? (turbo.status ?? 1) : (summary.status ?? 1));
