import type { Compactor } from "./compactor.js";

/**
 * A plugin taps the compactor's hooks, each tap carrying the plugin's name.
 * Plugin packages export a factory: `rolling(options) -> { name, apply(compactor) }`.
 */
export interface CompactionPlugin {
  readonly name: string;
  // biome-ignore lint: plugins work with any message type
  apply(compactor: Compactor<any>): void;
}

/** A plugin factory, as a plugin package's default export. */
export type PluginFactory<O = Record<string, unknown>> = (options?: O) => CompactionPlugin;

/**
 * A preset is data: a list of plugins with options, nothing else.
 * Each entry is a factory, or a factory with its options.
 */
export interface Preset {
  readonly name?: string;
  readonly plugins: ReadonlyArray<PluginFactory<any> | readonly [PluginFactory<any>, Record<string, unknown>?]>;
}
