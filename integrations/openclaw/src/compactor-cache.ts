/**
 * The plugin's compactors: core's CompactorCache over pi's messages (OpenClaw's transcript holds
 * pi AgentMessages), kept for the plugin's lifetime.
 *
 * A project's code (a `.compactionrc.mjs`, a plugin file, a package in the project) is loaded
 * only when the user enables it in OpenClaw's config (`projectCode: true`): an agent's workspace
 * may be a repository anyone could have written. Data-only config always applies; what was
 * skipped is logged once per compactor.
 */
import { type Compactor, CompactorCache as CoreCompactorCache, configWarnings, type PiMessage } from "@compaction/core";

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
}

/** How an OpenClaw user trusts a workspace's code configuration. */
export const OPENCLAW_TRUST_HINT =
  "To load a workspace's code configuration and plugins, set plugins.entries.compaction.config.projectCode: true in openclaw.json.";

export class CompactorCache {
  readonly #cache: CoreCompactorCache<PiMessage>;
  readonly #trusted: boolean;

  constructor(options: CompactorCacheOptions = {}) {
    this.#trusted = options.trusted ?? false;
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
  get(key: CompactorKey): Promise<Compactor<PiMessage>> {
    return this.#cache.get({ ...key, trusted: this.#trusted });
  }

  async dispose(): Promise<void> {
    await this.#cache.dispose();
  }
}
