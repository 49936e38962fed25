import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "./test-support/cli-sandbox.js";

/** A module whose top level writes `ran-<name>` next to itself: proof that the project's code ran. */
const marking = (name: string, body: string) =>
  `import { writeFileSync } from "node:fs";\nwriteFileSync(new URL("./ran-${name}", import.meta.url), "");\n${body}\n`;

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(() => sandbox.remove());

const ran = (name: string) => existsSync(join(sandbox.project, `ran-${name}`));

/** A data-only config naming a project preset and plugin, and cosmiconfig's "meta config" (code it runs from the working directory). */
function writeProjectCode(): void {
  sandbox.writeConfig(".compactionrc.json", JSON.stringify({ preset: "./team-preset.mjs", plugins: ["./team-plugin.mjs"] }));
  sandbox.writeConfig("team-preset.mjs", marking("preset", 'export default { plugins: ["safeguard"] };'));
  sandbox.writeConfig("team-plugin.mjs", marking("plugin", 'export default () => ({ name: "team", apply() {} });'));
  mkdirSync(join(sandbox.project, ".config"));
  sandbox.writeConfig(".config/config.mjs", marking("meta", "export default {};").replace("./ran-", "../ran-"));
}

describe("--no-project-code", () => {
  const commands: ReadonlyArray<readonly string[]> = [
    ["context", "status"],
    ["context", "inspect"],
    ["context", "history"],
    ["context", "export", "state.json"],
    ["compact", "--dry-run"],
    ["autocompact"],
    ["search", "selector"],
    ["config"],
  ];

  it.each(commands.map((args) => [args.join(" "), args] as const))("is honoured by '%s': the project's preset and plugin never run, the run goes on", (_label, args) => {
    writeProjectCode();
    const run = sandbox.run(["--no-project-code", ...args], { NO_COLOR: "1" });
    expect(run.stderr).not.toMatch(/ERR_|at .*\.js:\d+/);
    expect(run.code).toBe(0);
    expect(ran("preset")).toBe(false);
    expect(ran("plugin")).toBe(false);
    expect(ran("meta")).toBe(false);
  });

  it("without it, the project's preset and plugin run (so the markers prove something)", () => {
    writeProjectCode();
    expect(sandbox.run(["context", "status"]).code).toBe(0);
    expect(ran("preset")).toBe(true);
    expect(ran("plugin")).toBe(true);
    // cosmiconfig runs a "meta config" found in the working directory on every search.
    expect(ran("meta")).toBe(true);
  });

  it("says once on stderr what it left out, naming the file and how to trust it", () => {
    writeProjectCode();
    const run = sandbox.run(["--no-project-code", "context", "status"], { NO_COLOR: "1" });
    const warnings = run.stderr.match(/^compaction: warning: .*$/gm) ?? [];
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toContain(join(sandbox.project, "team-preset.mjs"));
    expect(warnings[1]).toContain(join(sandbox.project, "team-plugin.mjs"));
    expect(run.stderr).toContain("hint: To load it, run without --no-project-code");
  });

  it("does not run a .compactionrc.mjs, and still applies the data-only settings of a .compactionrc", () => {
    sandbox.writeConfig(".compactionrc.mjs", marking("config", "export default { contextWindow: 1000000 };"));
    const refused = sandbox.run(["--no-project-code", "context", "status", "--json"]);
    expect(refused.code).toBe(0);
    expect(ran("config")).toBe(false);
    const status = JSON.parse(refused.stdout) as { contextWindow: number; config: { file: string | null; projectCode: boolean; warnings: Array<{ code: string; file: string }> } };
    expect(status.contextWindow).toBe(200000);
    expect(status.config.projectCode).toBe(false);
    expect(status.config.warnings.map((warning) => [warning.code, warning.file])).toEqual([["COMPACTION_CONFIG_UNTRUSTED", join(sandbox.project, ".compactionrc.mjs")]]);

    writeFileSync(join(sandbox.project, ".compactionrc.mjs"), "");
    sandbox.writeConfig(".compactionrc", "contextWindow: 400000\n");
    const data = JSON.parse(sandbox.run(["--no-project-code", "context", "status", "--json"]).stdout) as { contextWindow: number };
    expect(data.contextWindow).toBe(400000);
  });

  it("is also set by COMPACTION_NO_PROJECT_CODE=1", () => {
    writeProjectCode();
    expect(sandbox.run(["context", "status"], { COMPACTION_NO_PROJECT_CODE: "1" }).code).toBe(0);
    expect(ran("preset") || ran("plugin")).toBe(false);
  });
});

describe("--agent without a section of its own (issue 13)", () => {
  const rc = "preset: safeguard\nagents:\n  researcher: { preset: rolling }\n";

  it("runs on the top-level settings and says so once on stderr, suggesting the nearest section", () => {
    sandbox.writeConfig(".compactionrc", rc);
    const run = sandbox.run(["context", "status", "--agent", "reseacher"], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("preset safeguard");
    expect(run.stderr).toBe(`compaction: agent 'reseacher' has no section in ${join(sandbox.project, ".compactionrc")}; using the top-level settings. Did you mean 'researcher'?\n`);
  });

  it("names the section it applied, and --json carries it", () => {
    sandbox.writeConfig(".compactionrc", rc);
    const run = sandbox.run(["context", "status", "--agent", "researcher", "--json"]);
    expect(run.stderr).toBe(`compaction: using agents.researcher of ${join(sandbox.project, ".compactionrc")}.\n`);
    const status = JSON.parse(run.stdout) as { preset: string; config: { agent: string; agentSection: string | null } };
    expect(status.preset).toBe("rolling");
    expect(status.config).toMatchObject({ agent: "researcher", agentSection: "researcher" });
    const other = JSON.parse(sandbox.run(["compact", "--dry-run", "--json", "--agent", "reviewer"]).stdout) as { config: { agentSection: string | null } };
    expect(other.config.agentSection).toBeNull();
  });
});

describe("a misspelt preset or plugin in any agent's section (issue 43: it failed only with that --agent)", () => {
  const rc = "preset: safeguard\nagents:\n  researcher: { preset: rolling }\n  coder: { preset: layerd }\n";

  it.each([
    ["config"],
    ["compact", "--dry-run"],
    ["context", "status"],
    ["context", "status", "--agent", "researcher"],
    ["config", "--agent", "coder"],
  ].map((args) => [args.join(" "), args] as const))("is reported by '%s': exit 4, the JSON path and a did-you-mean", (_label, args) => {
    sandbox.writeConfig(".compactionrc", rc);
    const run = sandbox.run(args, { NO_COLOR: "1" });
    expect(run.code).toBe(4);
    const [message, hint] = run.stderr.trimEnd().split("\n");
    expect(message).toBe(`compaction: Cannot find preset 'layerd' (named at /agents/coder/preset in ${join(sandbox.project, ".compactionrc")}).`);
    expect(hint).toMatch(/^hint: .*Did you mean 'layered'\?/);
  });
});

describe("a .js plugin written as an ES module in a CommonJS project (npm init)", () => {
  it("fails with Node's error and a hint: rename it to .mjs, or add \"type\": \"module\" to the package.json that governs it", () => {
    sandbox.writeConfig("package.json", JSON.stringify({ name: "my-app", version: "1.0.0", type: "commonjs" }));
    sandbox.writeConfig(".compactionrc", "plugins: [./compaction/keep.js]\n");
    mkdirSync(join(sandbox.project, "compaction"));
    sandbox.writeConfig("compaction/keep.js", 'import { basename } from "node:path";\nexport default () => ({ name: basename("/keep"), apply() {} });\n');
    const run = sandbox.run(["config"], { NO_COLOR: "1" });
    expect(run.code).toBe(4);
    const manifest = join(sandbox.project, "package.json");
    expect(run.stderr).toContain(`compaction: Cannot load plugin './compaction/keep.js' from ${join(sandbox.project, "compaction", "keep.js")}`);
    expect(run.stderr).toContain("Cannot use import statement outside a module");
    expect(run.stderr).toContain(
      `\nhint: keep.js uses import/export, but Node loads it as CommonJS (${manifest} says "type": "commonjs"): rename it to keep.mjs, or add "type": "module" to ${manifest}.\n`,
    );
    // The CLI's two lines alone: not Node's own warning about the same file before them.
    expect(run.stderr).not.toContain("Failed to load the ES module");
    expect(run.stderr.trimEnd().split("\n")).toHaveLength(2);
  });
});

describe("compaction config", () => {
  it("shows the file, the section, the preset and its plugins with each option's value and source", () => {
    sandbox.writeConfig(".compactionrc", "contextWindow: 100000\noptions:\n  safeguard:\n    keepRecentTokens: 5000\nagents:\n  coder: { preset: layered }\n");
    const run = sandbox.run(["config"], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^Config file +${join(sandbox.project, ".compactionrc")}$`, "m"));
    expect(run.stdout).toMatch(/^Agent +none given: the top-level settings$/m);
    expect(run.stdout).toMatch(/^Preset +safeguard +default;/m);
    expect(run.stdout).toMatch(/^contextWindow +100000 +file \/contextWindow$/m);
    // The preset lists its summarizer first: the extractive one, with its limits at their defaults.
    expect(run.stdout).toMatch(/^ +1\. summarizer-extractive +from the preset safeguard/m);
    expect(run.stdout).toMatch(/^ +maxItemsPerSection +20 +default$/m);
    expect(run.stdout).toMatch(/^ +2\. safeguard +from the preset safeguard/m);
    expect(run.stdout).toMatch(/^ +keepRecentTokens +5000 +file \/options\/safeguard\/keepRecentTokens$/m);
    expect(run.stdout).toMatch(/^ +chunkTokens +\d+ +default$/m);
    expect(run.stdout).toMatch(/^ +lastTurnMaxTokens +2000 +preset \/plugins\/2\/1\/lastTurnMaxTokens in /m);
    expect(run.stdout).toMatch(/^ +summarize +safeguard \(0\), last-turn-injection \(100\)$/m);
  });

  it("prints the same as JSON, for the agent's section", () => {
    sandbox.writeConfig(".compactionrc", "agents:\n  coder: { preset: layered, options: { layered: { pruneThreshold: 0.7 } } }\n");
    const run = sandbox.run(["config", "--agent", "coder", "--json"]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as {
      file: string;
      agentSection: string;
      preset: { name: string; source: { from: string; path: string } };
      plugins: Array<{ name: string; options: Array<{ name: string; value: unknown; source: { from: string; path?: string } }> }>;
    };
    expect(report.agentSection).toBe("coder");
    expect(report.preset).toMatchObject({ name: "layered", source: { from: "file", path: "/agents/coder/preset" } });
    const layered = report.plugins.find((plugin) => plugin.name === "layered");
    expect(layered?.options.find((option) => option.name === "pruneThreshold")).toEqual({
      name: "pruneThreshold",
      value: 0.7,
      source: { from: "file", file: join(sandbox.project, ".compactionrc"), path: "/agents/coder/options/layered/pruneThreshold" },
    });
  });

  it("says 'none, defaults' without a config file", () => {
    const run = sandbox.run(["config"], { NO_COLOR: "1" });
    expect(run.stdout).toMatch(/^Config file +none, defaults$/m);
  });

  it("fails as other commands do on a bad config: exit 4, the file and JSON path", () => {
    sandbox.writeConfig(".compactionrc", "options:\n  safegard:\n    keepRecentTokens: 5000\n");
    const run = sandbox.run(["config"], { NO_COLOR: "1" });
    expect(run.code).toBe(4);
    expect(run.stderr).toContain("/options/safegard");
    expect(run.stderr).toContain("Did you mean 'safeguard'?");
  });
});

describe("plugins written in TypeScript", () => {
  it("loads ./my-plugin.ts from a .compactionrc as a .compactionrc.ts is loaded (plain node, no loader flags)", () => {
    sandbox.writeConfig(".compactionrc", "plugins: [./keep-tail.ts]\n");
    sandbox.writeConfig(
      "keep-tail.ts",
      'interface Options { readonly keep?: number }\nexport default function keepTail(options: Options = {}) {\n  const keep: number = options.keep ?? 3;\n  return { name: "keep-tail", options: { keep }, apply(): void {} };\n}\n',
    );
    const run = sandbox.run(["config"], { NO_COLOR: "1" });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^ +1\. keep-tail +from the config's plugins; .*keep-tail\.ts$/m);
    expect(run.stdout).toMatch(/^ +keep +3 +default$/m);
  });
});

describe("outside this repository (issue 13)", () => {
  it("loads a plugin file that imports @compaction/core once core is installed in the project as `npm install <clone>/core` does (a link)", () => {
    const core = fileURLToPath(new URL("../../core", import.meta.url));
    mkdirSync(join(sandbox.project, "node_modules", "@compaction"), { recursive: true });
    symlinkSync(core, join(sandbox.project, "node_modules", "@compaction", "core"), "dir");
    sandbox.writeConfig(".compactionrc", "plugins: [./keep-last-turn.mjs]\n");
    sandbox.writeConfig(
      "keep-last-turn.mjs",
      'import { lastUserIndex } from "@compaction/core";\nexport default () => ({ name: "keep-last-turn", apply(compactor) { compactor.hooks.selectCut.tap("keep-last-turn", (run) => { const start = lastUserIndex(run.view.facts); return start > 0 ? { firstKeptIndex: start } : undefined; }); } });\n',
    );
    const run = sandbox.run(["compact", "--dry-run"], { NO_COLOR: "1" });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Compacts\s+\d+ messages, by keep-last-turn/);
  });
});
