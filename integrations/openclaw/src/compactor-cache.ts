/**
 * One Compactor per (config directory, agent, preset), built on first use and kept for the
 * plugin's lifetime. A failed build (an invalid `.compactionrc`) is not kept, so fixing the
 * file takes effect on the next call.
 *
 * A project's code (a `.compactionrc.mjs`, a plugin file, a package in the project) is loaded
 * only when the user enables it in OpenClaw's config (`projectCode: true`): an agent's workspace
 * may be a repository anyone could have written. Data-only config always applies; what was
 * skipped is logged once per compactor.
 */
import { type Compactor, configWarnings, createCompactor, type PiMessage } from "@compaction/core";

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
  readonly #compactors = new Map<string, Promise<Compactor<PiMessage>>>();
  readonly #trusted: boolean;
  readonly #warn: (message: string) => void;

  constructor(options: CompactorCacheOptions = {}) {
    this.#trusted = options.trusted ?? false;
    this.#warn = options.warn ?? (() => undefined);
  }

  /** The compactor for `key` (pi's messages: OpenClaw's transcript holds pi AgentMessages). Rejects with the config's CompactionError. */
  get(key: CompactorKey): Promise<Compactor<PiMessage>> {
    const id = JSON.stringify([key.cwd, key.agent ?? null, key.preset ?? null]);
    const known = this.#compactors.get(id);
    if (known !== undefined) return known;
    const created = createCompactor<PiMessage>({
      cwd: key.cwd,
      adapter: "pi",
      trusted: this.#trusted,
      trustHint: OPENCLAW_TRUST_HINT,
      ...(key.agent === undefined ? {} : { agent: key.agent }),
      ...(key.preset === undefined ? {} : { preset: key.preset }),
    });
    this.#compactors.set(id, created);
    created.then(
      (compactor) => {
        for (const warning of configWarnings(compactor)) this.#warn(`compaction: ${warning.message} ${warning.hint}`);
      },
      () => undefined,
    );
    created.catch(() => {
      if (this.#compactors.get(id) === created) this.#compactors.delete(id);
    });
    return created;
  }

  async dispose(): Promise<void> {
    const all = [...this.#compactors.values()];
    this.#compactors.clear();
    for (const settled of await Promise.allSettled(all)) {
      if (settled.status === "fulfilled") settled.value.dispose();
    }
  }
}
