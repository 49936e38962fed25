/**
 * The entry tree of a session: entries link to their parent by `parentId`; the leaf decides
 * which branch (root -> leaf path) is the conversation.
 */
import { ErrorCodes } from "@compaction/core";
import { TranscriptError, unknownEntryError } from "./transcript-error.js";
import type { SessionEntry } from "./types.js";

export interface SessionTreeOptions {
  /** File name for error messages. */
  file?: string;
}

/** The id of an entry's parent, or null for a root. Like pi, an empty or missing `parentId` means root. */
export function parentOf(entry: SessionEntry): string | null {
  return entry.parentId ? entry.parentId : null;
}

export class SessionTree {
  /** Entries in file order. */
  readonly entries: readonly SessionEntry[];
  /** Entries by id; when an id repeats, the later entry wins (as in pi). */
  readonly byId: ReadonlyMap<string, SessionEntry>;
  readonly file?: string;
  #children?: Map<string | null, SessionEntry[]>;

  constructor(entries: readonly SessionEntry[], options: SessionTreeOptions = {}) {
    this.entries = entries;
    const byId = new Map<string, SessionEntry>();
    for (const entry of entries) byId.set(entry.id, entry);
    this.byId = byId;
    if (options.file !== undefined) this.file = options.file;
  }

  /** The default leaf: the last entry in file order (undefined for a session with no entries). */
  get leaf(): SessionEntry | undefined {
    return this.entries[this.entries.length - 1];
  }

  get(id: string): SessionEntry | undefined {
    return this.byId.get(id);
  }

  /** The entry with this id; throws `COMPACTION_TRANSCRIPT_INVALID` naming similar ids when there is none. */
  require(id: string): SessionEntry {
    const entry = this.byId.get(id);
    if (entry === undefined) throw unknownEntryError(this.file, id, this.byId.keys(), this.leaf?.id);
    return entry;
  }

  /**
   * The path root -> leaf. `leafId` defaults to the last entry; `null` means "before the first
   * entry" (an empty branch, as in pi). A parent id that names no entry ends the path there,
   * as in pi; a cycle throws.
   */
  branch(leafId?: string | null): SessionEntry[] {
    if (leafId === null) return [];
    let current = leafId === undefined ? this.leaf : this.require(leafId);
    const path: SessionEntry[] = [];
    const seen = new Set<SessionEntry>();
    while (current !== undefined) {
      if (seen.has(current)) throw this.#cycleError(current);
      seen.add(current);
      path.push(current);
      const parentId = parentOf(current);
      current = parentId === null ? undefined : this.byId.get(parentId);
    }
    return path.reverse();
  }

  /** Direct children of an entry (`null`: the roots), in file order. */
  children(id: string | null): SessionEntry[] {
    this.#children ??= this.#indexChildren();
    return [...(this.#children.get(id) ?? [])];
  }

  #indexChildren(): Map<string | null, SessionEntry[]> {
    const index = new Map<string | null, SessionEntry[]>();
    for (const entry of this.entries) {
      if (this.byId.get(entry.id) !== entry) continue; // an earlier entry whose id was reused
      const key = parentOf(entry);
      const list = index.get(key);
      if (list === undefined) index.set(key, [entry]);
      else list.push(entry);
    }
    return index;
  }

  #cycleError(entry: SessionEntry): TranscriptError {
    return new TranscriptError(
      ErrorCodes.TRANSCRIPT_INVALID,
      `${this.file ?? "the session"}: expected parentId links to lead back to a root, found a cycle through entry \`${entry.id}\``,
      { ...(this.file === undefined ? {} : { file: this.file }), hint: "the file was edited by hand or by a faulty tool; pick a leaf on another branch" },
    );
  }
}
