/**
 * The write side of a session file: appending entries and compactions under an exclusive lock.
 *
 * Every append takes the file's lock (proper-lockfile: a `<file>.lock` directory, refreshed while
 * held and taken over once stale), re-reads the current leaf from the file's tail under that lock,
 * and writes all new lines with one `write` on a descriptor opened for appending, then fsyncs.
 * Complete lines are never rewritten. If a crash left half a line at the end (an entry that was
 * never committed), that fragment is first moved, byte for byte, to `<file>.incomplete` (fsynced)
 * and cut from the session, so the file always loads and nothing is lost; a last line that is
 * whole but lacks its newline only gets the newline.
 */
import { type FileHandle, open } from "node:fs/promises";
import { CompactionError, type CompactionResult, ErrorCodes } from "@compaction/core";
import { readEntryLinks, readTail, requireAppendableHeader } from "./append-context.js";
import { assignEntryFields, type NewEntry } from "./new-entries.js";
import { type SessionLockOptions, withSessionLock } from "./session-lock.js";
import { unknownEntryError } from "./transcript-error.js";
import type { CompactionEntry, SessionEntry } from "./types.js";

/** Half a line a crashed writer left at the end of the file, moved aside before an append. */
export interface SetAsideTail {
  /** Where it went: `<file>.incomplete`, appended to (an earlier fragment stays there too). */
  readonly path: string;
  readonly bytes: number;
}

export interface AppendOptions {
  /**
   * Parent of the first new entry. Default: the current leaf (the last entry line in the file),
   * read under the lock. Must be the id of an entry in the file, or null for a new root.
   */
  readonly parentId?: string | null;
  readonly lock?: SessionLockOptions;
  /** Called when the append moved an incomplete last line to `<file>.incomplete`, so a host can say so. */
  readonly onSetAside?: (aside: SetAsideTail) => void;
}

export interface AppendCompactionOptions {
  /** Id of the first entry kept verbatim after the summary; must be on the branch being extended. */
  readonly firstKeptEntryId: string;
  /** Context size before the compaction. Default: `result.tokensBefore`. */
  readonly tokensBefore?: number;
  readonly parentId?: string | null;
  readonly lock?: SessionLockOptions;
  /** See `AppendOptions.onSetAside`. */
  readonly onSetAside?: (aside: SetAsideTail) => void;
}

/**
 * Appends `entries` to the version-3 session file at `path`, each one line, linked into the tree
 * (the first to the current leaf unless `parentId` is given). Returns the entries as written.
 *
 * Ids: 8 hex digits as pi makes them, checked against the batch and the ids in the last 64-128
 * KiB of the file, not the whole file (that would cost a full read per append); with an explicit
 * `parentId` or for a compaction, the whole file is scanned anyway and every id is checked. Like
 * pi, this accepts the small chance of reusing an older id: about n / 4.3e9 per new entry in a
 * file of n entries.
 */
export async function appendEntries(path: string, entries: readonly NewEntry[], options: AppendOptions = {}): Promise<SessionEntry[]> {
  return withSessionLock(path, (stillHeld) => appendUnderLock(path, entries, options.parentId, stillHeld, undefined, options.onSetAside), options.lock);
}

/**
 * `appendEntries` for a caller that already holds the file's lock (`withSessionLock`) and has
 * checked what it needed under it: appends after the leaf as read now. Not exported from the package.
 */
export function appendEntriesHeld(path: string, entries: readonly NewEntry[], stillHeld: () => void): Promise<SessionEntry[]> {
  return appendUnderLock(path, entries, undefined, stillHeld);
}

async function appendUnderLock(
  path: string,
  entries: readonly NewEntry[],
  parentOption: string | null | undefined,
  stillHeld: () => void,
  check?: (parentId: string | null, links: ReadonlyMap<string, string | null>) => void,
  onSetAside?: (aside: SetAsideTail) => void,
): Promise<SessionEntry[]> {
  const handle = await open(path, "a+");
  try {
    const size = (await handle.stat()).size;
    await requireAppendableHeader(handle, path, size);
    const tail = await readTail(handle, size);
    const parentId = parentOption === undefined ? tail.leafId : parentOption;
    const taken = new Set(tail.ids);
    if (check !== undefined || (parentOption !== undefined && parentOption !== null && parentOption !== tail.leafId)) {
      const links = await readEntryLinks(path, size);
      for (const id of links.keys()) taken.add(id);
      if (parentId !== null && !links.has(parentId)) throw unknownEntryError(path, parentId, links.keys(), tail.leafId ?? undefined);
      check?.(parentId, links);
    }
    const written = assignEntryFields(entries, parentId, taken);
    if (written.length === 0) return written;
    stillHeld();
    if (tail.incompleteBytes > 0) {
      await setAsideIncompleteTail(handle, path, size, tail.incompleteBytes);
      onSetAside?.({ path: `${path}.incomplete`, bytes: tail.incompleteBytes });
    }
    const newline = tail.endsWithNewline || tail.incompleteBytes > 0 ? "" : "\n";
    const text = `${newline}${written.map((entry) => JSON.stringify(entry)).join("\n")}\n`;
    await writeAll(handle, Buffer.from(text, "utf8"));
    await handle.sync();
    return written;
  } finally {
    await handle.close();
  }
}

/**
 * Moves half a line a crashed writer left at the end of the file to `<file>.incomplete`
 * (appended and fsynced first, so the bytes exist somewhere at every moment), then cuts it from
 * the session file.
 */
async function setAsideIncompleteTail(handle: FileHandle, path: string, size: number, bytes: number): Promise<void> {
  const fragment = Buffer.alloc(bytes);
  await handle.read(fragment, 0, bytes, size - bytes);
  const aside = await open(`${path}.incomplete`, "a");
  try {
    await writeAll(aside, Buffer.concat([fragment, Buffer.from("\n")]));
    await aside.sync();
  } finally {
    await aside.close();
  }
  await handle.truncate(size - bytes);
}

/**
 * Appends a `compaction` entry for `result` (which must have compacted): `summary`,
 * `firstKeptEntryId`, `tokensBefore`, and the CompactionEvent as `details`, the shape pi itself
 * writes, so pi loads the file and builds the same context. `firstKeptEntryId` must be on the
 * branch the entry extends (else pi would silently keep nothing); checked under the lock.
 */
export async function appendCompaction(
  path: string,
  result: Pick<CompactionResult<unknown>, "status" | "summary" | "event" | "tokensBefore">,
  options: AppendCompactionOptions,
): Promise<CompactionEntry> {
  if (result.status !== "compacted" || result.event === null || result.summary === null) {
    throw new CompactionError(
      ErrorCodes.INPUT_INVALID,
      `Only a compaction that compacted can be appended, but the result's status is "${result.status}"${result.event === null ? " and it has no event" : ""}.`,
      { file: path, hint: "Append only when result.status is \"compacted\"; the file is unchanged." },
    );
  }
  const entry: NewEntry = {
    type: "compaction",
    summary: result.summary,
    firstKeptEntryId: options.firstKeptEntryId,
    tokensBefore: options.tokensBefore ?? result.tokensBefore,
    details: result.event,
  };
  const checkFirstKept = (parentId: string | null, links: ReadonlyMap<string, string | null>): void => {
    const seen = new Set<string>();
    for (let id = parentId; id !== null && !seen.has(id); id = links.get(id) ?? null) {
      if (id === options.firstKeptEntryId) return;
      seen.add(id);
    }
    throw new CompactionError(
      ErrorCodes.INPUT_INVALID,
      `Cannot append the compaction to ${path}: firstKeptEntryId "${options.firstKeptEntryId}" is not on the branch ending at ${parentId === null ? "the root" : `entry "${parentId}"`}${links.has(options.firstKeptEntryId) ? "" : " (no entry has that id)"}.`,
      { file: path, hint: "Pass the id of the first entry kept after the summary, taken from the branch that was compacted." },
    );
  };
  const [written] = await withSessionLock(
    path,
    (stillHeld) => appendUnderLock(path, [entry], options.parentId, stillHeld, checkFirstKept, options.onSetAside),
    options.lock,
  );
  return written as CompactionEntry;
}

/** Writes all of `buffer` (one `write` call unless the system writes it in parts). */
async function writeAll(handle: FileHandle, buffer: Buffer): Promise<void> {
  let offset = 0;
  while (offset < buffer.length) {
    const { bytesWritten } = await handle.write(buffer, offset, buffer.length - offset, null);
    offset += bytesWritten;
  }
}
