/**
 * A test stuck in a synchronous loop cannot hang a run (scripts/vitest-watchdog.mjs, a setup file
 * of every package's vitest config through vitest.shared.ts): vitest's own timeout never fires in
 * such a test, so the watchdog kills its process once the event loop has not turned for
 * COMPACTION_WATCHDOG_SECONDS, naming the test, and the run fails instead of waiting for CI's limit.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./support/packed-workspaces.js";

const FIXTURE = join(ROOT, "test/support/watchdog-fixture");

describe("the vitest watchdog", () => {
  it("kills a test stuck in a synchronous loop, names it, fails the run, and the other files still run", () => {
    const started = Date.now();
    const run = spawnSync(process.execPath, [join(ROOT, "node_modules/vitest/vitest.mjs"), "run", "--root", ".", "--config", "./vitest.config.ts"], {
      cwd: FIXTURE,
      env: { ...process.env, COMPACTION_WATCHDOG_SECONDS: "3", CI: "true", NO_COLOR: "1", FORCE_COLOR: "0" },
      encoding: "utf8",
      timeout: 120_000,
    });
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.signal, output).toBeNull();
    expect(run.status, output).not.toBe(0);
    expect(output).toMatch(/vitest-watchdog: the event loop has been blocked for \d+ s \(COMPACTION_WATCHDOG_SECONDS=3\) in: \S*hangs\.fixture\.ts > never yields to its event loop/);
    // The other file ran and passed; the killed one is reported as an error of the run.
    expect(output).toMatch(/✓ passes\.fixture\.ts \(1 test\)/);
    expect(output).toContain("Worker exited unexpectedly");
    // Killed after seconds, not left to run: a hang without the watchdog would end only at spawnSync's timeout.
    expect(Date.now() - started).toBeLessThan(90_000);
  }, 150_000);
});
