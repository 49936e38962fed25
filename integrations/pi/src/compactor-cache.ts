/**
 * One Compactor per (config directory, agent, preset, trust), built on first use and kept for the
 * extension's lifetime (a changed `.compactionrc` is read after pi's `/reload`). A failed build
 * (an invalid config) is not kept, so fixing the file takes effect on the next use.
 */
import { type Compactor, createCompactor, type PiMessage } from "@compaction/core";

/** Which compactor: where the config search starts, the agent section, a preset override, and whether the project may run code. */
export interface CompactorKey {
  readonly cwd: string;
  readonly agent: string | undefined;
  readonly preset: string | undefined;
  /** false: no code config, no project plugin or preset files (see @compaction/core's `trusted`). */
  readonly trusted: boolean;
}

/** What the config's warnings say to do when pi's project trust kept project code from loading. */
export const PI_TRUST_HINT = "To load it, trust this folder in pi: answer pi's trust question, or run /trust and restart pi.";

export class CompactorCache {
  readonly #compactors = new Map<string, Promise<Compactor<PiMessage>>>();

  /** The compactor for `key`, reading pi's messages. Rejects with the config's error (a CompactionError with a code). */
  get(key: CompactorKey): Promise<Compactor<PiMessage>> {
    const id = JSON.stringify([key.cwd, key.agent ?? null, key.preset ?? null, key.trusted]);
    const known = this.#compactors.get(id);
    if (known !== undefined) return known;
    const created = createCompactor<PiMessage>({
      cwd: key.cwd,
      adapter: "pi",
      trusted: key.trusted,
      trustHint: PI_TRUST_HINT,
      ...(key.agent === undefined ? {} : { agent: key.agent }),
      ...(key.preset === undefined ? {} : { preset: key.preset }),
    });
    this.#compactors.set(id, created);
    created.catch(() => {
      if (this.#compactors.get(id) === created) this.#compactors.delete(id);
    });
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
