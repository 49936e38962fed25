/**
 * The extension refuses to load twice into one pi runtime (installed as a package and also listed
 * under `extensions`, or globally and in the project): two copies would each compact on
 * `session_before_compact` (pi keeps the last result), each prune what is sent, and each register
 * `memory_search`. Copies may come from different installations, so they find each other through
 * pi's event bus, which every extension of one runtime shares, not through module state.
 */
import { CompactionError, ErrorCodes } from "@compaction/core";
import type { ExtensionAPI } from "./pi-types.js";

/** The event-bus channel on which a loaded copy answers "who is there?". */
export const LOADED_CHANNEL = "@compaction/pi:loaded";

/** What a loaded copy says about itself. */
interface LoadedCopy {
  /** The module the copy was loaded from. */
  readonly from: string;
}

interface Probe {
  answer(copy: LoadedCopy): void;
}

/**
 * Claims the runtime for this copy, or throws COMPACTION_INPUT_INVALID when another copy already
 * holds it (pi then reports the extension as failed to load, with this message).
 */
export function claimRuntime(pi: Pick<ExtensionAPI, "events">, from: string): void {
  let loaded: LoadedCopy | undefined;
  // pi's event bus calls handlers synchronously, so a loaded copy has answered when emit returns.
  pi.events.emit(LOADED_CHANNEL, { answer: (copy) => (loaded ??= copy) } satisfies Probe);
  if (loaded !== undefined) {
    const same = loaded.from === from;
    throw new CompactionError(
      ErrorCodes.INPUT_INVALID,
      `@compaction/pi is already loaded in this pi session (from ${loaded.from}); this copy${same ? "" : ` (from ${from})`} was not loaded, so compaction runs once.`,
      {
        hint: "Load the extension once: remove it from one of pi's package lists (pi remove, settings.json 'packages'), its 'extensions' list, .pi/extensions/ or the -e flags.",
      },
    );
  }
  pi.events.on(LOADED_CHANNEL, (data) => {
    (data as Probe).answer({ from });
  });
}
