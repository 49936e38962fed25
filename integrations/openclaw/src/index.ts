/**
 * @compaction/openclaw: an OpenClaw plugin. Its context engine compacts each agent's context by
 * the agent's preset from `.compactionrc` (the OpenClaw agent id is the agent name) and prunes
 * old tool outputs in what is sent; its compaction provider writes summaries for OpenClaw's own
 * compaction. Install with `openclaw plugins install @compaction/openclaw` (or `-l <path>`).
 */
import type { OpenClawPluginApi } from "./openclaw-api.js";
import { PLUGIN_ID, registerCompaction } from "./plugin.js";

export { CompactionEngine, ENGINE_ID, type EngineDeps, type SessionLoop, type SessionLoops, type TranscriptReader } from "./engine.js";
export { compactionProvider, PROVIDER_ID } from "./summary-provider.js";
export { type EngineStore, fileEngineStore, memoryEngineStore, openEngineStore, type SessionCompaction } from "./engine-store.js";
export { anchorOf, findAnchor, type MessageAnchor } from "./anchor.js";
export { agentIdOfSessionKey, type OpenClawCompactionOptions, resolveOpenClawOptions, type ResolvedOpenClawOptions } from "./options.js";
export { PLUGIN_ID, registerCompaction, type RegisterOptions } from "./plugin.js";
export type * from "./openclaw-api.js";

/** The plugin entry OpenClaw loads (`openclaw.extensions` in package.json). */
const plugin = {
  id: PLUGIN_ID,
  name: "Compaction",
  description: "Context engine and compaction provider: compaction by the agent's preset from .compactionrc.",
  kind: "context-engine" as const,
  register(api: OpenClawPluginApi): void {
    registerCompaction(api);
  },
};

export default plugin;
