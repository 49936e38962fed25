/** support/run-async.ts, which the npm installs of packed-install.test.ts run on: a time limit that names the command, and ends all it started. */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { npm, runAsync } from "./support/run-async.js";

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** A folder whose `npm` runs `body` (a shell script), first on PATH. */
function fakeNpm(body: string): NodeJS.ProcessEnv {
  dir = mkdtempSync(join(tmpdir(), "compaction-fake-npm-"));
  writeFileSync(join(dir, "npm"), `#!/bin/sh\n${body}\n`);
  chmodSync(join(dir, "npm"), 0o755);
  return { ...process.env, PATH: `${dir}${delimiter}${process.env["PATH"] ?? ""}` };
}

describe.skipIf(process.platform === "win32")("runAsync and npm", () => {
  it("stops an npm that outruns its limit, with what it started, and the error names npm, its arguments and its output", async () => {
    const env = fakeNpm('echo "fetching tarballs" >&2\nsleep 60 & wait');
    const started = Date.now();
    const error = await npm(["install", "--prefer-offline"], { cwd: tmpdir(), env, timeoutMs: 500 }).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    expect(error?.message).toMatch(/^npm install --prefer-offline \(in .+\) did not finish within 0\.5 s and was killed; its output so far:\nfetching tarballs\n$/);
    // Its child (the sleep) was killed too: else the pipes would stay open for a minute.
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("rejects an npm that fails, naming npm, its exit code and its output", async () => {
    const env = fakeNpm('echo "npm error code E404" >&2\nexit 1');
    await expect(npm(["install"], { cwd: tmpdir(), env, timeoutMs: 60_000 })).rejects.toThrow(/^npm install \(in .+\) failed \(exit 1\):\nnpm error code E404\n$/);
  });

  it("resolves with the status and output of a command that ends, whatever its exit code", async () => {
    const run = await runAsync(process.execPath, ["-e", 'process.stdout.write("out"); process.stderr.write("err"); process.exit(3)'], { cwd: tmpdir(), timeoutMs: 60_000 });
    expect(run).toEqual({ status: 3, signal: null, stdout: "out", stderr: "err" });
  });
});
