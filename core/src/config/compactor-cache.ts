/**
 * One Compactor per (config directory, agent, preset, trust), built from `.compactionrc` on first
 * use and kept for the host's lifetime: what a long-running host (the pi extension, the OpenClaw
 * plugin) needs so that each compaction does not load the config again. A failed build (an
 * invalid config) is not kept, so fixing the file takes effect on the next use.
 */
import type { Compactor } from "../compactor/compactor.js";
import type { MessageAdapter } from "../messages/adapter.js";
import { createCompactor } from "./create-compactor.js";
import type { AdapterName } from "./types.js";

/** Which compactor: where the config search starts, the agent section, a preset override, and whether the project may run code. */
export interface CompactorCacheKey {
  readonly cwd: string;
  readonly agent: string | undefined;
  readonly preset: string | undefined;
  /** false: no code config, no project plugin or preset files (see `createCompactor`'s `trusted`). */
  readonly trusted: boolean;
}

export interface CompactorCacheOptions<T> {
  /** The host's message format. */
  readonly adapter: AdapterName | MessageAdapter<T>;
  /** The host's words on how to trust a folder, for the config's warnings. */
  readonly trustHint?: string;
  /** Called once with each compactor built (e.g. to report what its config skipped). */
  readonly onCreated?: (compactor: Compactor<T>) => void;
}

export class CompactorCache<T> {
  readonly #compactors = new Map<string, Promise<Compactor<T>>>();
  readonly #options: CompactorCacheOptions<T>;

  constructor(options: CompactorCacheOptions<T>) {
    this.#options = options;
  }

  /** The compactor for `key`. Rejects with the config's error (a CompactionError with a code). */
  get(key: CompactorCacheKey): Promise<Compactor<T>> {
    const id = JSON.stringify([key.cwd, key.agent ?? null, key.preset ?? null, key.trusted]);
    const known = this.#compactors.get(id);
    if (known !== undefined) return known;
    const { adapter, trustHint, onCreated } = this.#options;
    const created = createCompactor<T>({
      cwd: key.cwd,
      adapter,
      trusted: key.trusted,
      ...(trustHint === undefined ? {} : { trustHint }),
      ...(key.agent === undefined ? {} : { agent: key.agent }),
      ...(key.preset === undefined ? {} : { preset: key.preset }),
    });
    this.#compactors.set(id, created);
    created.then(
      (compactor) => onCreated?.(compactor),
      () => {
        if (this.#compactors.get(id) === created) this.#compactors.delete(id);
      },
    );
    return created;
  }

  /** Frees every compactor's token counter. */
  async dispose(): Promise<void> {
    const all = [...this.#compactors.values()];
    this.#compactors.clear();
    for (const settled of await Promise.allSettled(all)) {
      if (settled.status === "fulfilled") settled.value.dispose();
    }
  }
}
