/**
 * `register(api)`: what OpenClaw calls when it loads the plugin. It registers the context
 * engine `compaction` (selected with `plugins.slots.contextEngine: "compaction"`) and the
 * compaction provider `compaction` (selected with `agents.defaults.compaction.provider`).
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { CompactorCache } from "./compactor-cache.js";
import { CompactionEngine, ENGINE_ID, type TranscriptReader } from "./engine.js";
import { type EngineStore, openEngineStore } from "./engine-store.js";
import type { OpenClawPluginApi } from "./openclaw-api.js";
import { resolveOpenClawOptions } from "./options.js";
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
  const compactors = new CompactorCache({ trusted: options.projectCode, warn });
  const stores = new Map<string, EngineStore>();
  /** One store per records directory: the agent's own (`<agentDir>/compaction-plugin`) when OpenClaw says where that is. */
  const storeFor = (agentDir: string | undefined): EngineStore => {
    const dir = join(agentDir ?? join(homedir(), ".openclaw"), "compaction-plugin");
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
        version: VERSION,
      }),
  );
  api.registerCompactionProvider?.(
    compactionProvider(() => compactors.get({ cwd: options.cwd ?? process.cwd(), agent: options.agent, preset: options.preset })),
  );
}
