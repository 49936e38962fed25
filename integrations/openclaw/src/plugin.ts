/**
 * `register(api)`: what OpenClaw calls when it loads the plugin. It registers the context
 * engine `compaction` (selected with `plugins.slots.contextEngine: "compaction"`), the
 * compaction provider `compaction` (selected with `agents.defaults.compaction.provider`), and
 * recall's tool `compaction_recall` for the agents whose preset has recall (see recall-tool.ts).
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { recallSettings } from "@compaction/plugin-recall";
import { compactorFor, type SessionWhere, settledCompactorFor } from "./agent-compactor.js";
import { CompactorCache } from "./compactor-cache.js";
import { CompactionEngine, ENGINE_ID, type SessionLoops, type TranscriptReader } from "./engine.js";
import { type EngineStore, openEngineStore } from "./engine-store.js";
import type { AgentTool, OpenClawPluginApi, ToolFactoryContext } from "./openclaw-api.js";
import { resolveOpenClawOptions } from "./options.js";
import { RECALL_TOOL_NAME, SessionRecall } from "./recall-tool.js";
import { compactionProvider } from "./summary-provider.js";
import { readTranscriptThroughOpenClaw } from "./transcript-reader.js";

export const PLUGIN_ID = "compaction";

const VERSION = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;

export interface RegisterOptions {
  /** How `compact` reads a session the engine has not seen in this process. Default: OpenClaw's transcript accessor. */
  readonly readTranscript?: TranscriptReader;
}

export function registerCompaction(api: OpenClawPluginApi, registerOptions: RegisterOptions = {}): void {
  const options = resolveOpenClawOptions(api.pluginConfig);
  const warn = (message: string): void => (api.logger ? api.logger.warn(message) : console.warn(message));
  const compactors = new CompactorCache({ trusted: options.projectCode, warn, recallTool: RECALL_TOOL_NAME });
  const stores = new Map<string, EngineStore>();
  /** Each session's host loop, for every engine OpenClaw makes (one per run): see EngineDeps.loops. */
  const loops: SessionLoops = new Map();
  /** The plugin's records of an agent: `<agentDir>/compaction-plugin` when OpenClaw says where that is. */
  const recordsDir = (agentDir: string | undefined): string => join(agentDir ?? join(homedir(), ".openclaw"), "compaction-plugin");
  const recall = new SessionRecall({ recordsDir, toolName: RECALL_TOOL_NAME });
  /** One store per records directory. */
  const storeFor = (agentDir: string | undefined): EngineStore => {
    const dir = recordsDir(agentDir);
    let store = stores.get(dir);
    if (store === undefined) {
      store = openEngineStore(api, dir, (reason) => warn(`compaction: ${reason}; compactions are kept in ${dir} instead.`));
      stores.set(dir, store);
    }
    return store;
  };
  api.registerContextEngine(
    ENGINE_ID,
    (factory) =>
      new CompactionEngine({
        options,
        store: storeFor(factory.agentDir),
        compactors,
        factory,
        readTranscript: registerOptions.readTranscript ?? readTranscriptThroughOpenClaw,
        warn,
        info: (message) => api.logger?.info(message),
        version: VERSION,
        recall,
        loops,
      }),
  );
  api.registerTool?.((ctx) => recallToolFor(ctx), { name: recall.toolName });
  /**
   * Recall's tool for one run: only where this engine holds the context-engine slot (it is the
   * one that evicts), and not for an agent whose compactor is known to have no recall.
   */
  function recallToolFor(ctx: ToolFactoryContext): AgentTool | null {
    const slot = ctx.config?.plugins?.slots?.contextEngine;
    if (ctx.sessionId === undefined || (ctx.config !== undefined && slot !== ENGINE_ID)) return null;
    const where: SessionWhere = { workspaceDir: ctx.workspaceDir, sessionKey: ctx.sessionKey, agentId: ctx.agentId };
    const load = () => compactorFor(compactors, options, where);
    const known = settledCompactorFor(compactors, options, where);
    if (known === null || (known !== undefined && recallSettings(known) === undefined)) return null;
    if (known === undefined) load().catch(() => undefined); // built now, so the next run knows
    return recall.tool({ agentDir: ctx.agentDir, sessionId: ctx.sessionId }, known, load);
  }
  // OpenClaw does not tell a provider's summarize() which agent it summarizes for: the config is
  // found from the plugin's `cwd`, else the agents' default workspace, with the plugin's `agent` section.
  const providerCwd = options.cwd ?? defaultWorkspace(api) ?? process.cwd();
  api.registerCompactionProvider?.(compactionProvider(() => compactors.get({ cwd: providerCwd, agent: options.agent, preset: options.preset })));
}

/** `agents.defaults.workspace` of OpenClaw's config (`~` is the home directory), or undefined. */
function defaultWorkspace(api: OpenClawPluginApi): string | undefined {
  const workspace = api.config?.agents?.defaults?.workspace;
  if (typeof workspace !== "string" || workspace.trim() === "") return undefined;
  return workspace === "~" || workspace.startsWith("~/") ? join(homedir(), workspace.slice(1)) : workspace;
}
