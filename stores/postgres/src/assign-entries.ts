/**
 * New entries made whole inside a write transaction, as transcript's appends make them: a
 * missing `id` becomes a fresh 8-hex-digit id, a missing `parentId` the entry before it (the
 * first one's: the leaf read under the session's lock), a missing `timestamp` now, in pi's key
 * order. Ids and parents the caller gave are checked against the session's rows.
 */
import { randomUUID } from "node:crypto";
import { CompactionError, ErrorCodes } from "@compaction/core";
import type { NewEntry, SessionEntry } from "@compaction/transcript";
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
  entries.forEach(checkNewEntry);
  const given = entries.map((entry) => (entry as { id?: unknown }).id).filter((id): id is string => typeof id === "string");
  const parents = entries.map((entry) => (entry as { parentId?: unknown }).parentId).filter((id): id is string => typeof id === "string");
  const asked = [...new Set([...given, ...parents])];
  const existing =
    asked.length === 0
      ? new Set<string>()
      : new Set((await client.query<{ id: string }>(`SELECT id FROM ${schema}.entries WHERE session_id = $1 AND id = ANY($2::text[])`, [session, asked])).rows.map((row) => row.id));
  const fresh = await freshIds(client, schema, session, entries.filter((entry) => (entry as { id?: unknown }).id === undefined).length, new Set(given));
  const taken = new Set<string>();
  const now = new Date().toISOString();
  const assigned: SessionEntry[] = [];
  let parent = leafId;
  entries.forEach((entry, index) => {
    const { type, id, parentId: ownParent, timestamp, ...rest } = entry as NewEntry & Record<string, unknown>;
    if (id !== undefined && (existing.has(id) || taken.has(id))) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `New entry ${index} has id "${id}", which the session already uses; nothing was written to ${location}.`, {
        file: location,
        hint: "Leave `id` out to have a fresh one assigned.",
      });
    }
    const entryParent = ownParent === undefined ? parent : ownParent;
    if (entryParent !== null && entryParent !== leafId && !existing.has(entryParent) && !taken.has(entryParent)) {
      throw new CompactionError(ErrorCodes.TRANSCRIPT_INVALID, `New entry ${index} names parent "${entryParent}", which is not an entry of the session; nothing was written to ${location}.`, {
        file: location,
        hint: "Leave `parentId` out to append after the leaf, or name an entry of this session.",
      });
    }
    const entryId = id ?? (fresh.pop() as string);
    taken.add(entryId);
    assigned.push({ type, id: entryId, parentId: entryParent, timestamp: timestamp ?? now, ...rest } as unknown as SessionEntry);
    parent = entryId;
  });
  return assigned;
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
    const used = new Set(
      (await client.query<{ id: string }>(`SELECT id FROM ${schema}.entries WHERE session_id = $1 AND id = ANY($2::text[])`, [session, drawn])).rows.map((row) => row.id),
    );
    for (const id of drawn) if (!used.has(id)) ids.add(id);
    wanted = count - ids.size;
  }
  return [...ids].reverse();
}

function checkNewEntry(entry: unknown, index: number): void {
  const problem = newEntryProblem(entry);
  if (problem === undefined) return;
  throw new CompactionError(ErrorCodes.INPUT_INVALID, `New entry ${index} is not a session entry: ${problem}.`, {
    hint: 'Pass objects like { type: "message", message: { role: "user", content: "...", timestamp } }.',
  });
}

function newEntryProblem(entry: unknown): string | undefined {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return `found ${Array.isArray(entry) ? "an array" : String(entry)}`;
  const fields = entry as Record<string, unknown>;
  if (typeof fields["type"] !== "string" || fields["type"] === "") return "it has no `type`";
  if (fields["type"] === "session") return 'its type is "session" (the header is written once, when the session is made)';
  if (fields["type"] !== "message") return undefined;
  const message = fields["message"] as Record<string, unknown> | null | undefined;
  if (typeof message !== "object" || message === null || typeof message["role"] !== "string") {
    return "it is a message entry without a `message` that has a `role`";
  }
  return undefined;
}
