/**
 * In-memory migration of older session files to version 3, with the same meaning as
 * pi-coding-agent's migrateV1ToV2 / migrateV2ToV3. Nothing is mutated and nothing is written:
 * an entry that changes is a new object, one that does not is shared with the input.
 *
 * Version 1 entries have no ids. pi gives them random ids (and rewrites the file); we derive
 * them from the line number instead (`l00000042` for line 42), so reading the same file twice
 * gives the same ids and an id the user copied (`--at l00000042`) still names the same entry.
 */
import { CURRENT_SESSION_VERSION, type RawSessionEntry, type SessionEntry, type SessionHeader } from "./types.js";

/** The id a version 1 entry on this 1-based line gets: `l` and the line number, 8 digits or more. */
export function v1EntryId(line: number): string {
  return `l${String(line).padStart(8, "0")}`;
}

/**
 * Brings entries to version 3. `lines` holds each entry's 1-based line number (used for
 * version 1 ids); without it, entry i is taken to be on line i + 2 (the header on line 1).
 * Version 3 (and later) entries are returned as they are (nothing to change).
 */
export function migrateEntries(
  header: SessionHeader,
  entries: readonly RawSessionEntry[],
  lines?: readonly number[],
): SessionEntry[] {
  const version = header.version ?? 1;
  if (version >= CURRENT_SESSION_VERSION) return entries as unknown as SessionEntry[];
  const withIds = version < 2 ? addIds(entries, lines) : entries;
  return renameHookMessages(withIds) as unknown as SessionEntry[];
}

/** v1 -> v2: ids, a linear parent chain, and `firstKeptEntryIndex` -> `firstKeptEntryId`. */
function addIds(entries: readonly RawSessionEntry[], lines: readonly number[] | undefined): RawSessionEntry[] {
  const ids = entries.map((_, i) => v1EntryId(lines?.[i] ?? i + 2));
  return entries.map((entry, i) => {
    const id = ids[i] as string;
    const parentId = i === 0 ? null : (ids[i - 1] as string);
    if (entry.type !== "compaction" || typeof entry.firstKeptEntryIndex !== "number") return { ...entry, id, parentId };
    const { firstKeptEntryIndex, firstKeptEntryId: _old, ...rest } = entry;
    // pi's index counts the header as entry 0. Like pi, an index that names the header, no
    // entry, or an entry that pi had not given an id yet (a later one) resolves to nothing.
    const target = (firstKeptEntryIndex as number) - 1;
    const resolved = Number.isInteger(target) && target >= 0 && target <= i ? ids[target] : undefined;
    return resolved === undefined ? { ...rest, id, parentId } : { ...rest, id, parentId, firstKeptEntryId: resolved };
  });
}

/** v2 -> v3: messages with role `hookMessage` become role `custom`. */
function renameHookMessages(entries: readonly RawSessionEntry[]): RawSessionEntry[] {
  return entries.map((entry) => {
    const message = entry.message as Record<string, unknown> | null | undefined;
    if (entry.type !== "message" || typeof message !== "object" || message === null || message.role !== "hookMessage") return entry;
    return { ...entry, message: { ...message, role: "custom" } };
  });
}
