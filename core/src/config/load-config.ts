import { dirname, resolve } from "node:path";
import { defaultReserveTokens, MAX_RESERVE_SHARE } from "../compactor/reply-reserve.js";
import { configInvalid, problemsFromAjv } from "./config-error.js";
import { findConfigFile } from "./find-config-file.js";
import { AGENT_KEYS, applyAgentSection, keysSetBy } from "./merge.js";
import { cloneData, deepFreeze, isPlainObject } from "./plain-data.js";
import { pointer } from "./pointer.js";
import { DEFAULT_TRUST_HINT, projectBoundary, type ProjectBoundary } from "./project-trust.js";
import { validateConfigData } from "./schema.js";
import type { AgentConfig, CompactionConfig, ResolvedConfig, SettingSource } from "./types.js";

export { CONFIG_MODULE_NAME } from "./find-config-file.js";

export interface LoadConfigOptions {
  /** Where the search starts (up to the nearest package.json). Defaults to `process.cwd()`. */
  readonly cwd?: string;
  /** The agent whose section of `agents` applies over the top level. */
  readonly agent?: string;
  /** Load this file (relative to `cwd`) instead of searching. */
  readonly configPath?: string;
  /**
   * Use this preset instead of the one the config (or the agent's section) names, e.g. from a
   * command line `--preset`. Resolved like the config's own `preset`.
   */
  readonly preset?: string;
  /**
   * What named `preset`, for the error when it does not resolve: `Cannot find preset 'x' (named
   * by <this>)`, e.g. `--presets` for a command line. Default `the preset option`.
   */
  readonly presetNamedBy?: string;
  /**
   * Whether the project at `cwd` may run code. Default `true` (today's behaviour: right for a
   * program the user runs on purpose, as with ESLint or Vite). `false` (a host that has not been
   * told to trust the folder): config files that are code are not loaded, presets and plugins
   * that resolve inside the project are skipped, and `warnings` says what was skipped
   * (COMPACTION_CONFIG_UNTRUSTED); data-only files, built-in and user-level plugins still load.
   */
  readonly trusted?: boolean;
  /** With `trusted: false`: how the user trusts the project in your host, for the warnings' hint. */
  readonly trustHint?: string;
}

/** A resolved config plus what resolution needs to point errors at the right place. */
export interface LoadedConfig {
  readonly config: ResolvedConfig;
  /** The directory search started from. */
  readonly cwd: string;
  /** Paths in the config are relative to this: the config file's directory, or `cwd`. */
  readonly baseDir: string;
  /** The project's boundary when it is not trusted (`trusted: false`); null when trusted. */
  readonly boundary: ProjectBoundary | null;
  /** Every section under `agents` in the file, as written. */
  readonly sections: Readonly<Record<string, AgentConfig>>;
  /** What named the caller's preset (`LoadConfigOptions.presetNamedBy`), when it gave one. */
  readonly presetNamedBy?: string;
  /**
   * Every preset and plugin the file names by name or path, at the top level and in every
   * agent's section, with where: each must resolve whichever section applies (resolve-plugins.ts).
   */
  readonly named: readonly NamedModule[];
  /**
   * JSON pointer to where a setting came from: under `/agents/<agent>` when the agent's section
   * set it, at the top level otherwise. `pointerTo("options", "rolling")` looks at that plugin.
   */
  pointerTo(key: keyof AgentConfig, ...rest: ReadonlyArray<string | number>): string;
}

/** A preset or plugin named in the config file, and the JSON pointer of the name. */
export interface NamedModule {
  readonly kind: "preset" | "plugin";
  readonly name: string;
  readonly path: string;
}

/**
 * Finds and reads the compaction config for `cwd` (or `configPath`), validates it against the
 * schema (all problems at once), applies defaults and, when `agent` is given, that agent's
 * section. No config file -> all defaults with `filepath: null`.
 * Throws a ConfigError (COMPACTION_CONFIG_INVALID / COMPACTION_CONFIG_UNREADABLE).
 */
export async function loadConfig(options: LoadConfigOptions = {}): Promise<ResolvedConfig> {
  return (await loadConfigDetailed(options)).config;
}

/** `loadConfig`, keeping where each setting came from (for plugin resolution errors). */
export async function loadConfigDetailed(options: LoadConfigOptions = {}): Promise<LoadedConfig> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const trusted = options.trusted ?? true;
  const hint = options.trustHint ?? DEFAULT_TRUST_HINT;
  const found = await findConfigFile(cwd, options.configPath, trusted ? null : projectBoundary(cwd, null, hint));
  const { filepath } = found;
  const data = cloneData(found.config ?? {});

  // The keys the file itself sets, before the schema fills in defaults.
  const fileKeys = new Set(isPlainObject(data) ? Object.keys(data) : []);
  const errors = validateConfigData(data);
  if (errors.length > 0) throw configInvalid(filepath ?? undefined, problemsFromAjv(errors));
  const file = data as Required<CompactionConfig>;

  const agent = options.agent ?? null;
  // An agent without a section of its own gets the top-level settings: hosts pass their
  // agent's name whatever the config lists (OpenClaw runs many agents; a user customises one).
  const agentSections = Object.keys(file.agents);
  const sectionName = agent !== null && Object.hasOwn(file.agents, agent) ? agent : null;
  const section: AgentConfig = sectionName === null ? {} : (file.agents[sectionName] as AgentConfig);
  const merged = applyAgentSection(file, section);
  const pointerTo = (key: keyof AgentConfig, ...rest: ReadonlyArray<string | number>): string => {
    const fromAgent =
      agent !== null &&
      (key === "options" && rest.length > 0
        ? Object.hasOwn(section.options ?? {}, String(rest[0]))
        : keysSetBy(section).includes(key as never));
    return fromAgent ? pointer("agents", agent as string, key, ...rest) : pointer(key, ...rest);
  };

  const reserveLimit = Math.floor(merged.contextWindow * MAX_RESERVE_SHARE);
  if (merged.reserveTokens !== undefined && merged.reserveTokens > reserveLimit) {
    throw configInvalid(filepath ?? undefined, [
      {
        path: pointerTo("reserveTokens"),
        message: `expected reserveTokens of at most half of contextWindow (${merged.contextWindow}), found ${merged.reserveTokens}: a reserve for the reply larger than the context's room leaves the context no room to work in`,
        hint: `Lower reserveTokens to at most ${reserveLimit}, or leave it out (the reserve then follows the window: ${defaultReserveTokens(merged.contextWindow)} tokens at ${merged.contextWindow}), or raise contextWindow${pointerTo("contextWindow") === "/contextWindow" ? "" : ` (set at ${pointerTo("contextWindow")})`}.`,
      },
    ]);
  }

  const sources = Object.fromEntries(
    AGENT_KEYS.map((key): [string, SettingSource] => {
      if (key === "preset" && options.preset !== undefined) return [key, { from: "caller", path: null }];
      if (keysSetBy(section).includes(key)) return [key, { from: "file", path: pointer("agents", sectionName as string, key) }];
      return [key, fileKeys.has(key) ? { from: "file", path: pointer(key) } : { from: "default", path: null }];
    }),
  ) as ResolvedConfig["sources"];

  const config: ResolvedConfig = deepFreeze({
    filepath,
    agent,
    agentSection: sectionName,
    agentSections,
    trusted,
    warnings: found.warnings,
    applied: null,
    sources,
    preset: options.preset ?? merged.preset,
    contextWindow: merged.contextWindow,
    ...(merged.reserveTokens === undefined ? {} : { reserveTokens: merged.reserveTokens }),
    adapter: merged.adapter,
    tokenizer: merged.tokenizer as ResolvedConfig["tokenizer"],
    summarizer: merged.summarizer as ResolvedConfig["summarizer"],
    autoCompact: merged.autoCompact as ResolvedConfig["autoCompact"],
    plugins: merged.plugins,
    options: merged.options,
  });
  const baseDir = filepath === null ? cwd : dirname(filepath);
  return {
    config,
    cwd,
    baseDir,
    boundary: trusted ? null : projectBoundary(cwd, options.configPath === undefined ? filepath : null, hint),
    sections: file.agents,
    ...(options.presetNamedBy === undefined ? {} : { presetNamedBy: options.presetNamedBy }),
    named: [
      // The top-level preset only where the file sets it: the default need not be installed for an agent that names its own.
      ...namedIn(fileKeys.has("preset") ? { preset: file.preset, plugins: file.plugins } : { plugins: file.plugins }, []),
      ...Object.entries(file.agents).flatMap(([name, agentSection]) => namedIn(agentSection, ["agents", name])),
    ],
    pointerTo,
  };
}

/** The preset and plugin names a section (or the top level, at `at` = []) writes. */
function namedIn(section: AgentConfig, at: readonly string[]): NamedModule[] {
  const named: NamedModule[] = [];
  if (typeof section.preset === "string") named.push({ kind: "preset", name: section.preset, path: pointer(...at, "preset") });
  (section.plugins ?? []).forEach((entry, index) => {
    if (typeof entry === "string") named.push({ kind: "plugin", name: entry, path: pointer(...at, "plugins", index) });
    else if (typeof entry?.[0] === "string") named.push({ kind: "plugin", name: entry[0], path: pointer(...at, "plugins", index, 0) });
  });
  return named;
}
