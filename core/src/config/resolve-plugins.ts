import { dirname } from "node:path";
import type { CompactionPlugin, PluginFactory } from "../compactor/plugin.js";
import { CompactionError, describeError, ErrorCodes, isCompactionError } from "../errors.js";
import { describeValue } from "./schema-problems.js";
import type { LoadedConfig } from "./load-config.js";
import { cloneData, isPlainObject } from "./plain-data.js";
import { pointer, showPointer } from "./pointer.js";
import { type ConfigWarning, untrustedModuleWarning } from "./project-trust.js";
import { configInvalid } from "./config-error.js";
import { suggest } from "./suggest.js";
import {
  BUILTIN_PLUGINS,
  BUILTIN_PRESETS,
  isPathName,
  type LoadedPreset,
  resolveModuleFile,
  resolvePlugin,
  resolvePreset,
  type ResolveContext,
  resolveWithinTrust,
  shortName,
  UntrustedModuleSkipped,
} from "./resolve-module.js";

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
/** An option given to a plugin: its value and where it was written. */
export interface GivenOption {
  readonly value: unknown;
  /** `preset`: the preset's entry; `file`: the config file (its `plugins` entry or `options`). */
  readonly from: "preset" | "file";
  readonly file: string | null;
  /** JSON pointer of the value in `file`. */
  readonly path: string;
}

/** One plugin applied, for `compaction config`: where it came from and its options. */
export interface AppliedPlugin {
  /** The name the plugin gives itself. */
  readonly name: string;
  /** The name or path as written; null for a factory a preset passes directly. */
  readonly request: string | null;
  /** The module file it was loaded from; null for a factory. */
  readonly file: string | null;
  /** `config`: the config's own `plugins`; `preset`: the preset's list. */
  readonly from: "config" | "preset";
  /** The options in force, defaults filled in, when the plugin reports them (`plugin.options`). */
  readonly options: Readonly<Record<string, unknown>> | null;
  /** The options the preset or the config file gave, by option name. */
  readonly given: Readonly<Record<string, GivenOption>>;
}

/** The plugins to apply, in order, and the preset they came from. */
export interface ResolvedPlugins {
  readonly plugins: CompactionPlugin[];
  /** Per plugin (same order): where it came from and its options. */
  readonly applied: readonly AppliedPlugin[];
  readonly preset: LoadedPreset;
  /** Presets and plugins not loaded because the project is not trusted. */
  readonly warnings: readonly ConfigWarning[];
}

/** The preset an untrusted project gets when its own preset is the project's code. */
const UNTRUSTED_FALLBACK_PRESET = "safeguard";

export async function resolvePlugins(loaded: LoadedConfig): Promise<ResolvedPlugins> {
  const { config, baseDir, cwd } = loaded;
  const file = config.filepath ?? undefined;
  const warnings: ConfigWarning[] = [];
  const userSpecs: PluginSpec[] = config.plugins.map((entry, index) => {
    const [use, options] = typeof entry === "string" ? [entry, undefined] : entry;
    return { use, options, fromDir: baseDir, file, path: loaded.pointerTo("plugins", index), tuple: typeof entry !== "string" };
  });
  // A preset the caller chose (createCompactor's preset, the CLI's --preset) is named by no file.
  const presetContext: ResolveContext =
    config.sources.preset.from === "caller"
      ? { cwd, namedBy: loaded.presetNamedBy ?? "the preset option" }
      : { cwd, ...(file === undefined ? {} : { file }), path: loaded.pointerTo("preset") };
  const preset = await loadPreset(config.preset, loaded, presetContext, warnings);

  const user = await instantiateAll(userSpecs, loaded, warnings, "config");
  const fromPreset = await instantiateAll(presetSpecs(preset), loaded, warnings, "preset");
  const taken = new Set(user.map(({ plugin }) => plugin.name));
  const chosen = [...user, ...fromPreset.filter(({ plugin }) => !taken.has(plugin.name))];
  const plugins = chosen.map(({ plugin }) => plugin);
  checkNamesElsewhere(loaded, new Set([...(presetContext.path === undefined ? [] : [presetContext.path]), ...userSpecs.map(entryNamePath)]));
  // With plugins skipped (untrusted project), an options key may be theirs: it cannot be told from a typo.
  if (warnings.length === 0) checkOptionKeys(loaded, plugins);
  return { plugins, applied: chosen.map(({ applied }) => applied), preset, warnings };
}

/** The config's preset, or (untrusted project, preset inside it) the built-in default with a warning. */
async function loadPreset(name: string, loaded: LoadedConfig, context: ResolveContext, warnings: ConfigWarning[]): Promise<LoadedPreset> {
  const { boundary, baseDir } = loaded;
  try {
    return await resolvePreset(name, baseDir, { ...context, ...(boundary === null ? {} : { boundary }) });
  } catch (error) {
    if (!(error instanceof UntrustedModuleSkipped) || boundary === null) throw error;
    warnings.push(untrustedModuleWarning("preset", name, error.file, boundary, { source: context.file, path: context.path }, UNTRUSTED_FALLBACK_PRESET));
    return resolvePreset(UNTRUSTED_FALLBACK_PRESET, baseDir, { ...context, boundary });
  }
}

/**
 * Every preset and plugin the file names must resolve, not only those of the section in force
 * (issue 43: `agents.coder.preset: layerd` passed every command but the one run with `--agent
 * coder`). What this run loads was checked by loading it (`loadedAt`: the pointers of those
 * names); the others are only resolved to a file, not imported, so no other agent's code runs.
 * In an untrusted project a name that resolves to the project's own code counts as resolved
 * (the run that applies it skips it with a warning).
 */
function checkNamesElsewhere(loaded: LoadedConfig, loadedAt: ReadonlySet<string>): void {
  const file = loaded.config.filepath ?? undefined;
  for (const named of loaded.named) {
    if (loadedAt.has(named.path)) continue;
    const context: ResolveContext = { cwd: loaded.cwd, ...(file === undefined ? {} : { file }), path: named.path };
    try {
      if (loaded.boundary === null) resolveModuleFile(named.kind, named.name, loaded.baseDir, context);
      else resolveWithinTrust(named.kind, named.name, loaded.baseDir, { ...context, boundary: loaded.boundary });
    } catch (error) {
      if (error instanceof UntrustedModuleSkipped) continue;
      if (!isCompactionError(error)) throw error;
      const section = /^\/agents\/([^/]+)\//.exec(named.path)?.[1];
      const where = section === undefined ? "at the top level" : `in the section of agent '${section.replaceAll("~1", "/").replaceAll("~0", "~")}'`;
      throw new CompactionError(error.code, error.message, {
        ...(file === undefined ? {} : { file }),
        path: named.path,
        plugin: named.name,
        hint: `Every preset and plugin the config names must resolve, whichever agent runs (this one is ${where}). ${error.hint ?? ""}`.trimEnd(),
      });
    }
  }
}

/**
 * The plugins this project ships, by short name. Their options are accepted whether or not the
 * preset in force applies them: an agent section's preset may, and hosts read some of them
 * (the pi extension prunes with `options.layered` under any preset).
 */
const SHIPPED_PLUGINS: readonly string[] = [
  ...BUILTIN_PLUGINS,
  "sliding-window",
  "recall",
  "summarizer-extractive",
  "summarizer-openai",
  "summarizer-anthropic",
];

/**
 * Every key of `options` must name a plugin (issue 13: a misspelt name was silently ignored and
 * the run used the defaults): one that is applied, one this project ships, or one a section's
 * `plugins` lists. When a section names a preset that is not built in, top-level keys are not
 * checked (that preset's plugins are not known without loading it).
 */
function checkOptionKeys(loaded: LoadedConfig, plugins: readonly CompactionPlugin[]): void {
  const { config, sections } = loaded;
  const applied = plugins.map((plugin) => plugin.name);
  const otherSections = Object.entries(sections).filter(([name]) => name !== config.agentSection);
  const ownPresets = otherSections.some(([, section]) => section.preset !== undefined && !BUILTIN_PRESETS.includes(section.preset));
  const known = new Set<string>([...applied, ...SHIPPED_PLUGINS]);
  for (const [, section] of otherSections) {
    for (const entry of section.plugins ?? []) {
      const name = typeof entry === "string" ? entry : entry[0];
      known.add(isPathName(name) ? name : shortName("plugin", name));
    }
  }
  for (const key of Object.keys(config.options)) {
    if (known.has(key)) continue;
    const path = loaded.pointerTo("options", key);
    if (ownPresets && !path.startsWith("/agents/")) continue;
    const nearest = suggest(key, known);
    throw configInvalid(config.filepath ?? undefined, [
      {
        path,
        message: `expected the name of a plugin (applied here: ${applied.join(", ")}), found '${key}', which names no plugin: its options would be ignored`,
        hint: nearest === undefined ? `Use a plugin's name (${applied.join(", ")}), or add '${key}' to plugins.` : `Did you mean '${nearest}'?`,
      },
    ]);
  }
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

async function instantiateAll(
  specs: readonly PluginSpec[],
  loaded: LoadedConfig,
  warnings: ConfigWarning[],
  from: AppliedPlugin["from"],
): Promise<Array<{ plugin: CompactionPlugin; applied: AppliedPlugin }>> {
  const plugins: Array<{ plugin: CompactionPlugin; applied: AppliedPlugin }> = [];
  for (const spec of specs) {
    const made = await instantiate(spec, loaded, warnings, from);
    if (made !== undefined) plugins.push(made);
  }
  return plugins;
}

/** The plugin for one entry; undefined when it is the untrusted project's code (with a warning). */
async function instantiate(
  spec: PluginSpec,
  loaded: LoadedConfig,
  warnings: ConfigWarning[],
  from: AppliedPlugin["from"],
): Promise<{ plugin: CompactionPlugin; applied: AppliedPlugin } | undefined> {
  const named = typeof spec.use === "string" ? spec.use : undefined;
  const { boundary } = loaded;
  const context = {
    cwd: loaded.cwd,
    ...(spec.file === undefined ? {} : { file: spec.file }),
    path: named === undefined ? spec.path : entryNamePath(spec),
    ...(boundary === null ? {} : { boundary }),
  };
  let factory: PluginFactory<any>;
  let file: string | null = null;
  try {
    if (named === undefined) factory = spec.use as PluginFactory<any>;
    else ({ factory, file } = await resolvePlugin(named, spec.fromDir, context));
  } catch (error) {
    if (!(error instanceof UntrustedModuleSkipped) || boundary === null) throw error;
    warnings.push(untrustedModuleWarning("plugin", error.request, error.file, boundary, { source: context.file, path: context.path }));
    return undefined;
  }

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
  const given = givenOptions(spec, from, overrides, loaded, key);
  const plugin =
    overrides === undefined
      ? (first ?? call(factory, spec.options, label, entryOptionsSource(spec)))
      : call(factory, { ...spec.options, ...overrides }, key, { file: loaded.config.filepath ?? undefined, path: loaded.pointerTo("options", key) });
  return { plugin, applied: { name: plugin.name, request: named ?? null, file, from, options: plugin.options ?? null, given } };
}

/** Each option the config or preset gives the plugin, with where it was written (later wins). */
function givenOptions(
  spec: PluginSpec,
  from: AppliedPlugin["from"],
  overrides: Readonly<Record<string, unknown>> | undefined,
  loaded: LoadedConfig,
  key: string,
): Record<string, GivenOption> {
  const given: Record<string, GivenOption> = {};
  for (const [option, value] of Object.entries(spec.options ?? {})) {
    given[option] = { value, from: from === "preset" ? "preset" : "file", file: spec.file ?? null, path: pointer(...pathSegments(`${spec.path}/1`), option) };
  }
  for (const [option, value] of Object.entries(overrides ?? {})) {
    given[option] = { value, from: "file", file: loaded.config.filepath, path: loaded.pointerTo("options", key, option) };
  }
  return given;
}

function pathSegments(path: string): string[] {
  return path.split("/").slice(1).map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"));
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
