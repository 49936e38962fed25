import type { ConfigWarning } from "./project-trust.js";
import type { AppliedPlugin } from "./resolve-plugins.js";

/** The message formats with a built-in adapter. */
export type AdapterName = "pi" | "openai" | "anthropic";

/** The token counters with a built-in implementation. */
export type TokenCounterName = "tiktoken" | "estimate";

/** A plugin as the config names it: a name or path, or `[name, options]`. */
export type PluginEntryConfig = string | readonly [string, Record<string, unknown>?];

/** Plugin options keyed by plugin short name (`rolling`, `last-turn-injection`, ...). */
export type PluginOptionsConfig = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

export interface TokenizerConfig {
  readonly counter?: TokenCounterName;
  readonly encoding?: string;
  /** Provider tokens per counted token, when known; otherwise learned from the context's usage. */
  readonly ratio?: number;
}

export interface SummarizerConfig {
  readonly name?: string;
  readonly maxTokens?: number;
}

export interface AutoCompactConfig {
  readonly enabled?: boolean;
  /** Fraction of the budget at which automatic compaction starts, in (0, 1]. */
  readonly threshold?: number;
  /**
   * Automatic compaction stops once the session's branch holds this many compactions (manual
   * compaction still works). Not set: no limit. Read by the context manager.
   */
  readonly maxAutoCompactions?: number;
}

/** The settings an agent's section may override (everything but `agents` and `$schema`). */
export interface AgentConfig {
  readonly preset?: string;
  readonly contextWindow?: number;
  readonly reserveTokens?: number;
  readonly adapter?: AdapterName;
  readonly tokenizer?: TokenizerConfig;
  readonly summarizer?: SummarizerConfig;
  readonly autoCompact?: AutoCompactConfig;
  readonly plugins?: readonly PluginEntryConfig[];
  readonly options?: PluginOptionsConfig;
}

/**
 * A config file's contents, as a user writes it (`.compactionrc.ts` can type its export with
 * this). `core/schema/compaction.schema.json` is the authority; this mirrors it.
 */
export interface CompactionConfig extends AgentConfig {
  readonly $schema?: string;
  readonly agents?: Readonly<Record<string, AgentConfig>>;
}

/**
 * The configuration for one agent, with defaults applied and the agent's section merged over
 * the top level. Deeply frozen.
 */
export interface ResolvedConfig {
  /** Absolute path of the config file, or null when none was found (all defaults). */
  readonly filepath: string | null;
  /** The agent the config was loaded for (as asked), or null for none. */
  readonly agent: string | null;
  /**
   * The `agents.<name>` section applied over the top level: the agent's own, or null when no
   * agent was asked for or the agent has no section (then the top-level settings apply).
   */
  readonly agentSection: string | null;
  /** The names of every section under `agents` in the file (for "did you mean"). */
  readonly agentSections: readonly string[];
  /** Whether the project was trusted to run code (the `trusted` option). */
  readonly trusted: boolean;
  /**
   * What was not loaded and why (COMPACTION_CONFIG_UNTRUSTED, with `trusted: false`). From
   * `loadConfig`: the config file search; on `compactor.config` (createCompactor): also the
   * presets and plugins.
   */
  readonly warnings: readonly ConfigWarning[];
  /**
   * What was loaded, on `compactor.config` (createCompactor); null from `loadConfig`: the preset
   * (its file) and the plugins applied, in the order they were applied.
   */
  readonly applied: AppliedConfig | null;
  /** Where each setting's value came from: the file (and where in it), the caller (`preset` option), or the default. */
  readonly sources: Readonly<Record<keyof AgentConfig, SettingSource>>;
  readonly preset: string;
  readonly contextWindow: number;
  /**
   * Tokens kept free for the reply, when the config sets them (at most half of contextWindow);
   * not set, each window gets its own (`replyReserveTokens`). The budget is the window less it.
   */
  readonly reserveTokens?: number;
  readonly adapter: AdapterName;
  /** `ratio`: provider tokens per counted token, when the config gives it (else learned from usage). */
  readonly tokenizer: { readonly counter: TokenCounterName; readonly encoding: string; readonly ratio?: number };
  readonly summarizer: { readonly name: string; readonly maxTokens: number };
  readonly autoCompact: { readonly enabled: boolean; readonly threshold?: number; readonly maxAutoCompactions?: number };
  readonly plugins: readonly PluginEntryConfig[];
  readonly options: PluginOptionsConfig;
}

/** The preset and plugins a compactor was built with (see `ResolvedConfig.applied`). */
export interface AppliedConfig {
  readonly preset: { readonly name: string; readonly request: string; readonly file: string };
  readonly plugins: readonly AppliedPlugin[];
}

/** Where a setting's value came from. */
export interface SettingSource {
  readonly from: "default" | "file" | "caller";
  /** JSON pointer in the config file, for `file`. */
  readonly path: string | null;
}
