/**
 * What `EntryStore.branch` reports about a whole branch of a pi session file (its compactions,
 * its newest compaction, its auto-compaction setting) without parsing the whole file on every
 * read: each entry's facts follow from its parent's, so one pass over the file, kept up to date
 * by reading only the bytes appended since, gives them for any leaf. Lines are recognised from
 * their bytes (`QuickIds`); only `custom` lines and lines pi did not write itself are parsed.
 *
 * A session file is append-only, so the bytes already read never change; a file that shrank
 * (a crash's half line set aside) is read again from the last complete line read.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { QuickIds } from "../quick-ids.js";
import { AUTO_COMPACT_CUSTOM_TYPE } from "../session-settings.js";

/** The facts of the branch that ends at one entry. */
export interface EntryBranchFacts {
  readonly parentId: string | null;
  /** Compaction entries from the root to this entry, itself included. */
  readonly compactions: number;
  readonly newestCompactionId: string | null;
  /** The newest compaction's `firstKeptEntryId`, or null. */
  readonly newestFirstKeptId: string | null;
  /** The latest auto-compaction setting on the branch, or undefined. */
  readonly autoCompact: boolean | undefined;
}

const CHUNK_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;

/** The branch facts of every entry of one session file, read incrementally. */
export class PiFileBranchFacts {
  readonly #path: string;
  readonly #facts = new Map<string, EntryBranchFacts>();
  readonly #quick = new QuickIds();
  /** Offset just past the last complete line read. */
  #readTo = 0;
  #headerSeen = false;
  /** The last entry line read (pi's leaf). */
  #lastId: string | null = null;
  /** An entry whose parent came later in the file (pi never writes this): facts are not known. */
  #unordered = false;

  constructor(path: string) {
    this.#path = path;
  }

  /** Reads what was appended since the last call; returns the file's last entry id (its leaf). */
  refresh(): string | null {
    const fd = openSync(this.#path, "r");
    try {
      const size = fstatSync(fd).size;
      if (size < this.#readTo) this.#readTo = Math.min(this.#readTo, size);
      let carry: Buffer = Buffer.alloc(0);
      let position = this.#readTo;
      let lastWhole: string | null = this.#lastId;
      const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
      while (position < size) {
        const n = readSync(fd, chunk, 0, Math.min(CHUNK_BYTES, size - position), position);
        if (n === 0) break;
        position += n;
        const bytes = carry.length === 0 ? chunk.subarray(0, n) : Buffer.concat([carry, chunk.subarray(0, n)]);
        let start = 0;
        for (let end = bytes.indexOf(NEWLINE, start); end >= 0; end = bytes.indexOf(NEWLINE, start)) {
          const id = this.#see(bytes.subarray(start, end));
          if (id !== undefined) lastWhole = id;
          start = end + 1;
        }
        this.#readTo = position - (bytes.length - start);
        carry = Buffer.from(bytes.subarray(start));
      }
      this.#lastId = lastWhole;
      // A last line without its newline is the leaf when it parses (see readTail); it is read
      // again next time, when it may have been completed.
      if (carry.length > 0 && parseObject(carry) !== undefined) {
        const id = this.#see(carry);
        if (id !== undefined) return id;
      }
      return this.#lastId;
    } finally {
      closeSync(fd);
    }
  }

  /** The facts of the branch ending at `leafId`, or undefined when the file's links cannot be followed in one pass. */
  at(leafId: string | null): EntryBranchFacts | undefined {
    if (leafId === null) return { parentId: null, compactions: 0, newestCompactionId: null, newestFirstKeptId: null, autoCompact: undefined };
    if (this.#unordered) return undefined;
    return this.#facts.get(leafId);
  }

  /** Whether `id` is `leafId` or one of its ancestors. */
  onBranch(id: string, leafId: string | null): boolean {
    const seen = new Set<string>();
    for (let at = leafId; at !== null && !seen.has(at); at = this.#facts.get(at)?.parentId ?? null) {
      if (at === id) return true;
      seen.add(at);
    }
    return false;
  }

  /** Records one line; returns its entry id, or undefined for the header, blank and unreadable lines. */
  #see(line: Buffer): string | undefined {
    let id: string;
    let parentId: string | null;
    let type: string;
    let fields: Record<string, unknown> | undefined;
    if (this.#quick.match(line)) {
      id = this.#quick.id();
      parentId = this.#quick.parentId();
      type = this.#quick.type();
      if (type === "session") return undefined;
      if (type === "custom" || type === "compaction") fields = parseObject(line);
    } else {
      fields = parseObject(line);
      if (fields === undefined) return undefined;
      if (fields["type"] === "session" && !this.#headerSeen) {
        this.#headerSeen = true;
        return undefined;
      }
      if (typeof fields["id"] !== "string" || typeof fields["type"] !== "string") return undefined;
      id = fields["id"];
      type = fields["type"];
      parentId = typeof fields["parentId"] === "string" && fields["parentId"] !== "" ? fields["parentId"] : null;
    }
    this.#headerSeen = true;
    const parent = parentId === null ? this.at(null) : this.#facts.get(parentId);
    if (parent === undefined) {
      this.#unordered = true;
      return id;
    }
    let facts: EntryBranchFacts = { ...parent, parentId };
    if (type === "compaction") {
      const firstKept = fields?.["firstKeptEntryId"];
      facts = { ...facts, compactions: parent.compactions + 1, newestCompactionId: id, newestFirstKeptId: typeof firstKept === "string" ? firstKept : null };
    } else if (type === "custom" && fields?.["customType"] === AUTO_COMPACT_CUSTOM_TYPE) {
      const data = fields["data"] as Record<string, unknown> | null | undefined;
      if (typeof data === "object" && data !== null && typeof data["enabled"] === "boolean") facts = { ...facts, autoCompact: data["enabled"] };
    }
    this.#facts.set(id, facts);
    return id;
  }
}

function parseObject(line: Buffer): Record<string, unknown> | undefined {
  const text = line.toString("utf8").trim();
  if (text === "") return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
