import type { Compactor } from "./compactor.js";

/**
 * A plugin taps the compactor's hooks, each tap carrying the plugin's name.
 * Plugin packages export a factory: `rolling(options) -> { name, apply(compactor) }`.
 */
export interface CompactionPlugin {
  readonly name: string;
  /**
   * Capabilities this plugin gives the agent, for other plugins to look up with
   * `compactor.provides(name)` (e.g. a recall plugin provides `memory_search`).
   */
  readonly provides?: readonly string[];
  /**
   * The options in force, defaults filled in, for people to read (`compaction config` shows
   * them). Optional; the built-in plugins set it.
   */
  readonly options?: Readonly<Record<string, unknown>>;
  // biome-ignore lint: plugins work with any message type
  apply(compactor: Compactor<any>): void;
}

/** A plugin factory, as a plugin package's default export. */
export type PluginFactory<O = Record<string, unknown>> = (options?: O) => CompactionPlugin;

/** One entry of a preset: a plugin name or path, a factory, or either with options. */
export type PresetEntry =
  | string
  | PluginFactory<any>
  | readonly [string | PluginFactory<any>, Record<string, unknown>?];

/**
 * A preset is data: a list of plugins with options, nothing else. Entries given by name or
 * path resolve relative to the preset's own file.
 */
export interface Preset {
  readonly name?: string;
  readonly plugins: readonly PresetEntry[];
  /**
   * When the host should compact on its own: above this share of the context window (0..1).
   * A config's `autoCompact.threshold` overrides it.
   */
  readonly autoCompact?: { readonly threshold?: number };
}
