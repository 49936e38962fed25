/**
 * Per-session settings kept in the session file itself, as pi `custom` entries (which pi and
 * pi's context building skip, as they do other extensions' state). The latest one on the
 * branch wins, so branching a session keeps its settings.
 */
import type { NewEntry } from "./new-entries.js";
import type { SessionEntry } from "./types.js";

/** `customType` of the entry that turns auto-compaction on or off for one session. */
export const AUTO_COMPACT_CUSTOM_TYPE = "compaction.autoCompact";

/** The `data` of an auto-compaction entry. */
export interface AutoCompactSetting {
  readonly enabled: boolean;
}

/**
 * The session's own auto-compaction setting: the latest auto-compaction entry on `branch`
 * (root-most first), or undefined when the session never set one (the config decides).
 */
export function sessionAutoCompact(branch: readonly SessionEntry[]): boolean | undefined {
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry = branch[i] as SessionEntry;
    if (entry.type !== "custom" || entry["customType"] !== AUTO_COMPACT_CUSTOM_TYPE) continue;
    const data = entry["data"];
    if (typeof data === "object" && data !== null && typeof (data as Record<string, unknown>)["enabled"] === "boolean") {
      return (data as AutoCompactSetting).enabled;
    }
  }
  return undefined;
}

/** The entry to append to set auto-compaction for the session. */
export function autoCompactEntry(enabled: boolean): NewEntry {
  return { type: "custom", customType: AUTO_COMPACT_CUSTOM_TYPE, data: { enabled } satisfies AutoCompactSetting };
}
