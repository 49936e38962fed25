/** Configuration: finding and validating `.compactionrc`, name resolution, and createCompactor. */
export { compactionSchema, compactionSchemaPath } from "./schema.js";
export { ConfigError, type ConfigErrorDetails, type ConfigProblem } from "./config-error.js";
export { CONFIG_MODULE_NAME, loadConfig, type LoadConfigOptions } from "./load-config.js";
export {
  BUILTIN_PLUGINS,
  BUILTIN_PRESETS,
  resolvePlugin,
  resolvePreset,
  type LoadedPlugin,
  type LoadedPreset,
  type ModuleKind,
  type PresetDefinition,
  type ResolveContext,
} from "./resolve-module.js";
export { BUILTIN_SUMMARIZERS, createCompactor, type CreateCompactorOptions } from "./create-compactor.js";
export type {
  AdapterName,
  AgentConfig,
  AutoCompactConfig,
  CompactionConfig,
  PluginEntryConfig,
  PluginOptionsConfig,
  ResolvedConfig,
  SummarizerConfig,
  TokenCounterName,
  TokenizerConfig,
} from "./types.js";
export { createOptionsValidator } from "./plugin-options.js";
