import { createRequire } from "node:module";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CompactionError, describeError, ErrorCodes } from "../errors.js";
import type { PluginFactory, Preset, PresetEntry } from "../compactor/plugin.js";
import { importModuleFile, moduleFormatHint } from "./import-module-file.js";
import { showPointer } from "./pointer.js";
import type { ProjectBoundary } from "./project-trust.js";
import { suggest } from "./suggest.js";

/** What a name can resolve to. */
export type ModuleKind = "preset" | "plugin";

/** Presets published by this project, for "did you mean" suggestions. */
export const BUILTIN_PRESETS: readonly string[] = Object.freeze(["safeguard", "rolling", "layered", "sliding-window"]);

/** Plugins published by this project, for "did you mean" suggestions. */
export const BUILTIN_PLUGINS: readonly string[] = Object.freeze(["rolling", "safeguard", "layered", "last-turn-injection"]);

/** A preset module's export (see `Preset`). */
export type PresetDefinition = Preset;

/** Where a name was written, for error messages. */
export interface ResolveContext {
  /** Also searched after `fromDir` (before core's own location). Default: `process.cwd()`. */
  readonly cwd?: string;
  /** The file that names the module (a config or preset file). */
  readonly file?: string;
  /** JSON pointer of the name inside that file, e.g. `/plugins/1/0`. */
  readonly path?: string;
  /** What named the module when no file does, for messages (e.g. "the preset option"). */
  readonly namedBy?: string;
  /**
   * Set when the project is not trusted: then a name that resolves to the project's code is
   * not imported, and UntrustedModuleSkipped is thrown instead (see resolveWithinTrust).
   */
  readonly boundary?: ProjectBoundary;
}

/** Thrown instead of importing a module that is the untrusted project's code. */
export class UntrustedModuleSkipped extends Error {
  constructor(
    readonly kind: ModuleKind,
    readonly request: string,
    /** The file the name resolved to. */
    readonly file: string,
  ) {
    super(`${kind} '${request}' (${file}) is the untrusted project's code`);
    this.name = "UntrustedModuleSkipped";
  }
}

/** A module file found for a name. */
export interface ResolvedModuleFile {
  /** The name as written. */
  readonly request: string;
  /** The id that resolved (a package name or an absolute path). */
  readonly id: string;
  /** Absolute path of the module's entry file. */
  readonly file: string;
}

export interface LoadedPlugin extends ResolvedModuleFile {
  /** The short name options are keyed by (`@compaction/plugin-rolling` -> `rolling`); a path keeps its text. */
  readonly name: string;
  readonly factory: PluginFactory<any>;
}

export interface LoadedPreset extends ResolvedModuleFile {
  readonly name: string;
  readonly preset: PresetDefinition;
}

/** Core's own directory: the last place packages are looked for (workspace siblings resolve). */
const CORE_LOCATION = `${dirname(fileURLToPath(import.meta.url))} (@compaction/core)`;

const PREFIXES: Readonly<Record<ModuleKind, readonly [scoped: string, unscoped: string]>> = {
  preset: ["@compaction/preset-", "compaction-preset-"],
  plugin: ["@compaction/plugin-", "compaction-plugin-"],
};

/** True for `./x`, `../x` and absolute paths: names that point at a file, not a package. */
export function isPathName(name: string): boolean {
  return isAbsolute(name) || /^\.\.?(?:[/\\]|$)/.test(name);
}

/**
 * The ids a name may stand for, in the order they are tried: a short name `rolling` ->
 * `@compaction/plugin-rolling`, `compaction-plugin-rolling`; a path or full package name
 * (scoped, containing '/', or already prefixed) -> itself.
 */
export function candidateIds(kind: ModuleKind, name: string): string[] {
  const [scoped, unscoped] = PREFIXES[kind];
  if (isPathName(name) || name.startsWith("@") || name.includes("/") || name.startsWith(unscoped)) return [name];
  return [`${scoped}${name}`, `${unscoped}${name}`];
}

/** The short name of a package name: the name without this project's prefixes. */
export function shortName(kind: ModuleKind, name: string): string {
  for (const prefix of PREFIXES[kind]) if (name.startsWith(prefix) && name.length > prefix.length) return name.slice(prefix.length);
  return name;
}

/**
 * Finds the file for a name. Paths resolve from `fromDir` only; packages from `fromDir`, then
 * `cwd`, then core's own location (so packages installed next to core resolve).
 * Throws COMPACTION_PLUGIN_NOT_FOUND listing every id tried and from where.
 */
export function resolveModuleFile(kind: ModuleKind, name: string, fromDir: string, context: ResolveContext = {}): ResolvedModuleFile {
  const tried: string[] = [];
  const ids = candidateIds(kind, name);
  const bases: Array<{ label: string; require: NodeJS.Require }> = [{ label: fromDir, require: requireFrom(fromDir) }];
  if (!isPathName(name)) {
    const cwd = resolve(context.cwd ?? process.cwd());
    if (cwd !== fromDir) bases.push({ label: cwd, require: requireFrom(cwd) });
    bases.push({ label: CORE_LOCATION, require: createRequire(import.meta.url) });
  }
  for (const id of ids) {
    for (const base of bases) {
      try {
        return { request: name, id, file: base.require.resolve(id) };
      } catch (error) {
        tried.push(`${id} from ${base.label}${notFoundReason(error)}`);
      }
    }
  }
  throw notFound(kind, name, fromDir, tried, context);
}

/**
 * Resolution for an untrusted project. Package names resolve from the folder naming them only
 * when that folder is outside the project (a trusted preset's own dependencies), then from
 * core's own location (built-ins and what the host installed next to core) and from the
 * user's home directory; a file found there inside the project is skipped, except from
 * core's location (the host's own installation). Paths written in the project's own config are
 * never loaded when relative; absolute ones only when they point outside the project. A name
 * that resolves only inside the project throws UntrustedModuleSkipped naming that file.
 */
export function resolveWithinTrust(kind: ModuleKind, name: string, fromDir: string, context: ResolveContext & { readonly boundary: ProjectBoundary }): ResolvedModuleFile {
  const { boundary } = context;
  if (isPathName(name)) {
    const resolved = resolveModuleFile(kind, name, fromDir, context);
    const namedByProject = context.file === undefined || boundary.contains(context.file);
    if ((namedByProject && !isAbsolute(name)) || boundary.contains(resolved.file)) throw new UntrustedModuleSkipped(kind, name, resolved.file);
    return resolved;
  }
  const bases: Array<{ label: string; require: NodeJS.Require; host: boolean }> = [];
  if (!boundary.contains(fromDir)) bases.push({ label: fromDir, require: requireFrom(fromDir), host: false });
  bases.push({ label: CORE_LOCATION, require: createRequire(import.meta.url), host: true });
  bases.push({ label: `${boundary.home} (your home directory)`, require: requireFrom(boundary.home), host: false });
  const tried: string[] = [];
  let inside: string | undefined;
  for (const id of candidateIds(kind, name)) {
    for (const base of bases) {
      try {
        const file = base.require.resolve(id);
        if (base.host || !boundary.contains(file)) return { request: name, id, file };
        inside ??= file;
        tried.push(`${id} from ${base.label} (inside the untrusted project: ${file})`);
      } catch (error) {
        tried.push(`${id} from ${base.label}${notFoundReason(error)}`);
      }
    }
  }
  // Where a trusted load would have found it, to say what was skipped rather than "not found".
  if (inside === undefined) {
    try {
      inside = resolveModuleFile(kind, name, fromDir, context).file;
    } catch {
      // Not in the project either: report what was tried outside it.
    }
  }
  if (inside !== undefined) throw new UntrustedModuleSkipped(kind, name, inside);
  throw notFound(kind, name, fromDir, tried, context);
}

/** Why a lookup failed, when it is more than "not installed there". */
function notFoundReason(error: unknown): string {
  const message = describeError(error).split("\n")[0] ?? "";
  if ((error as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND") return ` (${message})`;
  // The package was found but the file its package.json points to is missing.
  const missing = /Cannot find module '(\/[^']+)'/.exec(message)?.[1];
  return missing === undefined ? "" : ` (the package is installed but its entry file ${missing} is missing: is it built?)`;
}

function requireFrom(dir: string): NodeJS.Require {
  // createRequire wants a file; the file need not exist.
  return createRequire(join(dir, "noop.js"));
}

function notFound(kind: ModuleKind, name: string, fromDir: string, tried: readonly string[], context: ResolveContext): CompactionError {
  const builtins = kind === "preset" ? BUILTIN_PRESETS : BUILTIN_PLUGINS;
  const nearest = isPathName(name) ? undefined : suggest(shortName(kind, name), builtins);
  const [scoped] = PREFIXES[kind];
  const builtin = !isPathName(name) && builtins.includes(shortName(kind, name));
  const fix = isPathName(name)
    ? `Check the path: it is relative to ${fromDir}, the directory of the file that names it.`
    : builtin
      ? `'${shortName(kind, name)}' is a built-in ${kind}, published as its own package (core ships none): install it where core is installed (npm install ${candidateIds(kind, name)[0] ?? `${scoped}${name}`}).`
      : `${nearest === undefined ? `The built-in ${kind}s are ${builtins.join(", ")}. For another, install` : `Did you mean '${nearest}'? If not, install`} the package (npm install ${candidateIds(kind, name)[0] ?? `${scoped}${name}`}) or give a path starting with ./ to a file of your own.`;
  // One line of message; what was tried (for a user who wonders where it looked) goes in the hint.
  return new CompactionError(
    ErrorCodes.PLUGIN_NOT_FOUND,
    `Cannot find ${kind} '${name}'${where(context)}.`,
    withContext(context, { plugin: name, hint: `${fix} Tried: ${tried.join("; ")}.` }),
  );
}

function where(context: ResolveContext): string {
  if (context.file === undefined && context.path === undefined) return context.namedBy === undefined ? "" : ` (named by ${context.namedBy})`;
  const at = context.path === undefined ? "" : ` at ${showPointer(context.path)}`;
  const file = context.file === undefined ? "" : ` in ${context.file}`;
  return ` (named${at}${file})`;
}

function withContext(context: ResolveContext, details: { plugin: string; hint: string; cause?: unknown }) {
  return {
    ...details,
    ...(context.file === undefined ? {} : { file: context.file }),
    ...(context.path === undefined ? {} : { path: context.path }),
  };
}

async function importModule(kind: ModuleKind, resolved: ResolvedModuleFile, context: ResolveContext): Promise<Record<string, unknown>> {
  try {
    return await importModuleFile(resolved.file);
  } catch (error) {
    throw new CompactionError(
      ErrorCodes.PLUGIN_INVALID,
      `Cannot load ${kind} '${resolved.request}' from ${resolved.file}${where(context)}: ${describeError(error)}`,
      withContext(context, {
        plugin: resolved.request,
        hint: moduleFormatHint(resolved.file, error) ?? "Fix the error in that module; run it with node to see the full stack.",
        cause: error,
      }),
    );
  }
}

/** The first candidate export that passes `accept`: default, the named export, or a CommonJS wrapper's. */
function pickExport(module: Record<string, unknown>, named: string, accept: (value: unknown) => boolean): unknown {
  const fallback = module["default"] as Record<string, unknown> | undefined;
  const candidates = [module["default"], module[named]];
  if (typeof fallback === "object" && fallback !== null) candidates.push(fallback[named], fallback["default"]);
  return candidates.find(accept);
}

/** What a module exports, for error messages: `default (an object with keys name, apply), helper (a function)`. */
function describeExports(module: Record<string, unknown>): string {
  const names = Object.keys(module);
  if (names.length === 0) return "no exports";
  return `exports ${names.map((key) => `${key} (${describeExport(module[key])})`).join(", ")}`;
}

function describeExport(value: unknown): string {
  if (typeof value === "function") return "a function";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object" && value !== null) {
    const keys = Object.keys(value);
    return keys.length === 0 ? "an empty object" : `an object with keys ${keys.join(", ")}`;
  }
  return value === null ? "null" : `a ${typeof value}`;
}

/**
 * Resolves and imports a plugin by name or path. Its default export (or export named `plugin`)
 * must be a factory `(options?) => { name, apply }`; otherwise COMPACTION_PLUGIN_INVALID.
 */
export async function resolvePlugin(name: string, fromDir: string, context: ResolveContext = {}): Promise<LoadedPlugin> {
  const resolved = locate("plugin", name, fromDir, context);
  const module = await importModule("plugin", resolved, context);
  const factory = pickExport(module, "plugin", (value) => typeof value === "function");
  if (typeof factory !== "function") {
    const value = module["default"] as { apply?: unknown } | undefined;
    const looksLikeInstance = typeof value === "object" && value !== null && typeof value.apply === "function";
    throw new CompactionError(
      ErrorCodes.PLUGIN_INVALID,
      `Plugin '${name}' (${resolved.file})${where(context)} has no plugin factory: expected a default export or an export named 'plugin' that is a function (options) => ({ name, apply }), found ${describeExports(module)}.`,
      withContext(context, {
        plugin: name,
        hint: looksLikeInstance
          ? "Export a factory that returns the plugin object: export default (options) => ({ name, apply(compactor) { ... } })."
          : 'Add: export default function myPlugin(options = {}) { return { name: "my-plugin", apply(compactor) { /* tap hooks */ } }; }',
      }),
    );
  }
  return { ...resolved, name: isPathName(name) ? name : shortName("plugin", name), factory: factory as PluginFactory<any> };
}

/**
 * Resolves and imports a preset by name or path. Its default export (or export named `preset`)
 * must be `{ plugins: [...] }`; otherwise COMPACTION_PLUGIN_INVALID.
 */
export async function resolvePreset(name: string, fromDir: string, context: ResolveContext = {}): Promise<LoadedPreset> {
  const resolved = locate("preset", name, fromDir, context);
  const module = await importModule("preset", resolved, context);
  const preset = pickExport(module, "preset", isPresetDefinition);
  if (preset === undefined) {
    throw new CompactionError(
      ErrorCodes.PLUGIN_INVALID,
      `Preset '${name}' (${resolved.file})${where(context)} has no preset: expected a default export or an export named 'preset' that is an object with a 'plugins' array, found ${describeExports(module)}.`,
      withContext(context, {
        plugin: name,
        hint: 'Export the preset as data: export default { plugins: ["rolling", ["last-turn-injection", { lastTurnMaxTokens: 2000 }]] }.',
      }),
    );
  }
  return { ...resolved, name: isPathName(name) ? name : shortName("preset", name), preset: preset as PresetDefinition };
}

function locate(kind: ModuleKind, name: string, fromDir: string, context: ResolveContext): ResolvedModuleFile {
  const { boundary } = context;
  return boundary === undefined ? resolveModuleFile(kind, name, fromDir, context) : resolveWithinTrust(kind, name, fromDir, { ...context, boundary });
}

function isPresetDefinition(value: unknown): boolean {
  return typeof value === "object" && value !== null && Array.isArray((value as { plugins?: unknown }).plugins);
}
