/**
 * The hint for a plugin file written as an ES module that Node loads as CommonJS. (Under vitest,
 * `import()` goes through vite's loader, which reads such a file anyway; the CLI's tests load
 * one with Node itself: cli/src/compact.test.ts.)
 */
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeProject, removeProjects } from "../testing/tmp-project.js";
import { moduleFormatHint } from "./import-module-file.js";

afterEach(removeProjects);

const IMPORT_ERROR = new SyntaxError("Cannot use import statement outside a module");
const EXPORT_ERROR = new SyntaxError("Unexpected token 'export'");

describe("moduleFormatHint", () => {
  it.each([
    ['has no "type" field', { name: "cjs-project" }, 'has no "type" field'],
    ['says "type": "commonjs" (npm init)', { name: "cjs-project", type: "commonjs" }, 'says "type": "commonjs"'],
  ])("for a .js file that uses import, whose package.json %s: rename it to .mjs, or add \"type\": \"module\" to that package.json", (_case, pkg, says) => {
    const root = makeProject({ "package.json": JSON.stringify(pkg), "compaction/p.js": "" });
    const manifest = join(root, "package.json");
    for (const error of [IMPORT_ERROR, EXPORT_ERROR]) {
      expect(moduleFormatHint(join(root, "compaction", "p.js"), error)).toBe(
        `p.js uses import/export, but Node loads it as CommonJS (${manifest} ${says}): rename it to p.mjs, or add "type": "module" to ${manifest}.`,
      );
    }
  });

  it("names the nearest package.json above the file, as Node does", () => {
    const root = makeProject({ "package.json": JSON.stringify({ type: "module" }), "tools/package.json": "{}", "tools/p.js": "" });
    expect(moduleFormatHint(join(root, "tools", "p.js"), IMPORT_ERROR)).toContain(`add "type": "module" to ${join(root, "tools", "package.json")}.`);
  });

  it("for a .cjs file: rename it to .mjs", () => {
    expect(moduleFormatHint("/x/p.cjs", EXPORT_ERROR)).toBe("p.cjs uses import/export, but a .cjs file is always CommonJS: rename it to p.mjs.");
  });

  it.each([
    ["a .js file under \"type\": \"module\" (its syntax error is its own)", "p.js", IMPORT_ERROR],
    ["a .mjs file", "p.mjs", EXPORT_ERROR],
    ["another error", "p.js", new SyntaxError("Unexpected identifier 'x'")],
    ["an error that is no SyntaxError", "p.js", new Error("Cannot use import statement outside a module")],
  ])("gives none for %s", (_case, name, error) => {
    const root = makeProject({ "package.json": JSON.stringify({ type: "module" }), [name]: "" });
    expect(moduleFormatHint(join(root, name), error)).toBeUndefined();
  });
});
