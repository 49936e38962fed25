import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCodes } from "../errors.js";
import { makeProject, recordingPluginSource, removeProjects } from "../testing/tmp-project.js";
import { candidateIds, isPathName, resolvePlugin, resolvePreset, shortName } from "./resolve-module.js";
import { rejection } from "../testing/rejection.js";

afterEach(removeProjects);


/** A fake installed package `node_modules/<name>/` whose main file is `source`. */
function fakePackage(name: string, source: string, main = "index.js"): Record<string, string> {
  return {
    [`node_modules/${name}/package.json`]: JSON.stringify({ name, version: "1.0.0", main }),
    [`node_modules/${name}/${main}`]: source,
  };
}

const CJS_FACTORY = 'module.exports = function factory(options) { return { name: "x", options, apply() {} }; };\n';

describe("candidateIds", () => {
  it.each<[string, "plugin" | "preset", string[]]>([
    ["rolling", "plugin", ["@compaction/plugin-rolling", "compaction-plugin-rolling"]],
    ["rolling", "preset", ["@compaction/preset-rolling", "compaction-preset-rolling"]],
    ["compaction-plugin-x", "plugin", ["compaction-plugin-x"]],
    ["@acme/compaction-thing", "plugin", ["@acme/compaction-thing"]],
    ["some/deep/file", "plugin", ["some/deep/file"]],
    ["./local.js", "plugin", ["./local.js"]],
    ["../up.mjs", "preset", ["../up.mjs"]],
    ["/abs/plugin.js", "plugin", ["/abs/plugin.js"]],
  ])("maps %s (%s) to %j", (name, kind, ids) => {
    expect(candidateIds(kind, name)).toEqual(ids);
  });

  it("tells paths from package names", () => {
    expect(["./a.js", "../a.js", "/a.js", ".", ".."].every(isPathName)).toBe(true);
    expect(["a", "@s/a", ".hidden", "a/b"].some(isPathName)).toBe(false);
  });

  it("strips this project's prefixes to get a short name", () => {
    expect(shortName("plugin", "@compaction/plugin-rolling")).toBe("rolling");
    expect(shortName("plugin", "compaction-plugin-rolling")).toBe("rolling");
    expect(shortName("preset", "compaction-preset-layered")).toBe("layered");
    expect(shortName("plugin", "@acme/other")).toBe("@acme/other");
  });
});

describe("resolvePlugin", () => {
  it("resolves a relative path from the given directory", async () => {
    const root = makeProject({ "compaction/my-plugin.mjs": recordingPluginSource("mine") });
    const loaded = await resolvePlugin("./compaction/my-plugin.mjs", root);
    expect(loaded.file).toBe(join(root, "compaction", "my-plugin.mjs"));
    expect(loaded.factory({ a: 1 })).toMatchObject({ name: "mine", options: { a: 1 } });
  });

  it("resolves an absolute path as itself", async () => {
    const root = makeProject({ "elsewhere/p.mjs": recordingPluginSource("abs") });
    const loaded = await resolvePlugin(join(root, "elsewhere", "p.mjs"), "/");
    expect(loaded.factory().name).toBe("abs");
  });

  it("resolves a full package name from node_modules, reading a CommonJS default export", async () => {
    const root = makeProject(fakePackage("compaction-plugin-x", CJS_FACTORY));
    const loaded = await resolvePlugin("compaction-plugin-x", root);
    expect(loaded.id).toBe("compaction-plugin-x");
    expect(loaded.file).toBe(join(root, "node_modules", "compaction-plugin-x", "index.js"));
    expect(loaded.name).toBe("x");
    expect(loaded.factory({ k: 1 })).toMatchObject({ name: "x", options: { k: 1 } });
  });

  it("resolves a short name to compaction-plugin-<name> when no scoped package exists", async () => {
    const root = makeProject(fakePackage("compaction-plugin-tmp-short", CJS_FACTORY));
    const loaded = await resolvePlugin("tmp-short", root);
    expect(loaded.id).toBe("compaction-plugin-tmp-short");
    expect(loaded.name).toBe("tmp-short");
  });

  it("prefers @compaction/plugin-<name> over compaction-plugin-<name>", async () => {
    const root = makeProject({
      ...fakePackage("compaction-plugin-tmp-both", CJS_FACTORY),
      ...fakePackage("@compaction/plugin-tmp-both", CJS_FACTORY),
    });
    expect((await resolvePlugin("tmp-both", root)).id).toBe("@compaction/plugin-tmp-both");
  });

  it("resolves a package from cwd when the config's directory does not have it", async () => {
    const root = makeProject(fakePackage("compaction-plugin-tmp-cwd", CJS_FACTORY));
    const configDir = makeProject();
    const loaded = await resolvePlugin("tmp-cwd", configDir, { cwd: root });
    expect(loaded.file).toBe(join(root, "node_modules", "compaction-plugin-tmp-cwd", "index.js"));
  });

  it("accepts a named export 'plugin' when there is no default export", async () => {
    const root = makeProject({ "p.mjs": 'export function plugin() { return { name: "named", apply() {} }; }\n' });
    expect((await resolvePlugin("./p.mjs", root)).factory().name).toBe("named");
  });

  it("lists every id tried and from where when a plugin is missing, suggesting the nearest built-in", async () => {
    const root = makeProject();
    const error = await rejection(resolvePlugin("rollin", root, { cwd: root, file: join(root, ".compactionrc"), path: "/plugins/0" }));
    expect(error.code).toBe(ErrorCodes.PLUGIN_NOT_FOUND);
    expect(error.file).toBe(join(root, ".compactionrc"));
    expect(error.path).toBe("/plugins/0");
    expect(error.plugin).toBe("rollin");
    // One line of message; what was tried is in the hint.
    expect(error.message).toBe(`Cannot find plugin 'rollin' (named at /plugins/0 in ${join(root, ".compactionrc")}).`);
    expect(error.hint).toContain(`@compaction/plugin-rollin from ${root}`);
    expect(error.hint).toContain(`compaction-plugin-rollin from ${root}`);
    expect(error.hint).toContain("(@compaction/core)");
    expect(error.hint).toContain("Did you mean 'rolling'?");
  });

  it("says where a missing relative path was looked for", async () => {
    const root = makeProject();
    const error = await rejection(resolvePlugin("./nope.js", root));
    expect(error.code).toBe(ErrorCodes.PLUGIN_NOT_FOUND);
    expect(error.hint).toContain(`./nope.js from ${root}`);
    expect(error.hint).toContain(`relative to ${root}`);
  });

  it("rejects a module without a factory as PLUGIN_INVALID, naming the file and what it exports", async () => {
    const root = makeProject({ "p.mjs": "export const helper = 1;\nexport default { name: 'p', apply() {} };\n" });
    const error = await rejection(resolvePlugin("./p.mjs", root, { path: "/plugins/2" }));
    expect(error.code).toBe(ErrorCodes.PLUGIN_INVALID);
    expect(error.path).toBe("/plugins/2");
    expect(error.message).toContain(join(root, "p.mjs"));
    expect(error.message).toContain("default (an object with keys name, apply)");
    expect(error.message).toContain("helper (a number)");
    expect(error.hint).toContain("Export a factory");
  });

  it("reports a module that throws while loading as PLUGIN_INVALID with its message", async () => {
    const root = makeProject({ "p.mjs": 'throw new Error("plugin exploded");\n' });
    const error = await rejection(resolvePlugin("./p.mjs", root));
    expect(error.code).toBe(ErrorCodes.PLUGIN_INVALID);
    expect(error.message).toContain("plugin exploded");
  });

  it("keeps the general hint for a syntax error in a file loaded as an ES module", async () => {
    const root = makeProject({ "package.json": JSON.stringify({ type: "module" }), "p.js": "export default () => ({ name: 'p', apply() { if (true) { export const x = 1; } } });\n" });
    const error = await rejection(resolvePlugin("./p.js", root));
    expect(error.code).toBe(ErrorCodes.PLUGIN_INVALID);
    expect(error.hint).toBe("Fix the error in that module; run it with node to see the full stack.");
  });
});

describe("resolvePreset", () => {
  it("resolves a short name to compaction-preset-<name> and reads its plugins list", async () => {
    const source = 'export default { plugins: ["rolling", ["./p.js", { a: 1 }]] };\n';
    const root = makeProject({
      [`node_modules/compaction-preset-tmp-p/package.json`]: JSON.stringify({ name: "compaction-preset-tmp-p", type: "module", main: "index.js" }),
      [`node_modules/compaction-preset-tmp-p/index.js`]: source,
    });
    const loaded = await resolvePreset("tmp-p", root);
    expect(loaded.id).toBe("compaction-preset-tmp-p");
    expect(loaded.preset.plugins).toEqual(["rolling", ["./p.js", { a: 1 }]]);
  });

  it("accepts a named export 'preset'", async () => {
    const root = makeProject({ "preset.mjs": "export const preset = { plugins: [] };\n" });
    expect((await resolvePreset("./preset.mjs", root)).preset.plugins).toEqual([]);
  });

  it("rejects a module without a preset object as PLUGIN_INVALID", async () => {
    const root = makeProject({ "preset.mjs": "export default ['rolling'];\n" });
    const error = await rejection(resolvePreset("./preset.mjs", root, { path: "/preset" }));
    expect(error.code).toBe(ErrorCodes.PLUGIN_INVALID);
    expect(error.path).toBe("/preset");
    expect(error.message).toContain("default (an array)");
  });

  it("suggests the nearest built-in preset when one is missing", async () => {
    const root = makeProject();
    const error = await rejection(resolvePreset("sliding-windw", root, { cwd: root }));
    expect(error.code).toBe(ErrorCodes.PLUGIN_NOT_FOUND);
    expect(error.message).not.toContain("\n");
    expect(error.hint).toContain("@compaction/preset-sliding-windw");
    expect(error.hint).toContain("Did you mean 'sliding-window'?");
  });
});
