/**
 * Importing a plugin or preset file the way the config file itself is loaded: JavaScript with
 * Node's `import()`; TypeScript (`.ts`, `.mts`, `.cts`) with cosmiconfig's own TypeScript loader,
 * the one that loads `.compactionrc.ts` (it compiles the file with the `typescript` package next
 * to it, imports the result and removes it), so a plugin file loads wherever its config does.
 * That loader gives the module's default export, so a TypeScript plugin or preset exports its
 * factory or preset as default.
 */
import { readFile } from "node:fs/promises";
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
