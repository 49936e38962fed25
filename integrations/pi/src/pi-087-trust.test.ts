/**
 * Project trust (issue 16) in pi 0.87.1's real runtime: a cloned repository holds a code config
 * (`.compactionrc.mjs`) and a plugin file, each writing a marker file when it runs, and
 * `.pi/settings.json`, so pi asks whether to trust the folder. The user's answer is given to pi's
 * resource loader as pi's startup gives it (`resolveProjectTrust`).
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CompactionEvent } from "@compaction/core";
import { afterEach, describe, expect, it } from "vitest";
import { compactionExtension } from "./extension.js";
import { piAgentDir, projectTrust } from "./project-trust.js";
import { createRuntimeSession087, PI_087_UNSUPPORTED, PI_087_VERSION, type RuntimeSession087 } from "./test-support/pi-087-session.js";
import { collectReports, copyFixture, type SessionDir } from "./test-support/pi-session.js";

/** A plugin that adds a line to the summary, and leaves a marker when its file is loaded. */
const PLUGIN_FILE = `
import { writeFileSync } from "node:fs";
writeFileSync(new URL("./plugin-ran.marker", import.meta.url), "the project's plugin file ran");
export default () => ({
  name: "project-plugin",
  apply(compactor) {
    compactor.hooks.summarize.tap("project-plugin", (draft) => ({ ...draft, text: draft.text + "\\n\\n(project plugin was here)" }));
  },
});
`;

/** A code config that leaves a marker when it runs, and names the plugin file. */
const CODE_CONFIG = `
import { writeFileSync } from "node:fs";
writeFileSync(new URL("./config-ran.marker", import.meta.url), "the project's code config ran");
export default { preset: "safeguard", tokenizer: { counter: "estimate" }, plugins: ["./project-plugin.mjs"] };
`;

let session: SessionDir | undefined;
let runtime: RuntimeSession087 | undefined;
afterEach(() => {
  runtime?.dispose();
  session?.remove();
  runtime = undefined;
  session = undefined;
});

/** The fixture copy as a cloned repository: `config` is `.compactionrc.mjs` (code) or `.compactionrc.json` (data). */
function repository(config: { code: string } | { data: Record<string, unknown> }): SessionDir {
  const dir = copyFixture();
  mkdirSync(join(dir.dir, ".pi"), { recursive: true });
  writeFileSync(join(dir.dir, ".pi", "settings.json"), "{}\n");
  writeFileSync(join(dir.dir, "project-plugin.mjs"), PLUGIN_FILE);
  if ("code" in config) writeFileSync(join(dir.dir, ".compactionrc.mjs"), config.code);
  else writeFileSync(join(dir.dir, ".compactionrc.json"), JSON.stringify(config.data));
  return dir;
}

const ran = (dir: SessionDir) => ({
  config: existsSync(join(dir.dir, "config-ran.marker")),
  plugin: existsSync(join(dir.dir, "plugin-ran.marker")),
});

async function compactIn(dir: SessionDir, projectTrust: boolean) {
  const reports = collectReports();
  runtime = await createRuntimeSession087(dir, { model: { contextWindow: 200_000 }, projectTrust, extensions: [compactionExtension({ report: reports.report })] });
  const result = await runtime.session.compact();
  return { result, details: result.details as CompactionEvent, reports };
}

const title = `project trust in pi ${PI_087_VERSION}'s runtime${PI_087_UNSUPPORTED === undefined ? "" : ` (skipped: ${PI_087_UNSUPPORTED})`}`;

describe.skipIf(PI_087_UNSUPPORTED !== undefined)(title, () => {
  it("trust declined: compacts on the default settings, runs none of the project's code, and warns once", async () => {
    session = repository({ code: CODE_CONFIG });
    const { details, result, reports } = await compactIn(session, false);
    expect(details.strategy).toBe("safeguard");
    expect(result.summary).not.toContain("(project plugin was here)");
    expect(ran(session)).toEqual({ config: false, plugin: false });
    const warnings = reports.of("warning");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/\.compactionrc\.mjs.*pi has not trusted this folder.*trust this folder in pi.*\[COMPACTION_CONFIG_UNTRUSTED\]/);
  });

  it("trust granted: loads the code config and the plugin it names", async () => {
    session = repository({ code: CODE_CONFIG });
    const { result, reports } = await compactIn(session, true);
    expect(ran(session)).toEqual({ config: true, plugin: true });
    expect(result.summary).toContain("(project plugin was here)");
    expect(reports.of("warning")).toEqual([]);
  });

  it("trust declined: a data-only .compactionrc still applies, its project plugin file is skipped with one warning", async () => {
    session = repository({ data: { preset: "rolling", tokenizer: { counter: "estimate" }, plugins: ["./project-plugin.mjs"] } });
    const reports = collectReports();
    runtime = await createRuntimeSession087(session, { model: { contextWindow: 120_000 }, projectTrust: false, extensions: [compactionExtension({ report: reports.report })] });
    const result = await runtime.session.compact();
    expect((result.details as CompactionEvent).strategy).toBe("rolling");
    expect(result.summary).not.toContain("(project plugin was here)");
    expect(ran(session)).toEqual({ config: false, plugin: false });
    const warnings = reports.of("warning");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/project-plugin\.mjs.*pi has not trusted this folder.*\[COMPACTION_CONFIG_UNTRUSTED\]/);
  });
});

describe("projectTrust", () => {
  const dirs: SessionDir[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) dir.remove();
  });
  function folder(withPi: boolean): SessionDir {
    const dir = copyFixture();
    dirs.push(dir);
    if (withPi) {
      mkdirSync(join(dir.dir, ".pi"), { recursive: true });
      writeFileSync(join(dir.dir, ".pi", "settings.json"), "{}\n");
    }
    return dir;
  }

  it("trusts the project on a pi without project trust (pi 0.73), as before", () => {
    expect(projectTrust({ cwd: "/repo" }, "/repo")).toMatchObject({ trusted: true });
  });

  it("follows pi's no", () => {
    const dir = folder(true);
    expect(projectTrust({ cwd: dir.dir, isProjectTrusted: () => false }, dir.dir, join(dir.dir, "agent"))).toMatchObject({ trusted: false });
  });

  it("follows pi's yes for a folder pi asked about", () => {
    const dir = folder(true);
    expect(projectTrust({ cwd: dir.dir, isProjectTrusted: () => true }, dir.dir, join(dir.dir, "agent"))).toMatchObject({ trusted: true });
  });

  it("does not take pi's yes for a folder pi never asked about, until /trust saved a decision for it", () => {
    const dir = folder(false);
    const agentDir = join(dir.dir, "agent");
    const ctx = { cwd: dir.dir, isProjectTrusted: () => true };
    expect(projectTrust(ctx, dir.dir, agentDir)).toMatchObject({ trusted: false, because: expect.stringMatching(/never asked/) });
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(join(agentDir, "trust.json"), JSON.stringify({ [dir.dir]: true }));
    expect(projectTrust(ctx, join(dir.dir, "sub"), agentDir)).toMatchObject({ trusted: true });
    writeFileSync(join(agentDir, "trust.json"), JSON.stringify({ [dir.dir]: false }));
    expect(projectTrust(ctx, dir.dir, agentDir)).toMatchObject({ trusted: false });
    rmSync(join(agentDir, "trust.json"));
  });

  it("finds pi's agent folder from PI_CODING_AGENT_DIR, else ~/.pi/agent", () => {
    expect(piAgentDir({ PI_CODING_AGENT_DIR: "/srv/pi" })).toBe("/srv/pi");
    expect(piAgentDir({})).toMatch(/\.pi\/agent$/);
  });
});
