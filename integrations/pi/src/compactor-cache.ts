/**
 * The extension's compactors: core's CompactorCache over pi's messages, kept for the extension's
 * lifetime (a changed `.compactionrc` is read after pi's `/reload`).
 */
import { CompactorCache as CoreCompactorCache, type CompactorCacheKey, type PiMessage } from "@compaction/core";

/** Which compactor: where the config search starts, the agent section, a preset override, and whether the project may run code. */
export type CompactorKey = CompactorCacheKey;

/** What the config's warnings say to do when pi's project trust kept project code from loading. */
export const PI_TRUST_HINT = "To load it, trust this folder in pi: answer pi's trust question, or run /trust and restart pi.";

export class CompactorCache extends CoreCompactorCache<PiMessage> {
  constructor() {
    super({ adapter: "pi", trustHint: PI_TRUST_HINT });
  }
}
