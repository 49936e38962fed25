/**
 * An `EntryStore` held in memory: a session's header and entries in one process, for tests and
 * for hosts that want the store contract (conditional compactions, versions, branch reads)
 * without a file or a database. Writers in the same process share it safely: every method runs
 * to completion before the next one reads (JavaScript runs one at a time, and no method awaits
 * between reading the leaf and writing), so appends keep one order and two compactions planned
 * from the same state write once.
 */
import { CompactionError, ErrorCodes } from "@compaction/core";
import type { PiCompaction } from "../pi-compaction-plan.js";
import { assignEntryFields, type NewEntry } from "../new-entries.js";
import { createSessionId } from "../session-file.js";
import { sessionAutoCompact } from "../session-settings.js";
import { CURRENT_SESSION_VERSION, type CompactionEntry, type SessionEntry, type SessionHeader } from "../types.js";
import type { BranchRead, CompactionWrite, EntryStore } from "./entry-store.js";

export interface MemoryEntryStoreOptions {
  /** The session's header; default a fresh version 3 header (new id, now, `process.cwd()`). */
  readonly header?: SessionHeader;
  /** Entries the session starts with, in the order written (e.g. a copy of another store's). */
  readonly entries?: readonly SessionEntry[];
  /** Where the session is, for messages. Default `memory:<session id>`. */
  readonly location?: string;
}

/** A session held in memory (see the file's note). */
export class MemoryEntryStore implements EntryStore {
  readonly kind = "memory";
  readonly location: string;
  readonly #header: SessionHeader;
  readonly #entries: SessionEntry[];
  readonly #byId = new Map<string, SessionEntry>();
  #writes = 0;
  #closed = false;

  constructor(options: MemoryEntryStoreOptions = {}) {
    this.#header = options.header ?? { type: "session", version: CURRENT_SESSION_VERSION, id: createSessionId(), timestamp: new Date().toISOString(), cwd: process.cwd() };
    if (this.#header.type !== "session" || typeof this.#header.id !== "string" || this.#header.id === "") {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, "MemoryEntryStore: the header must be a session header with an id.", {
        hint: 'Pass { type: "session", version: 3, id, timestamp }, or leave header out for a fresh one.',
      });
    }
    this.location = options.location ?? `memory:${this.#header.id}`;
    this.#entries = [];
    for (const entry of options.entries ?? []) {
      if (this.#byId.has(entry.id)) {
        throw new CompactionError(ErrorCodes.INPUT_INVALID, `MemoryEntryStore: two entries have the id "${entry.id}".`, {
          hint: "Pass each entry once; ids are unique within a session.",
        });
      }
      this.#entries.push(entry);
      this.#byId.set(entry.id, entry);
    }
  }

  header(): Promise<SessionHeader> {
    this.#assertOpen("read the header");
    return Promise.resolve(this.#header);
  }

  entries(): Promise<SessionEntry[]> {
    this.#assertOpen("read the entries");
    return Promise.resolve([...this.#entries]);
  }

  branch(options: { readonly fromBoundary?: boolean } = {}): Promise<BranchRead> {
    this.#assertOpen("read the branch");
    return Promise.resolve(readBranch(this.#branchEntries(), options.fromBoundary === true));
  }

  append(entries: readonly NewEntry[]): Promise<SessionEntry[]> {
    this.#assertOpen("append");
    return Promise.resolve(this.#write(entries));
  }

  appendCompaction(compaction: PiCompaction, expected: { readonly newestCompactionId: string | null }): Promise<CompactionWrite> {
    this.#assertOpen("append a compaction");
    const branch = this.#branchEntries();
    const newest = newestCompaction(branch);
    const newestId = newest?.id ?? null;
    if (newestId !== expected.newestCompactionId) return Promise.resolve({ written: false, newestCompactionId: newestId });
    if (!branch.some((entry) => entry.id === compaction.firstKeptEntryId)) {
      return Promise.reject(
        new CompactionError(
          ErrorCodes.INPUT_INVALID,
          `Cannot append the compaction to ${this.location}: firstKeptEntryId "${compaction.firstKeptEntryId}" is not on the session's branch${this.#byId.has(compaction.firstKeptEntryId) ? "" : " (no entry has that id)"}.`,
          { hint: "Pass the id of the first entry kept after the summary, taken from the branch that was compacted." },
        ),
      );
    }
    const [entry] = this.#write([
      { type: "compaction", summary: compaction.summary, firstKeptEntryId: compaction.firstKeptEntryId, tokensBefore: compaction.tokensBefore, details: compaction.details },
    ]);
    return Promise.resolve({ written: true, entry: entry as CompactionEntry });
  }

  version(): Promise<string> {
    this.#assertOpen("read the version");
    return Promise.resolve(String(this.#writes));
  }

  close(): Promise<void> {
    this.#closed = true;
    return Promise.resolve();
  }

  #write(entries: readonly NewEntry[]): SessionEntry[] {
    const leaf = this.#entries[this.#entries.length - 1]?.id ?? null;
    const taken = new Set(this.#byId.keys());
    const written = assignEntryFields(entries, leaf, taken);
    for (const entry of written) {
      if (entry.parentId !== null && !this.#byId.has(entry.parentId) && !written.some((other) => other.id === entry.parentId)) {
        throw new CompactionError(ErrorCodes.INPUT_INVALID, `Cannot append to ${this.location}: entry "${entry.id}" names parent "${entry.parentId}", which the session does not hold.`, {
          hint: "Leave parentId out to append after the leaf.",
        });
      }
    }
    for (const entry of written) {
      this.#entries.push(entry);
      this.#byId.set(entry.id, entry);
    }
    if (written.length > 0) this.#writes += 1;
    return written;
  }

  /** The branch ending at the leaf (the last entry written), root-most first. */
  #branchEntries(): SessionEntry[] {
    const path: SessionEntry[] = [];
    const seen = new Set<string>();
    for (let entry = this.#entries[this.#entries.length - 1]; entry !== undefined && !seen.has(entry.id); ) {
      seen.add(entry.id);
      path.push(entry);
      entry = entry.parentId === null ? undefined : this.#byId.get(entry.parentId);
    }
    return path.reverse();
  }

  #assertOpen(what: string): void {
    if (!this.#closed) return;
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `Cannot ${what}: the session store ${this.location} was closed.`, {
      hint: "Open the store again.",
    });
  }
}

/**
 * A `BranchRead` from a branch's entries (root-most first): the facts from all of it, and with
 * `fromBoundary` the entries from the newest compaction's first kept entry (or the compaction
 * itself, when the kept entry is not before it) to the leaf. For stores that hold a branch in
 * memory; database stores compute the same from their rows.
 */
export function readBranch(branch: readonly SessionEntry[], fromBoundary: boolean): BranchRead {
  let compactions = 0;
  let newestAt = -1;
  branch.forEach((entry, index) => {
    if (entry.type !== "compaction") return;
    compactions += 1;
    newestAt = index;
  });
  const newest = newestAt < 0 ? undefined : (branch[newestAt] as CompactionEntry);
  let entries: readonly SessionEntry[] = branch;
  if (fromBoundary && newest !== undefined) {
    const kept = branch.findIndex((entry) => entry.id === newest.firstKeptEntryId);
    entries = branch.slice(kept >= 0 && kept < newestAt ? kept : newestAt);
  }
  return {
    entries: [...entries],
    leafId: branch[branch.length - 1]?.id ?? null,
    newestCompactionId: newest?.id ?? null,
    compactions,
    autoCompact: sessionAutoCompact(branch),
  };
}

function newestCompaction(branch: readonly SessionEntry[]): CompactionEntry | undefined {
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry = branch[i] as SessionEntry;
    if (entry.type === "compaction") return entry;
  }
  return undefined;
}
