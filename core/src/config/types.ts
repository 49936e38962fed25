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
  /** The agent whose section was applied, or null for the top level. */
  readonly agent: string | null;
  readonly preset: string;
  readonly contextWindow: number;
  /** Tokens kept free for the reply; the compaction budget is contextWindow - reserveTokens. */
  readonly reserveTokens: number;
  readonly adapter: AdapterName;
  /** `ratio`: provider tokens per counted token, when the config gives it (else learned from usage). */
  readonly tokenizer: { readonly counter: TokenCounterName; readonly encoding: string; readonly ratio?: number };
  readonly summarizer: { readonly name: string; readonly maxTokens: number };
  readonly autoCompact: { readonly enabled: boolean; readonly threshold?: number; readonly maxAutoCompactions?: number };
  readonly plugins: readonly PluginEntryConfig[];
  readonly options: PluginOptionsConfig;
}
