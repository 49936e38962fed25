import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCodes } from "../errors.js";
import { ConfigError } from "./config-error.js";
import { loadConfig, type LoadConfigOptions } from "./load-config.js";
import { makeProject, removeProjects, writeFiles } from "../testing/tmp-project.js";

afterEach(removeProjects);

/** Runs loadConfig and returns the ConfigError it throws (failing the test if it does not throw one). */
async function loadError(options: LoadConfigOptions): Promise<ConfigError> {
  const error = await loadConfig(options).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ConfigError);
  return error as ConfigError;
}

const DEFAULTS = {
  agentSection: null,
  agentSections: [],
  trusted: true,
  warnings: [],
  applied: null,
  sources: expect.any(Object),
  preset: "safeguard",
  contextWindow: 200000,
  adapter: "pi",
  tokenizer: { counter: "tiktoken", encoding: "o200k_base" },
  summarizer: { name: "extractive", maxTokens: 4000 },
  autoCompact: { enabled: true },
  plugins: [],
  options: {},
};

describe("loadConfig: where the config is found", () => {
  const yaml = "contextWindow: 123456\n";
  const json = JSON.stringify({ contextWindow: 123456 });
  const cjs = "module.exports = { contextWindow: 123456 };\n";
  const esm = "export default { contextWindow: 123456 };\n";
  const ts = 'import type { CompactionConfig } from "@compaction/core";\nconst config: CompactionConfig = { contextWindow: 123456 };\nexport default config;\n';
  const places: ReadonlyArray<readonly [label: string, file: string, text: string]> = [
    [".compactionrc (YAML)", ".compactionrc", yaml],
    [".compactionrc (JSON)", ".compactionrc", json],
    [".compactionrc.json", ".compactionrc.json", json],
    [".compactionrc.yaml", ".compactionrc.yaml", yaml],
    [".compactionrc.yml", ".compactionrc.yml", yaml],
    [".compactionrc.js", ".compactionrc.js", cjs],
    [".compactionrc.mjs", ".compactionrc.mjs", esm],
    [".compactionrc.cjs", ".compactionrc.cjs", cjs],
    [".compactionrc.ts", ".compactionrc.ts", ts],
    ["compaction.config.js", "compaction.config.js", cjs],
    ["compaction.config.mjs", "compaction.config.mjs", esm],
    ["compaction.config.cjs", "compaction.config.cjs", cjs],
    ["compaction.config.ts", "compaction.config.ts", ts],
  ];

  it.each(places)("finds %s", async (_label, file, text) => {
    const root = makeProject({ [file]: text });
    const config = await loadConfig({ cwd: root });
    expect(config.filepath).toBe(join(root, file));
    expect(config.contextWindow).toBe(123456);
  });

  it('finds the "compaction" key of package.json', async () => {
    const root = makeProject({ "package.json": JSON.stringify({ name: "x", compaction: { contextWindow: 123456 } }) });
    const config = await loadConfig({ cwd: root });
    expect(config.filepath).toBe(join(root, "package.json"));
    expect(config.contextWindow).toBe(123456);
  });

  it("finds a config in a parent directory of cwd, up to the project root", async () => {
    const root = makeProject({ ".compactionrc.json": JSON.stringify({ preset: "rolling" }), "src/deep/.keep": "" });
    const config = await loadConfig({ cwd: join(root, "src", "deep") });
    expect(config.filepath).toBe(join(root, ".compactionrc.json"));
    expect(config.preset).toBe("rolling");
  });

  it("stops searching at the nearest package.json", async () => {
    const root = makeProject({ ".compactionrc.json": JSON.stringify({ preset: "rolling" }) });
    writeFiles(root, { "inner/package.json": JSON.stringify({ name: "inner" }) });
    const config = await loadConfig({ cwd: join(root, "inner") });
    expect(config.filepath).toBeNull();
  });

  it("loads the file named by configPath, relative to cwd, whatever its name", async () => {
    const root = makeProject({ "configs/team.yaml": "preset: layered\n", ".compactionrc.json": JSON.stringify({ preset: "rolling" }) });
    const config = await loadConfig({ cwd: root, configPath: "configs/team.yaml" });
    expect(config.filepath).toBe(join(root, "configs", "team.yaml"));
    expect(config.preset).toBe("layered");
  });

  it("reports a configPath that does not exist as CONFIG_UNREADABLE with the file", async () => {
    const root = makeProject();
    const error = await loadError({ cwd: root, configPath: "missing.yaml" });
    expect(error.code).toBe(ErrorCodes.CONFIG_UNREADABLE);
    expect(error.file).toBe(join(root, "missing.yaml"));
    expect(error.hint).toContain(root);
  });
});

describe("loadConfig: defaults", () => {
  it("returns every default with filepath null when no config file exists", async () => {
    const config = await loadConfig({ cwd: makeProject() });
    expect(config).toEqual({ filepath: null, agent: null, ...DEFAULTS });
  });

  it("fills defaults around the keys a file sets, inside nested objects too", async () => {
    const root = makeProject({ ".compactionrc.json": JSON.stringify({ reserveTokens: 1000, tokenizer: { counter: "estimate" } }) });
    const config = await loadConfig({ cwd: root });
    expect(config).toEqual({
      filepath: join(root, ".compactionrc.json"),
      agent: null,
      ...DEFAULTS,
      reserveTokens: 1000,
      tokenizer: { counter: "estimate", encoding: "o200k_base" },
    });
  });

  it("treats an empty config file named by configPath as all defaults", async () => {
    const root = makeProject({ "empty.yaml": "" });
    const config = await loadConfig({ cwd: root, configPath: "empty.yaml" });
    expect(config).toEqual({ filepath: join(root, "empty.yaml"), agent: null, ...DEFAULTS });
  });

  it("accepts a $schema key and leaves it out of the resolved config", async () => {
    const root = makeProject({ ".compactionrc.json": JSON.stringify({ $schema: "./node_modules/@compaction/core/schema/compaction.schema.json", preset: "rolling" }) });
    const config = await loadConfig({ cwd: root });
    expect(config.preset).toBe("rolling");
    expect(Object.keys(config)).not.toContain("$schema");
  });

  it("returns a deeply frozen config", async () => {
    const root = makeProject({ ".compactionrc.json": JSON.stringify({ options: { rolling: { minKeepMessages: 3 } } }) });
    const config = await loadConfig({ cwd: root });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.tokenizer)).toBe(true);
    expect(Object.isFrozen(config.options["rolling"])).toBe(true);
  });

  it("never writes defaults into a JS config module's own export", async () => {
    const root = makeProject({ "compaction.config.mjs": "export default { preset: 'rolling' };\n" });
    await loadConfig({ cwd: root });
    const module = (await import(pathToFileURL(join(root, "compaction.config.mjs")).href)) as { default: object };
    expect(module.default).toEqual({ preset: "rolling" });
  });
});

describe("loadConfig: agent sections", () => {
  const rc = {
    preset: "safeguard",
    contextWindow: 100000,
    tokenizer: { counter: "estimate" },
    plugins: ["top-plugin"],
    options: { rolling: { minKeepMessages: 10, keepRecentTokens: 5000 }, "my-plugin": { x: 1 } },
    agents: {
      researcher: {
        preset: "rolling",
        tokenizer: { encoding: "cl100k_base" },
        plugins: ["agent-plugin"],
        options: { rolling: { minKeepMessages: 20 }, "other-plugin": { y: 2 } },
      },
      coder: { preset: "layered" },
    },
  };

  async function load(agent?: string, preset?: string) {
    const root = makeProject({ ".compactionrc.json": JSON.stringify(rc) });
    return loadConfig({ cwd: root, ...(agent === undefined ? {} : { agent }), ...(preset === undefined ? {} : { preset }) });
  }

  it("applies no agent section when no agent is asked for", async () => {
    const config = await load();
    expect(config.agent).toBeNull();
    expect(config.preset).toBe("safeguard");
    expect(config.plugins).toEqual(["top-plugin"]);
  });

  it("replaces a top-level value with the value the agent section sets", async () => {
    const config = await load("researcher");
    expect(config.agent).toBe("researcher");
    expect(config.preset).toBe("rolling");
    expect(config.plugins).toEqual(["agent-plugin"]);
  });

  it("replaces a nested object whole, its missing keys taking their defaults", async () => {
    const config = await load("researcher");
    expect(config.tokenizer).toEqual({ counter: "tiktoken", encoding: "cl100k_base" });
  });

  it("keeps top-level values for keys the agent section does not set, not defaults", async () => {
    const config = await load("coder");
    expect(config.preset).toBe("layered");
    expect(config.contextWindow).toBe(100000);
    expect(config.tokenizer).toEqual({ counter: "estimate", encoding: "o200k_base" });
    expect(config.plugins).toEqual(["top-plugin"]);
  });

  it("lets a preset passed by the caller (e.g. --preset) win over the file and the agent's section", async () => {
    const config = await load("researcher", "layered");
    expect(config.preset).toBe("layered");
  });

  it("merges options per plugin name and then per option key, the agent winning", async () => {
    const config = await load("researcher");
    expect(config.options).toEqual({
      rolling: { minKeepMessages: 20, keepRecentTokens: 5000 },
      "my-plugin": { x: 1 },
      "other-plugin": { y: 2 },
    });
  });

  it("gives an agent without a section of its own the top-level settings (issue 13), saying no section applied", async () => {
    const root = makeProject({ ".compactionrc.json": JSON.stringify(rc) });
    const config = await loadConfig({ cwd: root, agent: "reviewer" });
    const topLevel = await loadConfig({ cwd: root });
    expect(config.agent).toBe("reviewer");
    expect(config.agentSection).toBeNull();
    expect(config.agentSections).toEqual(["researcher", "coder"]);
    expect({ ...config, agent: null }).toEqual(topLevel);
  });

  it("names the section it applied for an agent that has one", async () => {
    const root = makeProject({ ".compactionrc.json": JSON.stringify(rc) });
    const config = await loadConfig({ cwd: root, agent: "coder" });
    expect(config.agentSection).toBe("coder");
  });

  it("says where each setting came from: the agent's section, the top level, the caller, or the default", async () => {
    const root = makeProject({ ".compactionrc.json": JSON.stringify(rc) });
    const config = await loadConfig({ cwd: root, agent: "researcher" });
    expect(config.sources.preset).toEqual({ from: "file", path: "/agents/researcher/preset" });
    expect(config.sources.contextWindow).toEqual({ from: "file", path: "/contextWindow" });
    expect(config.sources.adapter).toEqual({ from: "default", path: null });
    expect((await loadConfig({ cwd: root, preset: "layered" })).sources.preset).toEqual({ from: "caller", path: null });
  });

  it("gives any agent the top-level settings when the file defines no agents at all", async () => {
    const root = makeProject({ ".compactionrc.json": JSON.stringify({ preset: "rolling" }) });
    const config = await loadConfig({ cwd: root, agent: "coder" });
    expect(config.preset).toBe("rolling");
    expect(config.agentSection).toBeNull();
    expect(config.agentSections).toEqual([]);
  });

  it("uses defaults for an agent when there is no config file at all", async () => {
    const config = await loadConfig({ cwd: makeProject(), agent: "coder" });
    expect(config).toEqual({ filepath: null, agent: "coder", ...DEFAULTS });
  });

  it("escapes agent names in JSON pointers", async () => {
    const root = makeProject({ ".compactionrc.json": JSON.stringify({ agents: { "team/a": { prest: "x" } } }) });
    const error = await loadError({ cwd: root });
    expect(error.path).toBe("/agents/team~1a/prest");
  });
});

describe("loadConfig: invalid configs", () => {
  async function invalid(rc: unknown, options: Partial<LoadConfigOptions> = {}): Promise<ConfigError> {
    const root = makeProject({ ".compactionrc.json": JSON.stringify(rc) });
    const error = await loadError({ cwd: root, ...options });
    expect(error.file).toBe(join(root, ".compactionrc.json"));
    return error;
  }

  it("reports a value of the wrong type, with what was expected and found", async () => {
    const error = await invalid({ contextWindow: "big" });
    expect(error.code).toBe(ErrorCodes.CONFIG_INVALID);
    expect(error.path).toBe("/contextWindow");
    expect(error.message).toContain('expected a whole number, found string "big"');
    expect(error.hint).toBe("Use a whole number, e.g. 200000.");
  });

  it("suggests the nearest property for a misspelled top-level key", async () => {
    const error = await invalid({ contextWindw: 100000 });
    expect(error.path).toBe("/contextWindw");
    expect(error.message).toContain("unknown property 'contextWindw'");
    expect(error.hint).toBe("Did you mean 'contextWindow'?");
  });

  it("suggests the nearest property for a misspelled key in an agent section", async () => {
    const error = await invalid({ agents: { coder: { prest: "layered" } } });
    expect(error.path).toBe("/agents/coder/prest");
    expect(error.hint).toBe("Did you mean 'preset'?");
  });

  it("rejects keys an agent section may not set ($schema, agents)", async () => {
    const error = await invalid({ agents: { coder: { agents: {}, $schema: "x" } } });
    expect(error.errors.map((problem) => problem.path)).toEqual(["/agents/coder/agents", "/agents/coder/$schema"]);
  });

  it("gives no suggestion for an unknown key far from every property", async () => {
    const error = await invalid({ zzzzzzzz: 1 });
    expect(error.hint).toBe("Remove 'zzzzzzzz' or rename it to one of the properties listed.");
    expect(error.message).toContain("expected one of: $schema, preset, contextWindow");
  });

  it("lists the allowed values of an enum and the nearest one", async () => {
    const error = await invalid({ adapter: "opena" });
    expect(error.path).toBe("/adapter");
    expect(error.message).toContain('expected one of "pi", "openai", "anthropic", found string "opena"');
    expect(error.hint).toBe('Did you mean \'openai\'? Allowed values: "pi", "openai", "anthropic".');
  });

  it("reports a bad enum inside a nested object at its full path", async () => {
    const error = await invalid({ agents: { coder: { tokenizer: { counter: "tiktokn" } } } });
    expect(error.path).toBe("/agents/coder/tokenizer/counter");
    expect(error.hint).toContain("Did you mean 'tiktoken'?");
  });

  it.each([
    [0, "greater than 0"],
    [1.5, "of at most 1"],
  ])("rejects autoCompact.threshold %s as out of range", async (threshold, bound) => {
    const error = await invalid({ autoCompact: { threshold } });
    expect(error.path).toBe("/autoCompact/threshold");
    expect(error.message).toContain(`expected a number ${bound}`);
  });

  it("rejects a plugin entry that is neither a name nor [name, options]", async () => {
    const error = await invalid({ plugins: [42] });
    expect(error.path).toBe("/plugins/0");
    expect(error.message).toContain("expected a string or an array, found integer 42");
  });

  it("rejects plugin options that are not an object, at the options' path", async () => {
    const error = await invalid({ plugins: [["rolling", 5]] });
    expect(error.errors).toHaveLength(1);
    expect(error.path).toBe("/plugins/0/1");
    expect(error.message).toContain("expected an object, found integer 5");
  });

  it("rejects a plugin entry with more than two items", async () => {
    const error = await invalid({ plugins: [["rolling", {}, {}]] });
    expect(error.path).toBe("/plugins/0");
    expect(error.message).toContain("expected [name] or [name, options], found an array of 3 items");
  });

  it("rejects options for a plugin that are not an object", async () => {
    const error = await invalid({ options: { rolling: true } });
    expect(error.path).toBe("/options/rolling");
  });

  it("rejects a file whose content is not an object", async () => {
    const root = makeProject({ ".compactionrc": "just a string\n" });
    const error = await loadError({ cwd: root });
    expect(error.path).toBe("");
    expect(error.message).toContain('(top level): expected an object, found string "just a string"');
  });

  it("reports every problem together, one per line of the message", async () => {
    const error = await invalid({ contextWindow: "big", contextWindw: 1, adapter: "opena", agents: { coder: { prest: "x" } } });
    expect(error.errors.map((problem) => problem.path).sort()).toEqual(["/adapter", "/agents/coder/prest", "/contextWindow", "/contextWindw"]);
    const lines = error.message.split("\n");
    expect(lines[0]).toContain("4 problems");
    for (const problem of error.errors) expect(lines.some((line) => line.trim().startsWith(`${problem.path}: ${problem.message}`))).toBe(true);
  });

  it("rejects a reserveTokens over half the agent's window, at the path that set it", async () => {
    const error = await invalid({ contextWindow: 100000, reserveTokens: 16384, agents: { small: { contextWindow: 8000 } } }, { agent: "small" });
    expect(error.path).toBe("/reserveTokens");
    expect(error.message).toContain("expected reserveTokens of at most half of contextWindow (8000), found 16384");
    expect(error.hint).toContain("at most 4000");
    expect(error.hint).toContain("leave it out (the reserve then follows the window: 1000 tokens at 8000)");
    expect(error.hint).toContain("/agents/small/contextWindow");
  });

  it("leaves reserveTokens unset when the file sets none, so a small window gets its own reserve", async () => {
    const root = makeProject({ ".compactionrc.json": JSON.stringify({ contextWindow: 8000 }) });
    const config = await loadConfig({ cwd: root });
    expect(config.reserveTokens).toBeUndefined();
    expect(config.sources.reserveTokens).toEqual({ from: "default", path: null });
  });

  it.each<[string, unknown]>([
    ["wrong type", { contextWindow: "big" }],
    ["misspelled key", { contextWindw: 1 }],
    ["misspelled agent key", { agents: { a: { prest: "x" } } }],
    ["bad enum", { adapter: "x" }],
    ["out of range", { reserveTokens: -1 }],
    ["empty string", { preset: "" }],
    ["several problems", { preset: 1, adapter: 2 }],
  ])("gives file, JSON path, code and hint for every problem (%s)", async (_label, rc) => {
    const error = await invalid(rc);
    expect(error.code).toBe(ErrorCodes.CONFIG_INVALID);
    expect(error.path).toMatch(/^\//);
    expect(error.hint).toEqual(expect.any(String));
    expect(error.errors.length).toBeGreaterThan(0);
    for (const problem of error.errors) {
      expect(problem.path).toMatch(/^\//);
      expect(problem.hint.length).toBeGreaterThan(0);
    }
  });
});

describe("loadConfig: unreadable files", () => {
  it("reports unparsable YAML as CONFIG_UNREADABLE with the file and line", async () => {
    const root = makeProject({ ".compactionrc.yaml": "preset: rolling\nplugins: [a\nagents: {}\n" });
    const error = await loadError({ cwd: root });
    expect(error.code).toBe(ErrorCodes.CONFIG_UNREADABLE);
    expect(error.file).toBe(join(root, ".compactionrc.yaml"));
    expect(error.line).toBe(3);
    expect(error.message).toContain("(line 3, column 1): missed comma between flow collection entries.");
    expect(error.path).toBe("");
    expect(error.hint).toContain("YAML");
  });

  it("reports unparsable JSON as CONFIG_UNREADABLE with the file and line", async () => {
    const root = makeProject({ ".compactionrc.json": '{\n  "preset": "rolling",\n}\n' });
    const error = await loadError({ cwd: root });
    expect(error.code).toBe(ErrorCodes.CONFIG_UNREADABLE);
    expect(error.file).toBe(join(root, ".compactionrc.json"));
    expect(error.line).toBe(3);
    expect(error.message).toBe(
      `Cannot read compaction config ${join(root, ".compactionrc.json")} (line 3, column 1): Expected double-quoted property name in JSON at position 25.`,
    );
    expect(error.hint).toContain("trailing commas");
  });

  it("reports a JS config that throws as CONFIG_UNREADABLE with the loader's message", async () => {
    const root = makeProject({ "compaction.config.mjs": 'throw new Error("boom from config");\n' });
    const error = await loadError({ cwd: root });
    expect(error.code).toBe(ErrorCodes.CONFIG_UNREADABLE);
    expect(error.file).toBe(join(root, "compaction.config.mjs"));
    expect(error.message).toContain("boom from config");
  });

  it("reports a TypeScript config that fails to load as CONFIG_UNREADABLE", async () => {
    const root = makeProject({ ".compactionrc.ts": 'const preset: string = "rolling";\nthrow new Error(`no ${preset} today`);\n' });
    const error = await loadError({ cwd: root });
    expect(error.code).toBe(ErrorCodes.CONFIG_UNREADABLE);
    expect(error.file).toBe(join(root, ".compactionrc.ts"));
    expect(error.message).toContain("no rolling today");
  });
});
