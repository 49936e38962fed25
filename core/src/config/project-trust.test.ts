import { existsSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ErrorCodes } from "../errors.js";
import { makeProject, removeProjects, writeFiles } from "../testing/tmp-project.js";
import { createCompactor } from "./create-compactor.js";
import { loadConfig, loadConfigDetailed } from "./load-config.js";
import type { ConfigWarning } from "./project-trust.js";
import { resolvePlugins } from "./resolve-plugins.js";
import type { ResolvedConfig } from "./types.js";

/** A module whose top level writes `ran-<name>` next to itself: proof that its code ran. */
const marking = (name: string, body: string) =>
  `import { writeFileSync } from "node:fs";\nwriteFileSync(new URL("./ran-${name}", import.meta.url), "");\n${body}\n`;
const markingCjs = (name: string, body: string) => `require("node:fs").writeFileSync(require("node:path").join(__dirname, "ran-${name}"), "");\n${body}\n`;
const markingPlugin = (name: string) => marking(name, `export default (options) => ({ name: ${JSON.stringify(name)}, options, apply() {} });`);
const markingPreset = (name: string) => marking(name, `export default { plugins: ["safeguard"] };`);
const ran = (dir: string, name: string) => existsSync(join(dir, `ran-${name}`));

let home: string;
beforeEach(() => {
  // The user's home for these tests: outside every project.
  home = makeProject();
  vi.stubEnv("HOME", home);
});
afterEach(() => {
  vi.unstubAllEnvs();
  removeProjects();
});

const untrusted = (cwd: string, extra: object = {}) => loadConfig({ cwd, trusted: false, ...extra });

function onlyWarning(config: ResolvedConfig): ConfigWarning {
  expect(config.warnings).toHaveLength(1);
  const [warning] = config.warnings;
  expect(warning?.code).toBe(ErrorCodes.CONFIG_UNTRUSTED);
  return warning as ConfigWarning;
}

describe("trusted: false — config files", () => {
  const esm = marking("config", "export default { contextWindow: 123456 };");
  const cjs = markingCjs("config", "module.exports = { contextWindow: 123456 };");
  const ts = marking("config", "const config: { contextWindow: number } = { contextWindow: 123456 };\nexport default config;");
  const codePlaces: ReadonlyArray<readonly [file: string, text: string]> = [
    [".compactionrc.js", esm],
    [".compactionrc.mjs", esm],
    [".compactionrc.cjs", cjs],
    [".compactionrc.ts", ts],
    [".config/compactionrc.js", esm],
    [".config/compactionrc.mjs", esm],
    [".config/compactionrc.cjs", cjs],
    [".config/compactionrc.ts", ts],
    ["compaction.config.js", esm],
    ["compaction.config.mjs", esm],
    ["compaction.config.cjs", cjs],
    ["compaction.config.ts", ts],
  ];

  it.each(codePlaces)("does not load %s: its code never runs, defaults apply, one warning names it", async (file, text) => {
    const root = makeProject({ "package.json": JSON.stringify({ name: "p", type: "module" }), [file]: text });
    const config = await untrusted(root);
    expect(config.filepath).toBeNull();
    expect(config.contextWindow).toBe(200000);
    expect(config.trusted).toBe(false);
    expect(ran(join(root, file, ".."), "config")).toBe(false);
    const warning = onlyWarning(config);
    expect(warning.file).toBe(join(root, file));
    expect(warning.message).toContain(join(root, file));
    expect(warning.hint).toMatch(/trust/);
  });

  it.each(codePlaces)("loads %s when trusted (the default): the marker proves the test can fail", async (file, text) => {
    const root = makeProject({ "package.json": JSON.stringify({ name: "p", type: "module" }), [file]: text });
    const config = await loadConfig({ cwd: root });
    expect(config.contextWindow).toBe(123456);
    expect(ran(join(root, file, ".."), "config")).toBe(true);
    expect(config.warnings).toEqual([]);
  });

  const dataPlaces: ReadonlyArray<readonly [file: string, text: string]> = [
    [".compactionrc", "contextWindow: 123456\n"],
    [".compactionrc.json", JSON.stringify({ contextWindow: 123456 })],
    [".compactionrc.yaml", "contextWindow: 123456\n"],
    [".compactionrc.yml", "contextWindow: 123456\n"],
    [".config/compactionrc", "contextWindow: 123456\n"],
    [".config/compactionrc.json", JSON.stringify({ contextWindow: 123456 })],
    [".config/compactionrc.yaml", "contextWindow: 123456\n"],
    ["package.json", JSON.stringify({ name: "p", compaction: { contextWindow: 123456 } })],
  ];

  it.each(dataPlaces)("still applies the data-only %s, with no warning", async (file, text) => {
    const root = makeProject({ [file]: text });
    const config = await untrusted(root);
    expect(config.filepath).toBe(join(root, file));
    expect(config.contextWindow).toBe(123456);
    expect(config.warnings).toEqual([]);
  });

  it("finds the same file a trusted search finds: package.json#compaction before a code file", async () => {
    const root = makeProject({ "package.json": JSON.stringify({ name: "p", compaction: { contextWindow: 99999 } }), ".compactionrc.mjs": marking("config", "export default {};") });
    const config = await untrusted(root);
    expect(config.filepath).toBe(join(root, "package.json"));
    expect(config.warnings).toEqual([]);
  });

  it("searches parent folders up to the one holding package.json, as cosmiconfig does", async () => {
    const root = makeProject({ ".compactionrc.yaml": "contextWindow: 123456\n", "sub/deeper/.keep": "" });
    const config = await untrusted(join(root, "sub", "deeper"));
    expect(config.filepath).toBe(join(root, ".compactionrc.yaml"));
  });

  it("does not load a code file named by configPath", async () => {
    const root = makeProject({ "my.config.mjs": marking("config", "export default { contextWindow: 1234 };") });
    const config = await untrusted(root, { configPath: "my.config.mjs" });
    expect(ran(root, "config")).toBe(false);
    expect(onlyWarning(config).file).toBe(join(root, "my.config.mjs"));
  });

  it("follows a data file's $import of data, and leaves out (with a warning) an $import of code", async () => {
    const root = makeProject({
      ".compactionrc.json": JSON.stringify({ $import: ["./base.yaml", "./evil.mjs"], reserveTokens: 1000 }),
      "base.yaml": "contextWindow: 123456\n",
      "evil.mjs": marking("import", "export default { contextWindow: 5 };"),
    });
    const config = await untrusted(root);
    expect(config.contextWindow).toBe(123456);
    expect(config.reserveTokens).toBe(1000);
    expect(ran(root, "import")).toBe(false);
    const warning = onlyWarning(config);
    expect(warning.file).toBe(join(root, "evil.mjs"));
    expect(warning.source).toBe(join(root, ".compactionrc.json"));
  });

  it("uses the host's words in the hint when it gives them (trustHint)", async () => {
    const root = makeProject({ ".compactionrc.mjs": "export default {};\n" });
    const config = await untrusted(root, { trustHint: "Run /trust in pi." });
    expect(onlyWarning(config).hint).toContain("Run /trust in pi.");
  });
});

describe("trusted: false — presets and plugins", () => {
  async function plugins(cwd: string, trusted: boolean) {
    const loaded = await loadConfigDetailed({ cwd, trusted });
    return resolvePlugins(loaded);
  }
  const rc = (config: object) => JSON.stringify(config);

  const inProject: ReadonlyArray<readonly [label: string, files: Record<string, string>, markerDir: string]> = [
    ["a relative plugin path", { ".compactionrc.json": rc({ plugins: ["./my-plugin.mjs"] }), "my-plugin.mjs": markingPlugin("mine") }, "."],
    ["a relative plugin path with options", { ".compactionrc.json": rc({ plugins: [["./my-plugin.mjs", { a: 1 }]] }), "my-plugin.mjs": markingPlugin("mine") }, "."],
    ["a TypeScript plugin path", { ".compactionrc.json": rc({ plugins: ["./my-plugin.ts"] }), "my-plugin.ts": markingPlugin("mine") }, "."],
    [
      "a short name installed only in the project's node_modules",
      { ".compactionrc.json": rc({ plugins: ["mine"] }), "node_modules/compaction-plugin-mine/package.json": rc({ name: "compaction-plugin-mine", type: "module", main: "index.js" }), "node_modules/compaction-plugin-mine/index.js": markingPlugin("mine") },
      "node_modules/compaction-plugin-mine",
    ],
    [
      "a scoped package name installed in the project",
      { ".compactionrc.json": rc({ plugins: ["@team/plugin"] }), "node_modules/@team/plugin/package.json": rc({ name: "@team/plugin", type: "module", main: "index.js" }), "node_modules/@team/plugin/index.js": markingPlugin("team") },
      "node_modules/@team/plugin",
    ],
    [
      "a plugin listed in an agent's section",
      { ".compactionrc.json": rc({ agents: { coder: { plugins: ["./my-plugin.mjs"] } } }), "my-plugin.mjs": markingPlugin("mine") },
      ".",
    ],
  ];

  it.each(inProject)("skips %s: its code never runs, one warning names file and entry", async (label, files, markerDir) => {
    const root = makeProject(files);
    const loaded = await loadConfigDetailed({ cwd: root, trusted: false, ...(label.includes("agent") ? { agent: "coder" } : {}) });
    const resolved = await resolvePlugins(loaded);
    expect(ran(join(root, markerDir), "mine") || ran(join(root, markerDir), "team")).toBe(false);
    expect(resolved.plugins.map((plugin) => plugin.name)).toEqual(["summarizer-extractive", "safeguard", "last-turn-injection"]);
    expect(resolved.warnings).toHaveLength(1);
    const [warning] = resolved.warnings;
    expect(warning?.code).toBe(ErrorCodes.CONFIG_UNTRUSTED);
    expect(warning?.file.startsWith(root)).toBe(true);
    expect(warning?.source).toBe(join(root, ".compactionrc.json"));
    expect(warning?.path).toMatch(/plugins\/0/);
  });

  it.each(inProject)("loads %s when trusted (the marker is written)", async (label, files, markerDir) => {
    const root = makeProject(files);
    const loaded = await loadConfigDetailed({ cwd: root, ...(label.includes("agent") ? { agent: "coder" } : {}) });
    const resolved = await resolvePlugins(loaded);
    expect(ran(join(root, markerDir), "mine") || ran(join(root, markerDir), "team")).toBe(true);
    expect(resolved.warnings).toEqual([]);
  });

  it("skips a preset given by path, running the built-in default preset instead", async () => {
    const root = makeProject({ ".compactionrc.yaml": "preset: ./team-preset.mjs\n", "team-preset.mjs": markingPreset("preset") });
    const resolved = await plugins(root, false);
    expect(ran(root, "preset")).toBe(false);
    expect(resolved.preset.name).toBe("safeguard");
    expect(resolved.warnings[0]?.message).toContain("using the preset 'safeguard' instead");
    expect(resolved.warnings[0]?.path).toBe("/preset");
  });

  it("skips a preset package installed only in the project", async () => {
    const root = makeProject({
      ".compactionrc.yaml": "preset: team\n",
      "node_modules/compaction-preset-team/package.json": rc({ name: "compaction-preset-team", type: "module", main: "index.js" }),
      "node_modules/compaction-preset-team/index.js": markingPreset("preset"),
    });
    const resolved = await plugins(root, false);
    expect(ran(join(root, "node_modules/compaction-preset-team"), "preset")).toBe(false);
    expect(resolved.warnings).toHaveLength(1);
    expect((await plugins(root, true)).preset.name).toBe("team");
  });

  it("uses the built-in plugin and preset, not a project's copy of the same package", async () => {
    const root = makeProject({
      ".compactionrc.yaml": "preset: safeguard\nplugins: [rolling]\n",
      "node_modules/@compaction/plugin-rolling/package.json": rc({ name: "@compaction/plugin-rolling", type: "module", main: "index.js" }),
      "node_modules/@compaction/plugin-rolling/index.js": markingPlugin("rolling"),
      "node_modules/@compaction/preset-safeguard/package.json": rc({ name: "@compaction/preset-safeguard", type: "module", main: "index.js" }),
      "node_modules/@compaction/preset-safeguard/index.js": markingPreset("preset"),
    });
    const resolved = await plugins(root, false);
    expect(ran(join(root, "node_modules/@compaction/plugin-rolling"), "rolling")).toBe(false);
    expect(ran(join(root, "node_modules/@compaction/preset-safeguard"), "preset")).toBe(false);
    expect(resolved.preset.file.startsWith(root)).toBe(false);
    expect(resolved.plugins.map((plugin) => plugin.name)).toEqual(["rolling", "summarizer-extractive", "safeguard", "last-turn-injection"]);
    // Trusted, the project's copies win (today's resolution order), so the markers prove the setup.
    await plugins(root, true);
    expect(ran(join(root, "node_modules/@compaction/plugin-rolling"), "rolling")).toBe(true);
  });

  it("skips a relative path that leaves the project (another folder the project chose)", async () => {
    const parent = makeProject({ "other/evil.mjs": markingPlugin("evil") });
    const root = join(parent, "repo");
    writeFiles(root, { "package.json": rc({ name: "repo" }), ".compactionrc.json": rc({ plugins: ["../other/evil.mjs"] }) });
    const resolved = await plugins(root, false);
    expect(ran(join(parent, "other"), "evil")).toBe(false);
    expect(resolved.warnings).toHaveLength(1);
  });

  it("skips an absolute path inside the project", async () => {
    const root = makeProject({ "my-plugin.mjs": markingPlugin("mine") });
    writeFiles(root, { ".compactionrc.json": rc({ plugins: [join(root, "my-plugin.mjs")] }) });
    const resolved = await plugins(root, false);
    expect(ran(root, "mine")).toBe(false);
    expect(resolved.warnings).toHaveLength(1);
  });

  it("skips a package in the repository's node_modules when the folder opened is below it (.git marks the project)", async () => {
    const repo = makeProject({
      ".git/HEAD": "ref: refs/heads/main\n",
      "node_modules/compaction-plugin-mine/package.json": rc({ name: "compaction-plugin-mine", type: "module", main: "index.js" }),
      "node_modules/compaction-plugin-mine/index.js": markingPlugin("mine"),
      "packages/app/package.json": rc({ name: "app" }),
      "packages/app/.compactionrc.yaml": "plugins: [mine]\n",
    });
    const resolved = await plugins(join(repo, "packages/app"), false);
    expect(ran(join(repo, "node_modules/compaction-plugin-mine"), "mine")).toBe(false);
    expect(resolved.warnings[0]?.file).toBe(join(repo, "node_modules/compaction-plugin-mine/index.js"));
  });

  it("still loads a user-level plugin: a package in ~/node_modules, and an absolute path outside the project", async () => {
    writeFiles(home, {
      "node_modules/compaction-plugin-personal/package.json": rc({ name: "compaction-plugin-personal", type: "module", main: "index.js" }),
      "node_modules/compaction-plugin-personal/index.js": markingPlugin("personal"),
      ".compaction/plugins/tidy.mjs": markingPlugin("tidy"),
    });
    const root = makeProject({ ".compactionrc.json": rc({ plugins: ["personal", join(realpathSync(home), ".compaction/plugins/tidy.mjs")] }) });
    const resolved = await plugins(root, false);
    expect(resolved.warnings).toEqual([]);
    expect(resolved.plugins.map((plugin) => plugin.name)).toEqual(["personal", "tidy", "summarizer-extractive", "safeguard", "last-turn-injection"]);
    expect(ran(join(home, "node_modules/compaction-plugin-personal"), "personal")).toBe(true);
  });

  it("treats a config file the caller names (configPath, e.g. in the home folder) as the user's, not the project's", async () => {
    writeFiles(home, {
      "compaction.yaml": "plugins: [personal]\n",
      "node_modules/compaction-plugin-personal/package.json": rc({ name: "compaction-plugin-personal", type: "module", main: "index.js" }),
      "node_modules/compaction-plugin-personal/index.js": markingPlugin("personal"),
    });
    const root = makeProject();
    const resolved = await resolvePlugins(await loadConfigDetailed({ cwd: root, trusted: false, configPath: join(home, "compaction.yaml") }));
    expect(resolved.warnings).toEqual([]);
    expect(resolved.plugins[0]?.name).toBe("personal");
  });

  it("ignores the options of a skipped plugin instead of calling them a typo", async () => {
    const root = makeProject({ ".compactionrc.json": rc({ plugins: ["./my-plugin.mjs"], options: { mine: { a: 1 } } }), "my-plugin.mjs": markingPlugin("mine") });
    const resolved = await plugins(root, false);
    expect(resolved.warnings).toHaveLength(1);
  });

  it("createCompactor: compacts on the data-only and default settings, the warnings on compactor.config", async () => {
    const root = makeProject({
      ".compactionrc.yaml": "contextWindow: 100000\npreset: ./team-preset.mjs\nplugins: [./my-plugin.mjs]\n",
      "team-preset.mjs": markingPreset("preset"),
      "my-plugin.mjs": markingPlugin("mine"),
    });
    const compactor = await createCompactor({ cwd: root, trusted: false });
    try {
      const config = compactor.config as ResolvedConfig;
      expect(config.contextWindow).toBe(100000);
      expect(config.warnings.map((warning) => warning.file)).toEqual([join(root, "team-preset.mjs"), join(root, "my-plugin.mjs")]);
      expect(compactor.plugins.map((plugin) => plugin.name)).toEqual(["summarizer-extractive", "safeguard", "last-turn-injection"]);
      expect(ran(root, "preset") || ran(root, "mine")).toBe(false);
    } finally {
      compactor.dispose();
    }
  });
});
