import { dirname } from "node:path";
import type { CompactionPlugin, PluginFactory } from "../compactor/plugin.js";
import { CompactionError, describeError, ErrorCodes, isCompactionError } from "../errors.js";
import { describeValue } from "./schema-problems.js";
import type { LoadedConfig } from "./load-config.js";
import { cloneData, isPlainObject } from "./plain-data.js";
import { pointer, showPointer } from "./pointer.js";
import { isPathName, type LoadedPreset, resolvePlugin, resolvePreset, shortName } from "./resolve-module.js";

/** One plugin to instantiate, with where it was written (for errors). */
interface PluginSpec {
  /** A name or path (resolved from `fromDir`), or a factory. */
  readonly use: string | PluginFactory<any>;
  /** The options the entry itself gives (`[name, options]`). */
  readonly options: Readonly<Record<string, unknown>> | undefined;
  readonly fromDir: string;
  /** The file listing the entry, and the entry's JSON pointer in it. */
  readonly file: string | undefined;
  readonly path: string;
  /** Whether the entry is written `[name, options?]` (so its name is at `<path>/0`). */
  readonly tuple: boolean;
}

/**
 * The plugin instances for a resolved config: the config's own `plugins` first, then the
 * preset's (a preset plugin with the same name as one of the user's is left out: the user's
 * replaces it). Each gets its entry's options with `options[<short name>]` merged over them per key.
 * Throws COMPACTION_PLUGIN_NOT_FOUND / _INVALID / _OPTIONS_INVALID naming file and JSON path.
 */
/** The plugins to apply, in order, and the preset they came from. */
export interface ResolvedPlugins {
  readonly plugins: CompactionPlugin[];
  readonly preset: LoadedPreset;
}

export async function resolvePlugins(loaded: LoadedConfig): Promise<ResolvedPlugins> {
  const { config, baseDir, cwd } = loaded;
  const file = config.filepath ?? undefined;
  const userSpecs: PluginSpec[] = config.plugins.map((entry, index) => {
    const [use, options] = typeof entry === "string" ? [entry, undefined] : entry;
    return { use, options, fromDir: baseDir, file, path: loaded.pointerTo("plugins", index), tuple: typeof entry !== "string" };
  });
  const preset = await resolvePreset(config.preset, baseDir, { cwd, ...(file === undefined ? {} : { file }), path: loaded.pointerTo("preset") });

  const user = await instantiateAll(userSpecs, loaded);
  const fromPreset = await instantiateAll(presetSpecs(preset), loaded);
  const taken = new Set(user.map((plugin) => plugin.name));
  return { plugins: [...user, ...fromPreset.filter((plugin) => !taken.has(plugin.name))], preset };
}

function presetSpecs(preset: LoadedPreset): PluginSpec[] {
  const fromDir = dirname(preset.file);
  return preset.preset.plugins.map((entry, index) => {
    const path = pointer("plugins", index);
    const [use, options] = Array.isArray(entry) ? entry : [entry, undefined];
    const validName = (typeof use === "string" && use.length > 0) || typeof use === "function";
    const validShape = !Array.isArray(entry) || (entry.length >= 1 && entry.length <= 2);
    if (!validName || !validShape || (options !== undefined && !isPlainObject(options))) {
      throw new CompactionError(
        ErrorCodes.PLUGIN_INVALID,
        `Preset '${preset.request}' (${preset.file}) has an invalid entry at ${path}: expected a plugin name, a factory, or [name or factory, options object], found ${describeValue(entry)}.`,
        {
          file: preset.file,
          path,
          plugin: preset.request,
          hint: 'Write entries as "rolling", "./my-plugin.js", rolling, or ["rolling", { minKeepMessages: 20 }].',
        },
      );
    }
    const tuple = Array.isArray(entry);
    return { use: use as string | PluginFactory<any>, options: options as Record<string, unknown> | undefined, fromDir, file: preset.file, path, tuple };
  });
}

async function instantiateAll(specs: readonly PluginSpec[], loaded: LoadedConfig): Promise<CompactionPlugin[]> {
  const plugins: CompactionPlugin[] = [];
  for (const spec of specs) plugins.push(await instantiate(spec, loaded));
  return plugins;
}

async function instantiate(spec: PluginSpec, loaded: LoadedConfig): Promise<CompactionPlugin> {
  const named = typeof spec.use === "string" ? spec.use : undefined;
  const context = { cwd: loaded.cwd, ...(spec.file === undefined ? {} : { file: spec.file }), path: named === undefined ? spec.path : entryNamePath(spec) };
  const factory = named === undefined ? (spec.use as PluginFactory<any>) : (await resolvePlugin(named, spec.fromDir, context)).factory;

  // Options are keyed by short name: a package's name without its prefix; for a path or a
  // factory, the name the plugin gives itself (learned by calling the factory once).
  let key = named !== undefined && !isPathName(named) ? shortName("plugin", named) : undefined;
  const label = key ?? named ?? (factory.name || `plugin at ${showPointer(spec.path)}`);
  let first: CompactionPlugin | undefined;
  if (key === undefined) {
    first = call(factory, spec.options, label, entryOptionsSource(spec));
    key = first.name;
  }
  const overrides = Object.hasOwn(loaded.config.options, key) ? loaded.config.options[key] : undefined;
  if (overrides === undefined) return first ?? call(factory, spec.options, label, entryOptionsSource(spec));
  const source = { file: loaded.config.filepath ?? undefined, path: loaded.pointerTo("options", key) };
  return call(factory, { ...spec.options, ...overrides }, key, source);
}

function entryNamePath(spec: PluginSpec): string {
  return spec.tuple ? `${spec.path}/0` : spec.path;
}

function entryOptionsSource(spec: PluginSpec): { file: string | undefined; path: string } {
  return { file: spec.file, path: spec.options === undefined ? spec.path : `${spec.path}/1` };
}

/** Calls a factory with a private copy of its options and checks what it returns. */
function call(
  factory: PluginFactory<any>,
  options: Readonly<Record<string, unknown>> | undefined,
  label: string,
  source: { file: string | undefined; path: string },
): CompactionPlugin {
  const where = { ...(source.file === undefined ? {} : { file: source.file }), path: source.path, plugin: label };
  let plugin: unknown;
  try {
    plugin = options === undefined ? factory() : factory(cloneData(options) as Record<string, unknown>);
  } catch (error) {
    const at = `${showPointer(source.path)}${source.file === undefined ? "" : ` in ${source.file}`}`;
    throw new CompactionError(
      ErrorCodes.PLUGIN_OPTIONS_INVALID,
      `Plugin '${label}' rejected its options (given at ${at}): ${describeError(error)}`,
      {
        ...where,
        hint: (isCompactionError(error) ? error.hint : undefined) ?? `Check the options at ${showPointer(source.path)} against the documentation of '${label}'.`,
        cause: error,
      },
    );
  }
  const candidate = plugin as Partial<CompactionPlugin> | null;
  if (typeof candidate !== "object" || candidate === null || typeof candidate.name !== "string" || candidate.name === "" || typeof candidate.apply !== "function") {
    throw new CompactionError(
      ErrorCodes.PLUGIN_INVALID,
      `Plugin '${label}' factory returned ${describeValue(plugin)}; expected a plugin object { name, apply(compactor) } with a non-empty name.`,
      { ...where, hint: "Make the factory return { name: PLUGIN_NAME, apply(compactor) { ... } }." },
    );
  }
  return candidate as CompactionPlugin;
}
