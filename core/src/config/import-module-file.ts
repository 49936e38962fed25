/**
 * Importing a plugin or preset file the way the config file itself is loaded: JavaScript with
 * Node's `import()`; TypeScript (`.ts`, `.mts`, `.cts`) with cosmiconfig's own TypeScript loader,
 * the one that loads `.compactionrc.ts` (it compiles the file with the `typescript` package next
 * to it, imports the result and removes it), so a plugin file loads wherever its config does.
 * That loader gives the module's default export, so a TypeScript plugin or preset exports its
 * factory or preset as default.
 */
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { loadCosmiconfig } from "./cosmiconfig.js";

const TYPESCRIPT = /\.[cm]?ts$/i;

/** True for a file that is compiled before it is imported. */
export function isTypeScriptFile(file: string): boolean {
  return TYPESCRIPT.test(file) && !/\.d\.[cm]?ts$/i.test(file);
}

/** The module namespace of `file` (an absolute path); for TypeScript, `{ default }`. */
export async function importModuleFile(file: string): Promise<Record<string, unknown>> {
  if (!isTypeScriptFile(file)) return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const { defaultLoaders } = await loadCosmiconfig();
  const loadTs = defaultLoaders[".ts"];
  const value: unknown = await loadTs(file, await readFile(file, "utf8"));
  return { default: value };
}

/** Node's messages for `import` or `export` in a file it parses as CommonJS. */
const ESM_SYNTAX_IN_COMMONJS = /^(?:Cannot use import statement outside a module|Unexpected token 'export')/;

/**
 * The fix for a plugin or preset file written as an ES module (`import`, `export`) that Node
 * loads as CommonJS: a `.cjs` file, or a `.js` file whose package.json (the nearest one above
 * it, as Node looks) does not say `"type": "module"`, as in a project made with `npm init`.
 * Node's own error ("Cannot use import statement outside a module") says neither why nor where.
 * Undefined for any other error, or a file Node loads as an ES module (whose syntax error is
 * its own).
 */
export function moduleFormatHint(file: string, error: unknown): string | undefined {
  if (!(error instanceof SyntaxError) || !ESM_SYNTAX_IN_COMMONJS.test(error.message)) return undefined;
  const name = basename(file);
  const mjs = `${name.replace(/\.c?js$/i, "")}.mjs`;
  if (/\.cjs$/i.test(file)) return `${name} uses import/export, but a .cjs file is always CommonJS: rename it to ${mjs}.`;
  if (!/\.js$/i.test(file)) return undefined;
  const scope = packageScope(dirname(file));
  if (scope?.type === "module") return undefined;
  const why =
    scope === null
      ? "no package.json above it says \"type\": \"module\""
      : `${scope.file} ${scope.type === undefined ? "has no \"type\" field" : `says "type": ${JSON.stringify(scope.type)}`}`;
  const fix = scope === null ? `add a package.json with "type": "module" to ${dirname(file)}` : `add "type": "module" to ${scope.file}`;
  return `${name} uses import/export, but Node loads it as CommonJS (${why}): rename it to ${mjs}, or ${fix}.`;
}

/** The package.json that decides how Node loads a `.js` file in `dir` (the nearest one above it), and its `type`. */
function packageScope(dir: string): { readonly file: string; readonly type: unknown } | null {
  for (let at = dir; ; at = dirname(at)) {
    const file = join(at, "package.json");
    let text: string | undefined;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      // No package.json here: Node looks in the folder above.
    }
    if (text !== undefined) {
      try {
        return { file, type: (JSON.parse(text) as { type?: unknown }).type };
      } catch {
        return { file, type: undefined };
      }
    }
    if (dirname(at) === at) return null;
  }
}
