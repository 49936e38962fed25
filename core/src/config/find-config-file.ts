/**
 * Finding and reading the config file. Trusted: cosmiconfig, as it always was. Untrusted: the
 * same search places in the same order, but read here, as data only: cosmiconfig's explorer
 * would import a code file it finds, and every `cosmiconfig()` call also looks for a "meta
 * config" (`.config/config.js`, `.ts`, ...) in `process.cwd()` and runs it.
 */
import { statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { ErrorCodes } from "../errors.js";
import { ConfigError, configUnreadable } from "./config-error.js";
import { loadCosmiconfig } from "./cosmiconfig.js";
import { isPlainObject } from "./plain-data.js";
import { isCodeConfigFile, type ConfigWarning, type ProjectBoundary, untrustedConfigFileWarning } from "./project-trust.js";

/** The name cosmiconfig searches for: `.compactionrc*`, `compaction.config.*`, `package.json#compaction`. */
export const CONFIG_MODULE_NAME = "compaction";

/** What was found: the file and its contents (null: no file, all defaults), and what was skipped. */
export interface FoundConfigFile {
  readonly filepath: string | null;
  readonly config: unknown;
  readonly warnings: readonly ConfigWarning[];
}

/**
 * The config for `cwd` (or the file `configPath`, relative to `cwd`). With a `boundary` (the
 * project is untrusted), code files are not loaded: the file the search would load being code
 * means defaults (the search does not fall through to another file), with a warning.
 */
export async function findConfigFile(cwd: string, configPath: string | undefined, boundary: ProjectBoundary | null): Promise<FoundConfigFile> {
  const target = configPath === undefined ? undefined : resolve(cwd, configPath);
  try {
    if (boundary === null) return await findTrusted(cwd, target);
    return await findDataOnly(cwd, target, boundary);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    if (target !== undefined && (error as NodeJS.ErrnoException).code === "ENOENT" && (error as { path?: unknown }).path === target) {
      throw new ConfigError(
        ErrorCodes.CONFIG_UNREADABLE,
        [{ path: "", message: "no such file", hint: `Check configPath: it is resolved against cwd (${cwd}).` }],
        { file: target, cause: error },
      );
    }
    const file = (error as { filepath?: unknown }).filepath;
    throw configUnreadable(typeof file === "string" ? file : (target ?? cwd), error);
  }
}

async function findTrusted(cwd: string, target: string | undefined): Promise<FoundConfigFile> {
  // One explorer per call: its caches live and die with it; nothing is kept between calls.
  const { cosmiconfig } = await loadCosmiconfig();
  const explorer = cosmiconfig(CONFIG_MODULE_NAME, { searchStrategy: "project" });
  const result = target === undefined ? await explorer.search(cwd) : await explorer.load(target);
  if (result === null) return { filepath: null, config: undefined, warnings: [] };
  return { filepath: result.filepath, config: result.isEmpty === true ? {} : result.config, warnings: [] };
}

const NOT_THERE = new Set(["ENOENT", "EISDIR", "ENOTDIR", "EACCES"]);

async function findDataOnly(cwd: string, target: string | undefined, boundary: ProjectBoundary): Promise<FoundConfigFile> {
  if (target !== undefined) {
    if (isCodeConfigFile(target)) return { filepath: null, config: undefined, warnings: [untrustedConfigFileWarning(target, boundary)] };
    const read = await readDataFile(target, await readText(target), boundary, []);
    return { filepath: target, config: read.config ?? {}, warnings: read.warnings };
  }
  const { getDefaultSearchPlaces } = await loadCosmiconfig();
  for (const dir of searchDirs(cwd)) {
    for (const place of getDefaultSearchPlaces(CONFIG_MODULE_NAME)) {
      const file = join(dir.path, place);
      let text: string;
      try {
        text = await readText(file);
      } catch (error) {
        if (NOT_THERE.has((error as NodeJS.ErrnoException).code ?? "")) continue;
        throw error;
      }
      // cosmiconfig passes over empty files (ignoreEmptySearchPlaces) before choosing a loader.
      if (text.trim() === "") continue;
      if (isCodeConfigFile(file)) return { filepath: null, config: undefined, warnings: [untrustedConfigFileWarning(file, boundary)] };
      const read = await readDataFile(file, text, boundary, []);
      if (read.config === undefined || read.config === null) continue;
      return { filepath: file, config: read.config, warnings: read.warnings };
    }
    if (dir.last) break;
  }
  return { filepath: null, config: undefined, warnings: [] };
}

/** cosmiconfig's "project" strategy: `cwd`, then each parent, ending at the first holding package.json or package.yaml. */
function* searchDirs(cwd: string): Generator<{ path: string; last: boolean }> {
  let dir = resolve(cwd);
  for (;;) {
    const parent = dirname(dir);
    const last = hasPackageFile(dir) || parent === dir;
    yield { path: dir, last };
    if (last) return;
    dir = parent;
  }
}

function hasPackageFile(dir: string): boolean {
  return ["package.json", "package.yaml"].some((name) => fileExists(join(dir, name)));
}

function fileExists(file: string): boolean {
  try {
    return statSync(file) !== undefined;
  } catch {
    return false;
  }
}

async function readText(file: string): Promise<string> {
  return readFile(file, "utf8");
}

/**
 * Parses a data file (JSON or YAML; `package.json` -> its `compaction` key) and follows its
 * `$import`s as cosmiconfig does (imported files first, then the file's own keys; objects merge,
 * arrays concatenate), leaving out an imported file that is code, with a warning.
 */
async function readDataFile(file: string, text: string, boundary: ProjectBoundary, stack: readonly string[]): Promise<{ config: unknown; warnings: ConfigWarning[] }> {
  let parsed: unknown;
  try {
    const { defaultLoaders } = await loadCosmiconfig();
    const loader = file.endsWith(".json") ? defaultLoaders[".json"] : defaultLoaders[".yaml"];
    parsed = text.trim() === "" ? undefined : await loader(file, text);
  } catch (error) {
    (error as { filepath?: string }).filepath = file;
    throw error;
  }
  if (basename(file) === "package.json") parsed = isPlainObject(parsed) ? parsed[CONFIG_MODULE_NAME] : undefined;
  if (!isPlainObject(parsed) || !Object.hasOwn(parsed, "$import")) return { config: parsed, warnings: [] };

  const { $import: imports, ...own } = parsed;
  const warnings: ConfigWarning[] = [];
  const layers: unknown[] = [];
  for (const request of Array.isArray(imports) ? imports : [imports]) {
    if (typeof request !== "string") throw Object.assign(new Error(`${file}: Key $import must contain a string or a list of strings`), { filepath: file });
    const imported = resolve(dirname(file), request);
    if (imported === file || stack.includes(imported)) throw Object.assign(new Error(`Circular $import of ${imported} in ${file}`), { filepath: file });
    if (isCodeConfigFile(imported)) {
      warnings.push(untrustedConfigFileWarning(imported, boundary, file));
      continue;
    }
    const read = await readDataFile(imported, await readText(imported), boundary, [...stack, file]);
    warnings.push(...read.warnings);
    layers.push(read.config);
  }
  return { config: [...layers, own].reduce((target: Record<string, unknown>, source) => (isPlainObject(source) ? mergeImported(target, source) : target), {}), warnings };
}

/** cosmiconfig's `$import` merge: objects merge per key, arrays concatenate, anything else is replaced. */
function mergeImported(target: Record<string, unknown>, source: Record<string, unknown>): Record<string, unknown> {
  for (const key of Object.keys(source)) {
    if (key === "__proto__" || key === "constructor") continue;
    const before = target[key];
    const value = source[key];
    if (Object.hasOwn(target, key) && Array.isArray(before) && Array.isArray(value)) target[key] = [...before, ...value];
    else if (Object.hasOwn(target, key) && isPlainObject(before) && isPlainObject(value)) target[key] = mergeImported({ ...before }, value);
    else target[key] = value;
  }
  return target;
}
