/**
 * Importing a plugin or preset file the way the config file itself is loaded: JavaScript with
 * Node's `import()`, TypeScript (`.ts`, `.mts`, `.cts`) compiled first with the `typescript`
 * package, as cosmiconfig compiles `.compactionrc.ts`: transpiled to a temporary `.mjs` next to
 * the file (so its imports resolve from the same folder), imported, and removed.
 */
import { randomUUID } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import { pathToFileURL } from "node:url";

const TYPESCRIPT = /\.[cm]?ts$/i;

/** True for a file this loader compiles before importing. */
export function isTypeScriptFile(file: string): boolean {
  return TYPESCRIPT.test(file) && !file.endsWith(".d.ts");
}

/** The module namespace of `file` (an absolute path). */
export async function importModuleFile(file: string): Promise<Record<string, unknown>> {
  if (!isTypeScriptFile(file)) return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const ts = await loadTypeScript(file);
  const source = await readFile(file, "utf8");
  const output = ts.transpileModule(source, {
    fileName: file,
    compilerOptions: {
      module: ts.ModuleKind.ES2022,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
    },
  }).outputText;
  const compiled = `${file}.${randomUUID()}.mjs`;
  await writeFile(compiled, output);
  try {
    return (await import(pathToFileURL(compiled).href)) as Record<string, unknown>;
  } finally {
    await rm(compiled, { force: true });
  }
}

type TypeScriptModule = typeof import("typescript");

async function loadTypeScript(file: string): Promise<TypeScriptModule> {
  try {
    const module = (await import("typescript")) as TypeScriptModule & { default?: TypeScriptModule };
    return module.default ?? module;
  } catch (error) {
    throw new Error(`${file} is TypeScript, and loading it needs the 'typescript' package (npm install --save-dev typescript), as a .compactionrc.ts does`, { cause: error });
  }
}
