/** The Compactor from the project's config, reading messages in the transcript's format. */
import { type AdapterName, createCompactor, type Compactor, type ResolvedConfig } from "@compaction/core";

export interface CompactorChoice {
  /** `--agent`: the config section to apply. */
  readonly agent?: string | undefined;
  /** `--preset`: run this preset instead of the configured one. */
  readonly preset?: string | undefined;
  /**
   * The transcript's message format. The file decides it, not the config's `adapter` (which
   * describes a host's in-memory messages): a pi session holds pi messages whatever the config says.
   */
  readonly adapter?: AdapterName;
}

/** A compactor for `cwd`'s config with the agent's section, the preset and the adapter applied. */
export async function loadCompactor(cwd: string, choice: CompactorChoice = {}): Promise<Compactor<unknown>> {
  return createCompactor<unknown>({
    cwd,
    adapter: choice.adapter ?? "pi",
    ...(choice.agent === undefined ? {} : { agent: choice.agent }),
    ...(choice.preset === undefined ? {} : { preset: choice.preset }),
  });
}

/** The config the compactor was built from. */
export function configOf(compactor: Compactor<unknown>): ResolvedConfig {
  return compactor.config as ResolvedConfig;
}
