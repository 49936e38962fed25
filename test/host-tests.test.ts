/**
 * A real-host test that cannot run says so loudly: the hosts (scripts/hosts/<name>) are not part of
 * `npm ci`, so without one a package's host tests (scripts/host-tests.mjs, for vitest) and the files
 * that import it (scripts/typecheck.mjs, for the typecheck) are left out with a line naming them and
 * the command that installs the host; under CI, where they must run, a missing host fails the run.
 * Each case below pretends the host is missing (or there) through the functions' `installed`
 * option, so it holds on a machine with the hosts installed as on one without.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { isCi, missingHostExcludes, missingHosts, nodeSatisfies } from "../scripts/host-tests.mjs";
import { filesImporting, typecheckPlan } from "../scripts/typecheck.mjs";
import { ROOT } from "./support/packed-workspaces.js";

const PI = join(ROOT, "integrations/pi");
const absent = () => false;
const present = () => true;
const NEEDS = { "pi-0.73": ["src/extension.test.ts"] };
const INSTALL_PI = "run `node scripts/host-install.mjs pi-0.73` at the repository root";

describe("a missing host in a package's vitest run (missingHostExcludes)", () => {
  it("under CI is an error that names the host and the command that installs it", () => {
    expect(() => missingHostExcludes(PI, NEEDS, { env: { CI: "true" }, installed: absent })).toThrow(
      /^CI must run the tests that need pi-0\.73, but @mariozechner\/pi-coding-agent@0\.73\.1 \(host pi-0\.73\) is not installed in integrations\/pi .*node scripts\/host-install\.mjs pi-0\.73/,
    );
  });

  it("elsewhere leaves the files out with a warning that names them and the command", () => {
    const warnings: string[] = [];
    const excludes = missingHostExcludes(PI, NEEDS, { env: {}, installed: absent, warn: (line) => warnings.push(line) });
    expect(excludes).toEqual(["src/extension.test.ts"]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^SKIPPED src\/extension\.test\.ts: /);
    expect(warnings[0]).toContain(INSTALL_PI);
  });

  it("with the host installed leaves nothing out and says nothing, under CI or not", () => {
    const warnings: string[] = [];
    for (const env of [{ CI: "true" }, {}]) expect(missingHostExcludes(PI, NEEDS, { env, installed: present, warn: (line) => warnings.push(line) })).toEqual([]);
    expect(warnings).toEqual([]);
  });

  it("refuses a host that links nothing into the package (a list that would never skip)", () => {
    expect(() => missingHostExcludes(join(ROOT, "core"), NEEDS, { env: {}, installed: absent })).toThrow(/links nothing into core; add it to compaction\.links/);
  });

  it("reads a host's Node range as engines fields are read (OpenClaw's: >=24.16.0 <25 || >=26.1.0)", () => {
    const openclaw = ">=24.16.0 <25 || >=26.1.0";
    expect(["22.23.5", "24.15.9", "24.16.0", "24.22.3", "25.9.0", "26.0.0", "26.1.0", "27.0.0"].map((version) => nodeSatisfies(openclaw, version))).toEqual([false, false, true, true, false, false, true, true]);
    expect(nodeSatisfies(undefined, "20.0.0")).toBe(true);
  });

  it("reads CI as CI does: set to anything but '', '0' or 'false'", () => {
    expect([{ CI: "true" }, { CI: "1" }, { CI: "yes" }].map(isCi)).toEqual([true, true, true]);
    expect([{}, { CI: "" }, { CI: "0" }, { CI: "false" }].map(isCi)).toEqual([false, false, false, false]);
  });
});

describe("a missing host in a package's typecheck (scripts/typecheck.mjs)", () => {
  it("under CI fails, naming the files and the command", () => {
    const plan = typecheckPlan(PI, { env: { CI: "true" }, installed: absent });
    expect(plan.fail).toMatch(/^CI must typecheck .*src\/extension\.test\.ts.*, but /);
    expect(plan.fail).toContain(INSTALL_PI);
    expect(plan.fail).toContain("node scripts/host-install.mjs pi-0.87");
  });

  it("elsewhere leaves out the files that import the host, directly or through a helper, and checks the rest", () => {
    const plan = typecheckPlan(PI, { env: {}, installed: absent });
    expect(plan.fail).toBeUndefined();
    const leftOut = plan.leftOut.map((file) => file.slice(PI.length + 1));
    // extension.test.ts imports pi's types itself; pi-runtime.test.ts only through the helper that drives pi.
    expect(leftOut).toEqual(expect.arrayContaining(["src/extension.test.ts", "src/test-support/pi-session.ts", "src/pi-runtime.test.ts"]));
    // The package's own code never imports a host (pi is a peer the host brings): it is always checked.
    expect(leftOut.filter((file) => !file.endsWith(".test.ts") && !file.startsWith("src/test-support/"))).toEqual([]);
    expect(plan.fileNames.length).toBeGreaterThan(plan.leftOut.length);
    expect(plan.warning).toMatch(/^SKIPPED typecheck of .*src\/extension\.test\.ts/);
    expect(plan.warning).toContain(INSTALL_PI);
  });

  it("with the hosts installed checks every file", () => {
    const plan = typecheckPlan(PI, { env: { CI: "true" }, installed: present });
    expect([plan.leftOut, plan.fail, plan.warning]).toEqual([[], undefined, undefined]);
  });

  it("is the typecheck of every package a host links into, so no package typechecks around it", () => {
    const consumers = new Set(
      readdirSync(join(ROOT, "scripts/hosts")).flatMap((host) => Object.keys((JSON.parse(readFileSync(join(ROOT, "scripts/hosts", host, "package.json"), "utf8")) as { compaction: { links: Record<string, string[]> } }).compaction.links)),
    );
    expect(consumers.size).toBeGreaterThan(4);
    for (const consumer of consumers) {
      const { scripts } = JSON.parse(readFileSync(join(ROOT, consumer, "package.json"), "utf8")) as { scripts: Record<string, string> };
      expect(scripts["typecheck"], consumer).toMatch(/^node (\.\.\/)+scripts\/typecheck\.mjs$/);
    }
    // And the hosts a package lacks are what its typecheck looks at (none of them missing here means none to leave out).
    expect(missingHosts(PI, { installed: present })).toEqual([]);
  });
});

describe("filesImporting", () => {
  const dir = mkdtempSync(join(tmpdir(), "compaction-files-importing-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const files: Record<string, string> = {
    "host-types.ts": 'import type { AgentTool } from "@mariozechner/pi-ai";\nexport type T = AgentTool;\n',
    "sub-path.ts": 'export const m = await import("@mariozechner/pi-coding-agent/dist/index.js");\n',
    "helper.ts": 'export type { T } from "./host-types.js";\n',
    "uses-helper.test.ts": 'import { type T } from "./helper.js";\nexport const t: T | undefined = undefined;\n',
    "own.ts": 'import { join } from "node:path";\nimport { x } from "./own-helper.js";\nexport const y = join(x);\n',
    "own-helper.ts": 'export const x = "@mariozechner/pi-ai is only named in a string";\n',
    "similar-name.ts": 'import { z } from "@mariozechner/pi-ai-extra";\nexport const w = z;\n',
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const all = Object.keys(files).map((name) => join(dir, name));

  it("finds the direct importers (a name or its subpath, static, type-only or dynamic) and their importers, not a longer name or a string", () => {
    const found = filesImporting(all, ["@mariozechner/pi-ai", "@mariozechner/pi-coding-agent"]).map((file) => file.slice(dir.length + 1));
    expect(found).toEqual(["host-types.ts", "sub-path.ts", "helper.ts", "uses-helper.test.ts"]);
  });

  it("finds nothing when no package is missing", () => {
    expect(filesImporting(all, [])).toEqual([]);
  });
});
