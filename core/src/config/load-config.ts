import { dirname, resolve } from "node:path";
import { ErrorCodes } from "../errors.js";
import { configInvalid, configUnreadable, ConfigError, problemsFromAjv } from "./config-error.js";
import { applyAgentSection, keysSetBy } from "./merge.js";
import { cloneData, deepFreeze } from "./plain-data.js";
import { pointer } from "./pointer.js";
import { validateConfigData } from "./schema.js";
import { suggest } from "./suggest.js";
import type { AgentConfig, CompactionConfig, ResolvedConfig } from "./types.js";

/** The name cosmiconfig searches for: `.compactionrc*`, `compaction.config.*`, `package.json#compaction`. */
export const CONFIG_MODULE_NAME = "compaction";

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
}

/** A resolved config plus what resolution needs to point errors at the right place. */
export interface LoadedConfig {
  readonly config: ResolvedConfig;
  /** The directory search started from. */
  readonly cwd: string;
  /** Paths in the config are relative to this: the config file's directory, or `cwd`. */
  readonly baseDir: string;
  /**
   * JSON pointer to where a setting came from: under `/agents/<agent>` when the agent's section
   * set it, at the top level otherwise. `pointerTo("options", "rolling")` looks at that plugin.
   */
  pointerTo(key: keyof AgentConfig, ...rest: ReadonlyArray<string | number>): string;
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
  const found = await readConfigFile(cwd, options.configPath);
  const filepath = found?.filepath ?? null;
  const data = cloneData(found?.config ?? {});

  const errors = validateConfigData(data);
  if (errors.length > 0) throw configInvalid(filepath ?? undefined, problemsFromAjv(errors));
  const file = data as Required<CompactionConfig>;

  const agent = options.agent ?? null;
  const section = agent === null || filepath === null ? {} : agentSection(file, agent, filepath);
  const merged = applyAgentSection(file, section);
  const pointerTo = (key: keyof AgentConfig, ...rest: ReadonlyArray<string | number>): string => {
    const fromAgent =
      agent !== null &&
      (key === "options" && rest.length > 0
        ? Object.hasOwn(section.options ?? {}, String(rest[0]))
        : keysSetBy(section).includes(key as never));
    return fromAgent ? pointer("agents", agent as string, key, ...rest) : pointer(key, ...rest);
  };

  if (merged.reserveTokens >= merged.contextWindow) {
    throw configInvalid(filepath ?? undefined, [
      {
        path: pointerTo("reserveTokens"),
        message: `expected reserveTokens below contextWindow (${merged.contextWindow}), found ${merged.reserveTokens}: the compaction budget is contextWindow - reserveTokens`,
        hint: `Lower reserveTokens or raise contextWindow${pointerTo("contextWindow") === "/contextWindow" ? "" : ` (set at ${pointerTo("contextWindow")})`}.`,
      },
    ]);
  }

  const config: ResolvedConfig = deepFreeze({
    filepath,
    agent,
    preset: options.preset ?? merged.preset,
    contextWindow: merged.contextWindow,
    reserveTokens: merged.reserveTokens,
    adapter: merged.adapter,
    tokenizer: merged.tokenizer as ResolvedConfig["tokenizer"],
    summarizer: merged.summarizer as ResolvedConfig["summarizer"],
    autoCompact: merged.autoCompact as ResolvedConfig["autoCompact"],
    plugins: merged.plugins,
    options: merged.options,
  });
  return { config, cwd, baseDir: filepath === null ? cwd : dirname(filepath), pointerTo };
}

async function readConfigFile(cwd: string, configPath: string | undefined): Promise<{ filepath: string; config: unknown } | null> {
  // One explorer per call: its caches live and die with it; nothing is kept between calls.
  const { cosmiconfig } = await loadCosmiconfig();
  const explorer = cosmiconfig(CONFIG_MODULE_NAME, { searchStrategy: "project" });
  const target = configPath === undefined ? undefined : resolve(cwd, configPath);
  try {
    const result = target === undefined ? await explorer.search(cwd) : await explorer.load(target);
    if (result === null) return null;
    return { filepath: result.filepath, config: result.isEmpty === true ? {} : result.config };
  } catch (error) {
    if (target !== undefined && (error as NodeJS.ErrnoException).code === "ENOENT") {
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

function agentSection(file: Required<CompactionConfig>, agent: string, filepath: string): AgentConfig {
  const agents = file.agents;
  if (Object.hasOwn(agents, agent)) return agents[agent] as AgentConfig;
  const known = Object.keys(agents);
  const nearest = suggest(agent, known);
  throw configInvalid(filepath, [
    {
      path: pointer("agents", agent),
      message:
        known.length === 0
          ? `expected a section for agent '${agent}' under agents, found no agents in this file`
          : `expected a section for agent '${agent}' under agents, found only: ${known.join(", ")}`,
      hint:
        nearest === undefined
          ? `Add an agents.${agent} section${known.length === 0 ? "" : `, or use one of: ${known.join(", ")}`}.`
          : `Did you mean '${nearest}'?`,
    },
  ]);
}

/**
 * cosmiconfig's TypeScript loader requires `typescript` (9.9 MB): imported statically, a bundler
 * pulls it into every bundle of the core (10.4 MB for a Node bundle, against 0.15 MB without).
 * So cosmiconfig is imported when a config file is first read, by a name bundlers do not follow;
 * Node resolves it from this package's dependencies as for any import.
 */
const COSMICONFIG: string = "cosmiconfig";

async function loadCosmiconfig(): Promise<typeof import("cosmiconfig")> {
  return (await import(COSMICONFIG)) as typeof import("cosmiconfig");
}
