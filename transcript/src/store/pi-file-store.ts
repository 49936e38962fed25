/**
 * `EntryStore` over a pi session file (JSONL): the store pi itself uses, one session per file.
 * Appends go through the file's exclusive lock (`withSessionLock`, the same as `appendEntries`),
 * so processes appending at once keep one order; a conditional compaction checks the branch's
 * newest compaction under that same lock. The branch's facts (compactions, settings) come from
 * an index of the file read once and then only where it grew (`PiFileBranchFacts`); the context
 * from the end of the file (`loadBoundary`). There is no `search`: recall builds its own index
 * beside the file.
 */
import { closeSync, fstatSync, openSync } from "node:fs";
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { CompactionError, ErrorCodes } from "@compaction/core";
import { appendEntriesHeld, appendEntries } from "../append.js";
import { loadBoundary } from "../boundary-load.js";
import { buildContext } from "../context.js";
import { requireHeader } from "../header-read.js";
import type { NewEntry } from "../new-entries.js";
import { readSession, unreadableFileError } from "../parse.js";
import type { PiCompaction } from "../pi-compaction-plan.js";
import { type CreateSessionOptions, createSession } from "../session-file.js";
import { type SessionLockOptions, withSessionLock } from "../session-lock.js";
import { sessionAutoCompact } from "../session-settings.js";
import type { CompactionEntry, SessionEntry, SessionHeader } from "../types.js";
import type { BranchRead, CompactionWrite, EntryStore } from "./entry-store.js";
import { PiFileBranchFacts } from "./pi-file-branch-facts.js";
import { closedStoreError, compactionEntry } from "./store-checks.js";
import { storeFailpoints } from "./store-failpoints.js";

export interface PiFileStoreOptions {
  /** The file lock's timing (see `SessionLockOptions`). */
  readonly lock?: SessionLockOptions;
}

/** The `EntryStore` of one pi session file; open it with `openPiFileStore` or `createPiFileStore`. */
export class PiFileStore implements EntryStore {
  readonly kind = "pi-file";
  /** The file's absolute path. */
  readonly location: string;
  readonly #lock: SessionLockOptions | undefined;
  readonly #facts: PiFileBranchFacts;
  #closed = false;

  /** Use `openPiFileStore`, which checks the file first. */
  constructor(path: string, options: PiFileStoreOptions = {}) {
    this.location = resolve(path);
    this.#lock = options.lock;
    this.#facts = new PiFileBranchFacts(this.location);
  }

  async header(): Promise<SessionHeader> {
    this.#open("read the header");
    return readFileHeader(this.location);
  }

  async entries(): Promise<SessionEntry[]> {
    this.#open("read the entries");
    return readSession(this.location).entries;
  }

  async branch(options: { readonly fromBoundary?: boolean } = {}): Promise<BranchRead> {
    this.#open("read the branch");
    if (options.fromBoundary === true) {
      const load = loadBoundary(this.location);
      this.#facts.refresh();
      const facts = this.#facts.at(load.leafId);
      if (facts !== undefined) {
        return {
          entries: load.branch,
          leafId: load.leafId,
          newestCompactionId: load.compaction?.id ?? null,
          compactions: facts.compactions,
          autoCompact: facts.autoCompact,
        };
      }
    }
    return wholeBranch(this.location);
  }

  async append(entries: readonly NewEntry[]): Promise<SessionEntry[]> {
    this.#open("append");
    if (entries.length === 0) return [];
    return appendEntries(this.location, entries, this.#lock === undefined ? {} : { lock: this.#lock });
  }

  async appendCompaction(compaction: PiCompaction, expected: { readonly newestCompactionId: string | null }): Promise<CompactionWrite> {
    this.#open("append a compaction");
    const entry = compactionEntry(compaction, this.location);
    return withSessionLock(
      this.location,
      async (stillHeld): Promise<CompactionWrite> => {
        const leafId = this.#facts.refresh();
        const facts = this.#facts.at(leafId);
        let newest: string | null;
        let keptOnBranch: boolean;
        if (facts !== undefined) {
          newest = facts.newestCompactionId;
          keptOnBranch = this.#facts.onBranch(compaction.firstKeptEntryId, leafId);
        } else {
          const branch = buildContext(readSession(this.location).entries).branch;
          newest = branch.findLast((e) => e.type === "compaction")?.id ?? null;
          keptOnBranch = branch.some((e) => e.id === compaction.firstKeptEntryId);
        }
        if (newest !== expected.newestCompactionId || !keptOnBranch) return { written: false, newestCompactionId: newest };
        storeFailpoints.beforeCommit?.(this.location, "append a compaction");
        const [written] = await appendEntriesHeld(this.location, [entry], stillHeld);
        return { written: true, entry: written as CompactionEntry };
      },
      this.#lock,
    );
  }

  async version(): Promise<string> {
    this.#open("read the version");
    const info = await stat(this.location, { bigint: true });
    return `${info.size}:${info.mtimeNs}`;
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  #open(call: string): void {
    if (this.#closed) throw closedStoreError(this.kind, this.location, call);
  }
}

/** Opens the pi session file at `path` as an `EntryStore`; fails when it is missing or not a session file. */
export async function openPiFileStore(path: string, options: PiFileStoreOptions = {}): Promise<PiFileStore> {
  const absolute = resolve(path);
  try {
    await stat(absolute);
  } catch (error) {
    throw new CompactionError(ErrorCodes.TRANSCRIPT_NOT_FOUND, `No session file at ${absolute}.`, {
      file: absolute,
      hint: "Check the path, or create the session with createPiFileStore(path, { cwd }).",
      cause: error,
    });
  }
  readFileHeader(absolute);
  return new PiFileStore(absolute, options);
}

/**
 * Creates a new pi session file at `path` (`createSession`: the header, then `entries`; refuses to
 * replace a file) and opens it as an `EntryStore`.
 */
export async function createPiFileStore(
  path: string,
  session: CreateSessionOptions,
  entries: readonly NewEntry[] = [],
  options: PiFileStoreOptions = {},
): Promise<PiFileStore> {
  await createSession(resolve(path), session, entries);
  return new PiFileStore(path, options);
}

function readFileHeader(path: string): SessionHeader {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (error) {
    throw unreadableFileError(path, error);
  }
  try {
    return requireHeader(fd, path, fstatSync(fd).size).header;
  } finally {
    closeSync(fd);
  }
}

function wholeBranch(path: string): BranchRead {
  const context = buildContext(readSession(path).entries, { file: path });
  return {
    entries: context.branch,
    leafId: context.leafId,
    newestCompactionId: context.compaction?.id ?? null,
    compactions: context.branch.filter((entry) => entry.type === "compaction").length,
    autoCompact: sessionAutoCompact(context.branch),
  };
}
