/**
 * New entries made whole inside a write transaction by transcript's `assignEntryFields`, as
 * every store makes them: a missing `id` becomes a fresh 8-hex-digit id, a missing `parentId` the
 * entry before it (the first one's: the leaf read under the session's lock), a missing
 * `timestamp` now, in pi's key order. What only a database can answer is asked here: which of
 * the ids and parents the caller gave are the session's rows, and which fresh ids are free.
 */
import { randomUUID } from "node:crypto";
import { CompactionError, ErrorCodes } from "@compaction/core";
import { assignEntryFields, type NewEntry, type SessionEntry } from "@compaction/transcript";
import type pg from "pg";

/** `entries` with their ids, parents and timestamps, checked against the session `session`. */
export async function assignNewEntries(
  client: pg.ClientBase,
  schema: string,
  session: string,
  entries: readonly NewEntry[],
  leafId: string | null,
  location: string,
): Promise<SessionEntry[]> {
  // An entry that is not an object is refused by assignEntryFields, with its index.
  const field = (entry: unknown, name: "id" | "parentId") => (typeof entry === "object" && entry !== null ? (entry as Record<string, unknown>)[name] : undefined);
  const given = entries.map((entry) => field(entry, "id")).filter((id): id is string => typeof id === "string");
  const parents = entries.map((entry) => field(entry, "parentId")).filter((id): id is string => typeof id === "string");
  const existing = await existingIds(client, schema, session, [...new Set([...given, ...parents])]);
  const fresh = await freshIds(client, schema, session, entries.filter((entry) => field(entry, "id") === undefined).length, new Set(given));
  const taken = new Set(given.filter((id) => existing.has(id)));
  const assigned = assignEntryFields(entries, leafId, taken, { newId: () => fresh.pop() as string, location });
  const earlier = new Set<string>();
  assigned.forEach((entry, index) => {
    const parent = entry.parentId;
    if (parent !== null && parent !== leafId && !existing.has(parent) && !earlier.has(parent)) {
      throw new CompactionError(ErrorCodes.TRANSCRIPT_INVALID, `New entry ${index} names parent "${parent}", which is not an entry of the session; nothing was written to ${location}.`, {
        file: location,
        hint: "Leave `parentId` out to append after the leaf, or name an entry of this session.",
      });
    }
    earlier.add(entry.id);
  });
  return assigned;
}

/** Those of `ids` that are entries of the session. */
async function existingIds(client: pg.ClientBase, schema: string, session: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  return new Set((await client.query<{ id: string }>(`SELECT id FROM ${schema}.entries WHERE session_id = $1 AND id = ANY($2::text[])`, [session, ids])).rows.map((row) => row.id));
}

/**
 * `count` new ids, 8 hex digits as pi makes them, none of them in `given` or already in the
 * session. (Drawn at random, they collide with older ones in a long session: at a million entries
 * a batch of thousands meets a few; those are drawn again.)
 */
async function freshIds(client: pg.ClientBase, schema: string, session: string, count: number, given: ReadonlySet<string>): Promise<string[]> {
  const ids = new Set<string>();
  let wanted = count;
  while (wanted > 0) {
    const drawnSet = new Set<string>();
    while (drawnSet.size < wanted) {
      const id = randomUUID().slice(0, 8);
      if (!given.has(id) && !ids.has(id)) drawnSet.add(id);
    }
    const drawn = [...drawnSet];
    const used = await existingIds(client, schema, session, drawn);
    for (const id of drawn) if (!used.has(id)) ids.add(id);
    wanted = count - ids.size;
  }
  return [...ids].reverse();
}
