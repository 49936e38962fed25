/**
 * The plugin's compactors: core's CompactorCache over pi's messages (OpenClaw's transcript holds
 * pi AgentMessages), kept for the plugin's lifetime.
 *
 * A project's code (a `.compactionrc.mjs`, a plugin file, a package in the project) is loaded
 * only when the user enables it in OpenClaw's config (`projectCode: true`): an agent's workspace
 * may be a repository anyone could have written. Data-only config always applies; what was
 * skipped is logged once per compactor.
 *
 * A compactor with recall gets recall's tool under the name this plugin registers in OpenClaw
 * (see recall-tool.ts), so rolling's eviction note and the shrink markers name a tool the agent has.
 */
import { type Compactor, CompactorCache as CoreCompactorCache, configWarnings, type PiMessage } from "@compaction/core";
import { withRecallTool } from "./recall-tool.js";

export interface CompactorKey {
  readonly cwd: string;
  readonly agent: string | undefined;
  readonly preset: string | undefined;
}

export interface CompactorCacheOptions {
  /** Load the project's code configuration and plugins (OpenClaw config `projectCode`). Default false. */
  readonly trusted?: boolean;
  /** Where skipped project code is reported. */
  readonly warn?: (message: string) => void;
  /** The name recall's tool has in this host. Default: the name the config gives it. */
  readonly recallTool?: string;
}

/** How an OpenClaw user trusts a workspace's code configuration. */
export const OPENCLAW_TRUST_HINT =
  "To load a workspace's code configuration and plugins, set plugins.entries.compaction.config.projectCode: true in openclaw.json.";

/** A build that has finished: its compactor, or its error. */
export type SettledCompactor = { readonly compactor: Compactor<PiMessage> } | { readonly error: unknown };

export class CompactorCache {
  readonly #cache: CoreCompactorCache<PiMessage>;
  readonly #trusted: boolean;
  readonly #recallTool: string | undefined;
  readonly #renamed = new WeakMap<Compactor<PiMessage>, Compactor<PiMessage>>();
  readonly #settled = new Map<string, SettledCompactor>();

  constructor(options: CompactorCacheOptions = {}) {
    this.#trusted = options.trusted ?? false;
    this.#recallTool = options.recallTool;
    const warn = options.warn ?? (() => undefined);
    this.#cache = new CoreCompactorCache<PiMessage>({
      adapter: "pi",
      trustHint: OPENCLAW_TRUST_HINT,
      onCreated: (compactor) => {
        for (const warning of configWarnings(compactor)) warn(`compaction: ${warning.message} ${warning.hint}`);
      },
    });
  }

  /** The compactor for `key`. Rejects with the config's CompactionError. */
  async get(key: CompactorKey): Promise<Compactor<PiMessage>> {
    const id = JSON.stringify([key.cwd, key.agent ?? null, key.preset ?? null]);
    let built: Compactor<PiMessage>;
    try {
      built = await this.#cache.get({ ...key, trusted: this.#trusted });
    } catch (error) {
      this.#settled.set(id, { error });
      throw error;
    }
    let compactor = this.#renamed.get(built);
    if (compactor === undefined) {
      compactor = this.#recallTool === undefined ? built : withRecallTool(built, this.#recallTool);
      this.#renamed.set(built, compactor);
    }
    this.#settled.set(id, { compactor });
    return compactor;
  }

  /** What the newest `get(key)` that finished gave, without waiting: undefined when none has finished. */
  settled(key: CompactorKey): SettledCompactor | undefined {
    return this.#settled.get(JSON.stringify([key.cwd, key.agent ?? null, key.preset ?? null]));
  }

  async dispose(): Promise<void> {
    this.#settled.clear();
    await this.#cache.dispose();
  }
}
