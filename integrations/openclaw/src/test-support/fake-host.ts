/**
 * A host that records what the plugin registers, with OpenClaw's keyed plugin-state store
 * modelled by maps ("untrusted": the store refuses the plugin, as OpenClaw 2026.9 does for a
 * plugin linked from a path).
 */
import type { CompactionProvider, ContextEngine, KeyedStore, OpenClawPluginApi, ToolFactory } from "../openclaw-api.js";
import { registerCompaction } from "../plugin.js";

export interface Registered {
  engine?: (ctx: object) => ContextEngine | Promise<ContextEngine>;
  provider?: CompactionProvider;
  tools: { factory: ToolFactory; name: string | undefined }[];
  warnings: string[];
  /** What the plugin logged as info (a compaction prepared in the background, put in place, dropped). */
  infos: string[];
}

export function fakeHost(pluginConfig: Record<string, unknown>, state: "trusted" | "untrusted" = "trusted", config?: OpenClawPluginApi["config"]) {
  const registered: Registered = { tools: [], warnings: [], infos: [] };
  const namespaces = new Map<string, Map<string, unknown>>();
  const api: OpenClawPluginApi = {
    ...(config === undefined ? {} : { config }),
    pluginConfig,
    logger: { info: (message) => registered.infos.push(message), warn: (message) => registered.warnings.push(message), error: (message) => registered.warnings.push(message) },
    runtime: {
      state: {
        openKeyedStore<T>(options: { namespace: string }): KeyedStore<T> {
          if (state === "untrusted") throw new Error('openKeyedStore is only available for trusted plugins in this release. Plugin "compaction" loaded with origin "config"');
          const map = namespaces.get(options.namespace) ?? new Map<string, unknown>();
          namespaces.set(options.namespace, map);
          return {
            register: async (key, value) => void map.set(key, structuredClone(value)),
            registerIfAbsent: async (key, value) => (map.has(key) ? false : (map.set(key, structuredClone(value)), true)),
            lookup: async (key) => structuredClone(map.get(key)) as T | undefined,
          };
        },
      },
    },
    registerContextEngine: (_id, factory) => {
      registered.engine = factory;
    },
    registerCompactionProvider: (provider) => {
      registered.provider = provider;
    },
    registerTool: (tool, options) => {
      if (typeof tool !== "function") throw new Error("the plugin registers its tools as factories");
      registered.tools.push({ factory: tool, name: options?.name });
    },
  };
  registerCompaction(api, { readTranscript: async () => undefined });
  return { registered, namespaces };
}
