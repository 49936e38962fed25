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
import { closedStoreError, compactionEntry } from "./store-checks.js";

export interface MemoryEntryStoreOptions {
  /** The session's header; default a fresh version 3 header (new id, now, `process.cwd()`). */
  readonly header?: SessionHeader;
  /** Entries the session starts with, in the order written (e.g. a copy of another store's). */
  readonly entries?: readonly SessionEntry[];
  /** Where the session is, for messages. Default `memory:<session id>`. */
  readonly location?: string;
}

/** The session itself, which every handle on it (`MemoryEntryStore.handle()`) shares. */
interface MemorySession {
  readonly header: SessionHeader;
  readonly entries: SessionEntry[];
  readonly byId: Map<string, SessionEntry>;
  writes: number;
}

/** A session held in memory (see the file's note). */
export class MemoryEntryStore implements EntryStore {
  readonly kind = "memory";
  readonly location: string;
  readonly #session: MemorySession;
  #closed = false;

  constructor(options: MemoryEntryStoreOptions = {}, shared?: MemorySession) {
    if (shared !== undefined) {
      this.#session = shared;
      this.location = options.location ?? `memory:${shared.header.id}`;
      return;
    }
    const header = options.header ?? { type: "session", version: CURRENT_SESSION_VERSION, id: createSessionId(), timestamp: new Date().toISOString(), cwd: process.cwd() };
    if (header.type !== "session" || typeof header.id !== "string" || header.id === "") {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, "MemoryEntryStore: the header must be a session header with an id.", {
        hint: 'Pass { type: "session", version: 3, id, timestamp }, or leave header out for a fresh one.',
      });
    }
    this.location = options.location ?? `memory:${header.id}`;
    this.#session = { header, entries: [], byId: new Map(), writes: 0 };
    for (const entry of options.entries ?? []) {
      if (this.#session.byId.has(entry.id)) {
        throw new CompactionError(ErrorCodes.INPUT_INVALID, `MemoryEntryStore: two entries have the id "${entry.id}".`, {
          hint: "Pass each entry once; ids are unique within a session.",
        });
      }
      this.#session.entries.push(entry);
      this.#session.byId.set(entry.id, entry);
    }
  }

  /**
   * Another handle on the same session, as another worker would hold one: it sees every write
   * of every handle, and closing one leaves the others open.
   */
  handle(): MemoryEntryStore {
    return new MemoryEntryStore({ location: this.location }, this.#session);
  }

  async header(): Promise<SessionHeader> {
    this.#assertOpen("read the header");
    return this.#session.header;
  }

  async entries(): Promise<SessionEntry[]> {
    this.#assertOpen("read the entries");
    return [...this.#session.entries];
  }

  async branch(options: { readonly fromBoundary?: boolean } = {}): Promise<BranchRead> {
    this.#assertOpen("read the branch");
    return readBranch(this.#branchEntries(), options.fromBoundary === true);
  }

  async append(entries: readonly NewEntry[]): Promise<SessionEntry[]> {
    this.#assertOpen("append");
    return this.#write(entries);
  }

  /** Writes only when the newest compaction is still the expected one and the first kept entry is on the branch. */
  async appendCompaction(compaction: PiCompaction, expected: { readonly newestCompactionId: string | null }): Promise<CompactionWrite> {
    this.#assertOpen("append a compaction");
    const entry = compactionEntry(compaction, this.location);
    const branch = this.#branchEntries();
    const newestId = newestCompaction(branch)?.id ?? null;
    if (newestId !== expected.newestCompactionId || !branch.some((e) => e.id === compaction.firstKeptEntryId)) {
      return { written: false, newestCompactionId: newestId };
    }
    const [written] = this.#write([entry]);
    return { written: true, entry: written as CompactionEntry };
  }

  async version(): Promise<string> {
    this.#assertOpen("read the version");
    return String(this.#session.writes);
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  #write(entries: readonly NewEntry[]): SessionEntry[] {
    const session = this.#session;
    const leaf = session.entries[session.entries.length - 1]?.id ?? null;
    const taken = new Set(session.byId.keys());
    const written = assignEntryFields(entries, leaf, taken);
    for (const entry of written) {
      if (entry.parentId !== null && !session.byId.has(entry.parentId) && !written.some((other) => other.id === entry.parentId)) {
        throw new CompactionError(ErrorCodes.INPUT_INVALID, `Cannot append to ${this.location}: entry "${entry.id}" names parent "${entry.parentId}", which the session does not hold.`, {
          hint: "Leave parentId out to append after the leaf.",
        });
      }
    }
    for (const entry of written) {
      session.entries.push(entry);
      session.byId.set(entry.id, entry);
    }
    if (written.length > 0) session.writes += 1;
    return written;
  }

  /** The branch ending at the leaf (the last entry written), root-most first. */
  #branchEntries(): SessionEntry[] {
    const { entries, byId } = this.#session;
    const path: SessionEntry[] = [];
    const seen = new Set<string>();
    for (let entry = entries[entries.length - 1]; entry !== undefined && !seen.has(entry.id); ) {
      seen.add(entry.id);
      path.push(entry);
      entry = entry.parentId ? byId.get(entry.parentId) : undefined;
    }
    return path.reverse();
  }

  #assertOpen(what: string): void {
    if (this.#closed) throw closedStoreError(this.kind, this.location, what);
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
