import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { CompactionPlugin } from "../compactor/plugin.js";
import { CompactionError, ErrorCodes } from "../errors.js";
import { makeProject, recordingPluginSource, removeProjects } from "../testing/tmp-project.js";
import { loadConfigDetailed } from "./load-config.js";
import { resolvePlugins } from "./resolve-plugins.js";

afterEach(removeProjects);

type Recorded = CompactionPlugin & { options?: Record<string, unknown> };

async function pluginsFor(files: Record<string, string>, agent?: string, existing?: string): Promise<Recorded[]> {
  const root = existing ?? makeProject(files);
  return (await resolvePlugins(await loadConfigDetailed({ cwd: root, ...(agent === undefined ? {} : { agent }) }))).plugins as Recorded[];
}

async function failure(files: Record<string, string>, agent?: string): Promise<{ error: CompactionError; root: string }> {
  const root = makeProject(files);
  const error = await loadConfigDetailed({ cwd: root, ...(agent === undefined ? {} : { agent }) })
    .then(resolvePlugins)
    .then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
  expect(error).toBeInstanceOf(CompactionError);
  return { error: error as CompactionError, root };
}

const rc = (config: object) => ({ ".compactionrc.json": JSON.stringify(config) });

/** A preset in presets/team.mjs whose plugins live next to it in presets/plugins/. */
const TEAM_PRESET = {
  "presets/team.mjs": 'export default { plugins: [["./plugins/alpha.mjs", { a: 1, b: 1 }], "./plugins/beta.mjs"] };\n',
  "presets/plugins/alpha.mjs": recordingPluginSource("alpha"),
  "presets/plugins/beta.mjs": recordingPluginSource("beta"),
};

describe("resolvePlugins: presets", () => {
  it("resolves a preset's relative plugin paths from the preset's own directory", async () => {
    const plugins = await pluginsFor({ ...rc({ preset: "./presets/team.mjs" }), ...TEAM_PRESET });
    expect(plugins.map((plugin) => plugin.name)).toEqual(["alpha", "beta"]);
    expect(plugins[0]?.options).toEqual({ a: 1, b: 1 });
    expect(plugins[1]?.options).toBeUndefined();
  });

  it("merges options[<plugin name>] from the config over the preset entry's options, per key", async () => {
    const plugins = await pluginsFor({ ...rc({ preset: "./presets/team.mjs", options: { alpha: { b: 2, c: 3 }, beta: { d: 4 } } }), ...TEAM_PRESET });
    expect(plugins[0]?.options).toEqual({ a: 1, b: 2, c: 3 });
    expect(plugins[1]?.options).toEqual({ d: 4 });
  });

  it("applies an agent's options over the top-level options for that agent's preset", async () => {
    const config = { preset: "./presets/team.mjs", options: { alpha: { b: 2 } }, agents: { coder: { options: { alpha: { c: 5 } } } } };
    const plugins = await pluginsFor({ ...rc(config), ...TEAM_PRESET }, "coder");
    expect(plugins[0]?.options).toEqual({ a: 1, b: 2, c: 5 });
  });

  it("instantiates factories a preset lists directly, keyed for options by the plugin's own name", async () => {
    const preset = `const gamma = (options) => ({ name: "gamma", options, apply() {} });
export default { plugins: [[gamma, { x: 1, y: 1 }], gamma] };
`;
    const plugins = await pluginsFor({ ...rc({ preset: "./preset.mjs", options: { gamma: { y: 2 } } }), "preset.mjs": preset });
    expect(plugins.map((plugin) => plugin.options)).toEqual([{ x: 1, y: 2 }, { y: 2 }]);
  });

  it("keys options of a short-named package by its short name", async () => {
    const files = {
      ...rc({ preset: "./preset.mjs", plugins: [["tmp-opt", { a: 1 }]], options: { "tmp-opt": { a: 2, c: 3 } } }),
      "preset.mjs": "export default { plugins: [] };\n",
      "node_modules/compaction-plugin-tmp-opt/package.json": JSON.stringify({ name: "compaction-plugin-tmp-opt", type: "module", main: "index.js" }),
      "node_modules/compaction-plugin-tmp-opt/index.js": recordingPluginSource("tmp-opt"),
    };
    const plugins = await pluginsFor(files);
    expect(plugins[0]?.options).toEqual({ a: 2, c: 3 });
  });

  it("reports a missing preset at the JSON path that names it", async () => {
    const { error, root } = await failure(rc({ preset: "safeguard", agents: { r: { preset: "rollin" } } }), "r");
    expect(error.code).toBe(ErrorCodes.PLUGIN_NOT_FOUND);
    expect(error.file).toBe(join(root, ".compactionrc.json"));
    expect(error.path).toBe("/agents/r/preset");
    expect(error.hint).toContain("Did you mean 'rolling'?");
  });

  it("reports a preset the caller chose (createCompactor's preset, the CLI's --preset) as named by the preset option, not by the file", async () => {
    const root = makeProject(rc({ preset: "safeguard" }));
    const attempt = (preset: string) => loadConfigDetailed({ cwd: root, preset }).then(resolvePlugins).then(() => undefined, (thrown: unknown) => thrown as CompactionError);
    const unknown = await attempt("nope");
    expect(unknown).toBeInstanceOf(CompactionError);
    expect(unknown?.code).toBe(ErrorCodes.PLUGIN_NOT_FOUND);
    expect(unknown?.message).toBe("Cannot find preset 'nope' (named by the preset option).");
    expect(unknown?.file).toBeUndefined();
    expect(unknown?.path).toBeUndefined();
    expect(unknown?.hint).toMatch(/^The built-in presets are safeguard, rolling, layered, sliding-window\. For another, install the package \(npm install @compaction\/preset-nope\) or give a path/);
    const typo = await attempt("rollin");
    expect(typo?.hint).toMatch(/^Did you mean 'rolling'\? If not, install the package/);
    // A caller that says which of its options named the preset (the CLI's --presets) is named so.
    const named = await loadConfigDetailed({ cwd: root, preset: "nope", presetNamedBy: "--presets" }).then(resolvePlugins).then(() => undefined, (thrown: unknown) => thrown as CompactionError);
    expect(named?.message).toBe("Cannot find preset 'nope' (named by --presets).");
  });

  it("rejects a preset entry of the wrong shape, naming the preset file and entry", async () => {
    const { error, root } = await failure({ ...rc({ preset: "./preset.mjs" }), "preset.mjs": "export default { plugins: [42] };\n" });
    expect(error.code).toBe(ErrorCodes.PLUGIN_INVALID);
    expect(error.file).toBe(join(root, "preset.mjs"));
    expect(error.path).toBe("/plugins/0");
  });
});

describe("resolvePlugins: the config's own plugins", () => {
  const files = {
    "preset.mjs": 'export default { plugins: ["./p/alpha.mjs", "./p/beta.mjs"] };\n',
    "p/alpha.mjs": recordingPluginSource("alpha"),
    "p/beta.mjs": recordingPluginSource("beta"),
    "mine/own.mjs": recordingPluginSource("own"),
    "mine/beta.mjs": 'export default (options) => ({ name: "beta", options, mine: true, apply() {} });\n',
  };

  it("puts the config's plugins before the preset's", async () => {
    const plugins = await pluginsFor({ ...rc({ preset: "./preset.mjs", plugins: [["./mine/own.mjs", { o: 1 }]] }), ...files });
    expect(plugins.map((plugin) => plugin.name)).toEqual(["own", "alpha", "beta"]);
    expect(plugins[0]?.options).toEqual({ o: 1 });
  });

  it("lets a config plugin replace the preset plugin of the same name", async () => {
    const plugins = await pluginsFor({ ...rc({ preset: "./preset.mjs", plugins: ["./mine/beta.mjs"] }), ...files });
    expect(plugins.map((plugin) => plugin.name)).toEqual(["beta", "alpha"]);
    expect((plugins[0] as Recorded & { mine?: boolean }).mine).toBe(true);
  });

  it("passes each factory a private copy of its options, which it may change", async () => {
    const mutating = 'export default (options) => { options.seen = true; return { name: "m", options, apply() {} }; };\n';
    const plugins = await pluginsFor({ ...rc({ preset: "./preset.mjs", plugins: [["./m.mjs", { a: 1 }]] }), ...files, "m.mjs": mutating });
    expect(plugins[0]?.options).toEqual({ a: 1, seen: true });
  });

  it("reports a factory that rejects its inline options as PLUGIN_OPTIONS_INVALID at the options' path", async () => {
    const strict = 'export default (options = {}) => { if (options.size !== undefined) throw new Error("size is not an option"); return { name: "strict", apply() {} }; };\n';
    const { error, root } = await failure({ ...rc({ preset: "./preset.mjs", plugins: [["./strict.mjs", { size: 1 }]] }), ...files, "strict.mjs": strict });
    expect(error.code).toBe(ErrorCodes.PLUGIN_OPTIONS_INVALID);
    expect(error.file).toBe(join(root, ".compactionrc.json"));
    expect(error.path).toBe("/plugins/0/1");
    expect(error.plugin).toBe("./strict.mjs");
    expect(error.message).toContain("size is not an option");
    expect(error.hint).toContain("/plugins/0/1");
  });

  it("reports options from an agent's options section that a factory rejects at that section's path", async () => {
    const strict = 'export default (options = {}) => { if (options.size !== undefined) throw new Error("size is not an option"); return { name: "strict", apply() {} }; };\n';
    const config = { preset: "./preset.mjs", plugins: ["./strict.mjs"], agents: { coder: { options: { strict: { size: 2 } } } } };
    const { error } = await failure({ ...rc(config), ...files, "strict.mjs": strict }, "coder");
    expect(error.code).toBe(ErrorCodes.PLUGIN_OPTIONS_INVALID);
    expect(error.path).toBe("/agents/coder/options/strict");
    expect(error.plugin).toBe("strict");
  });

  it("rejects a factory that does not return a plugin as PLUGIN_INVALID", async () => {
    const { error } = await failure({ ...rc({ preset: "./preset.mjs", plugins: ["./bad.mjs"] }), ...files, "bad.mjs": "export default () => 42;\n" });
    expect(error.code).toBe(ErrorCodes.PLUGIN_INVALID);
    expect(error.path).toBe("/plugins/0");
    expect(error.message).toContain("expected a plugin object { name, apply(compactor) }");
  });

  it("reports a missing config plugin at its entry's path", async () => {
    const { error } = await failure({ ...rc({ preset: "./preset.mjs", plugins: [["last-turn-injecton", { maxTokens: 1 }]] }), ...files });
    expect(error.code).toBe(ErrorCodes.PLUGIN_NOT_FOUND);
    expect(error.path).toBe("/plugins/0/0");
    expect(error.hint).toContain("Did you mean 'last-turn-injection'?");
  });
});

describe("resolvePlugins: options keys (issue 13: a misspelt plugin name was silently ignored)", () => {
  it("rejects an options key that names no applied plugin, suggesting the nearest", async () => {
    const { error, root } = await failure({ ".compactionrc.yaml": "options:\n  safegard:\n    keepRecentTokens: 5000\n" });
    expect(error.code).toBe(ErrorCodes.CONFIG_INVALID);
    expect(error.file).toBe(join(root, ".compactionrc.yaml"));
    expect(error.path).toBe("/options/safegard");
    expect(error.message).toContain("safeguard, last-turn-injection");
    expect(error.hint).toBe("Did you mean 'safeguard'?");
  });

  it("accepts a key for a shipped plugin the preset in force does not apply (hosts read options.layered)", async () => {
    const plugins = await pluginsFor(rc({ preset: "safeguard", options: { layered: { pruneThreshold: 0.7 } } }));
    expect(plugins.map((plugin) => plugin.name)).toEqual(["summarizer-extractive", "safeguard", "last-turn-injection"]);
  });

  it("rejects a key naming no plugin at all, listing the plugins applied when nothing is near", async () => {
    const { error } = await failure(rc({ options: { "my-custom-thing": {} } }));
    expect(error.path).toBe("/options/my-custom-thing");
    expect(error.message).toContain("applied here: summarizer-extractive, safeguard, last-turn-injection");
    expect(error.hint).toContain("add 'my-custom-thing' to plugins");
  });

  it("points at the agent's section when the bad key is set there", async () => {
    const { error } = await failure(rc({ agents: { coder: { options: { layerd: {} } } } }), "coder");
    expect(error.path).toBe("/agents/coder/options/layerd");
  });

  it("accepts a top-level key meant for a plugin an agent section's preset applies", async () => {
    const plugins = await pluginsFor(rc({ preset: "safeguard", options: { rolling: { minKeepMessages: 20 } }, agents: { researcher: { preset: "rolling" } } }));
    expect(plugins.map((plugin) => plugin.name)).toEqual(["summarizer-extractive", "safeguard", "last-turn-injection"]);
  });

  it("accepts a key naming a path plugin by the name it gives itself", async () => {
    const plugins = await pluginsFor({ ...rc({ plugins: ["./alpha.mjs"], options: { alpha: { a: 2 } } }), "alpha.mjs": recordingPluginSource("alpha") });
    expect(plugins[0]?.options).toEqual({ a: 2 });
  });

  it("still rejects a typo at the top level when agent sections exist", async () => {
    const { error } = await failure(rc({ options: { rolingg: {} }, agents: { researcher: { preset: "rolling" } } }));
    expect(error.hint).toBe("Did you mean 'rolling'?");
  });
});

describe("resolvePlugins: every section's names (issue 43: agents.coder.preset: layerd failed only with --agent coder)", () => {
  const config = rc({ preset: "safeguard", agents: { researcher: { preset: "rolling" }, coder: { preset: "layerd", plugins: ["./mine.mjs", ["last-turn-injecton", {}]] } } });
  const files = { ...config, "mine.mjs": recordingPluginSource("mine") };

  it.each([
    ["no agent", undefined],
    ["another agent", "researcher"],
    ["an agent with no section", "reviewer"],
  ])("reports a misspelt preset in an agent's section at its JSON path, with a did-you-mean, whichever agent runs: %s", async (_case, agent) => {
    const { error, root } = await failure(files, agent);
    expect(error.code).toBe(ErrorCodes.PLUGIN_NOT_FOUND);
    expect(error.file).toBe(join(root, ".compactionrc.json"));
    expect(error.path).toBe("/agents/coder/preset");
    expect(error.message).toBe(`Cannot find preset 'layerd' (named at /agents/coder/preset in ${join(root, ".compactionrc.json")}).`);
    expect(error.hint).toMatch(/^Every preset and plugin the config names must resolve, whichever agent runs \(this one is in the section of agent 'coder'\)\. Did you mean 'layered'\?/);
  });

  it("reports a misspelt plugin in another agent's section at its entry's name", async () => {
    const { error } = await failure({ ...rc({ agents: { coder: { plugins: ["./mine.mjs", ["last-turn-injecton", {}]] } } }), "mine.mjs": recordingPluginSource("mine") });
    expect(error.path).toBe("/agents/coder/plugins/1/0");
    expect(error.hint).toContain("Did you mean 'last-turn-injection'?");
  });

  it("reports a missing plugin file in another agent's section", async () => {
    const { error } = await failure(rc({ agents: { coder: { plugins: ["./missing.mjs"] } } }));
    expect(error.path).toBe("/agents/coder/plugins/0");
    expect(error.message).toContain("Cannot find plugin './missing.mjs'");
  });

  it("reports a misspelt top-level preset when the agent that runs names its own", async () => {
    const { error } = await failure(rc({ preset: "safegaurd", agents: { coder: { preset: "layered" } } }), "coder");
    expect(error.path).toBe("/preset");
    expect(error.hint).toContain("this one is at the top level");
  });

  it("resolves the other sections' names without importing them: no other agent's code runs", async () => {
    const root = makeProject({ ...rc({ agents: { coder: { plugins: ["./throws.mjs"] } } }), "throws.mjs": 'throw new Error("imported");\n' });
    expect((await pluginsFor({}, undefined, root)).map((plugin) => plugin.name)).toEqual(["summarizer-extractive", "safeguard", "last-turn-injection"]);
  });

  it("does not ask for the default preset when the file sets none and an agent names its own", async () => {
    const plugins = await pluginsFor(rc({ agents: { coder: { preset: "layered" } } }), "coder");
    expect(plugins.map((plugin) => plugin.name)).toContain("layered");
  });
});

describe("resolvePlugins: TypeScript plugin files", () => {
  it("loads ./my-plugin.ts the way a .compactionrc.ts is loaded, and leaves no compiled file behind", async () => {
    const source = 'import type { CompactionPlugin } from "@compaction/core";\nexport default function typed(options: { n?: number } = {}): CompactionPlugin & { options: unknown } {\n  return { name: "typed", options, apply() {} };\n}\n';
    const root = makeProject({ ...rc({ plugins: [["./my-plugin.ts", { n: 1 }]] }), "my-plugin.ts": source });
    const plugins = await pluginsFor({}, undefined, root);
    expect(plugins[0]?.name).toBe("typed");
    expect(plugins[0]?.options).toEqual({ n: 1 });
    expect(readdirSync(root).filter((name) => name.endsWith(".mjs"))).toEqual([]);
  });
});
