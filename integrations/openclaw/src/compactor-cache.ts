/**
 * One Compactor per (config directory, agent, preset), built on first use and kept for the
 * plugin's lifetime. A failed build (an invalid `.compactionrc`) is not kept, so fixing the
 * file takes effect on the next call.
 */
import { type Compactor, createCompactor, type PiMessage } from "@compaction/core";

export interface CompactorKey {
  readonly cwd: string;
  readonly agent: string | undefined;
  readonly preset: string | undefined;
}

export class CompactorCache {
  readonly #compactors = new Map<string, Promise<Compactor<PiMessage>>>();

  /** The compactor for `key` (pi's messages: OpenClaw's transcript holds pi AgentMessages). Rejects with the config's CompactionError. */
  get(key: CompactorKey): Promise<Compactor<PiMessage>> {
    const id = JSON.stringify([key.cwd, key.agent ?? null, key.preset ?? null]);
    const known = this.#compactors.get(id);
    if (known !== undefined) return known;
    const created = createCompactor<PiMessage>({
      cwd: key.cwd,
      adapter: "pi",
      ...(key.agent === undefined ? {} : { agent: key.agent }),
      ...(key.preset === undefined ? {} : { preset: key.preset }),
    });
    this.#compactors.set(id, created);
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
