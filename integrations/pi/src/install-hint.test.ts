import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CompactionError, createCompactor, ErrorCodes } from "@compaction/core";
import { afterAll, describe, expect, it } from "vitest";
import { extensionInstallRoot, installBesideHint } from "./install-hint.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The error createCompactor throws for a .compactionrc naming `plugin`, which is not installed. */
async function notFoundFor(plugin: string): Promise<unknown> {
  const dir = mkdtempSync(join(tmpdir(), "compaction-pi-hint-"));
  dirs.push(dir);
  writeFileSync(join(dir, ".compactionrc"), `plugins:\n  - ${JSON.stringify(plugin)}\n`);
  return createCompactor({ cwd: dir, adapter: "pi" }).then(
    () => expect.fail(`${plugin} resolved`),
    (error: unknown) => error,
  );
}

describe("installBesideHint", () => {
  it("names the package and the folder pi installed the extension in, for a summarizer that is not installed", async () => {
    const error = await notFoundFor("summarizer-gemini");
    expect(error).toMatchObject({ code: ErrorCodes.PLUGIN_NOT_FOUND });
    expect(installBesideHint(error, "/home/me/.pi/agent/npm")).toBe(
      "Plugins and presets named in .compactionrc must be installed next to @compaction/pi, which pi loads from its own folder; install @compaction/plugin-summarizer-gemini beside the extension: npm install --prefix /home/me/.pi/agent/npm @compaction/plugin-summarizer-gemini, then /reload.",
    );
  });

  it("keeps core's suggestion for a misspelt built-in name first", async () => {
    const hint = installBesideHint(await notFoundFor("rollng"), "/opt/pi");
    expect(hint).toMatch(/^Did you mean 'rolling'\? Otherwise: Plugins and presets named in \.compactionrc must be installed next to @compaction\/pi/);
  });

  it("keeps a full package name as written", async () => {
    const error = await notFoundFor("@acme/compaction-summarizer");
    expect(installBesideHint(error, "/opt/pi")).toContain("npm install --prefix /opt/pi @acme/compaction-summarizer,");
  });

  it("has nothing to add for a path (the user's own file) or for other errors", async () => {
    expect(installBesideHint(await notFoundFor("./missing-plugin.mjs"), "/opt/pi")).toBeUndefined();
    expect(installBesideHint(new CompactionError(ErrorCodes.CONFIG_INVALID, "bad"), "/opt/pi")).toBeUndefined();
    expect(installBesideHint(new Error("plain"), "/opt/pi")).toBeUndefined();
  });
});

describe("extensionInstallRoot", () => {
  it("is the folder holding the node_modules that holds @compaction/core", () => {
    expect(extensionInstallRoot("/home/me/.pi/agent/npm/node_modules/@compaction/core/dist/index.js")).toBe("/home/me/.pi/agent/npm");
  });

  it("is undefined when core is not inside a node_modules folder (a workspace checkout)", () => {
    expect(extensionInstallRoot("/src/compaction/core/dist/index.js")).toBeUndefined();
  });
});
