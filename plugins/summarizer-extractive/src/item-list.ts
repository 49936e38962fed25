/**
 * An ordered, deduplicated list of summary items. Items are compared by a normalised key
 * (whitespace collapsed, optionally case-folded); an item cut short with "…" equals any item it
 * is a prefix of, so a clipped item from an earlier summary is not added again in full.
 */
import { collapseWhitespace, ELLIPSIS } from "@compaction/core";

/** Where a repeated item goes: stays where it was first seen, or moves to the newest place. */
export type RepeatPolicy = "first" | "latest";

export interface ItemListOptions {
  readonly repeat: RepeatPolicy;
  /** Compare case-insensitively (prose); paths, commands and identifiers compare exactly. */
  readonly caseless: boolean;
}

interface Entry {
  text: string;
  key: string;
  clipped: boolean;
  removed: boolean;
}

/** Length of the key prefix clipped items are indexed by (clips are never shorter). */
const HEAD_LENGTH = 16;

/** Ordered, deduplicated summary items (see the file comment for how items compare). */
export class ItemList {
  readonly #options: ItemListOptions;
  readonly #order = new Set<Entry>();
  readonly #byKey = new Map<string, Entry>();
  /** Every entry, by the head of its key: searched when a clipped item is added. */
  readonly #byHead = new Map<string, Entry[]>();
  /** Clipped entries only, by head: searched when a whole item is added (the common case). */
  readonly #clippedByHead = new Map<string, Entry[]>();

  constructor(options: ItemListOptions, items: Iterable<string> = []) {
    this.#options = options;
    for (const item of items) this.add(item);
  }

  get size(): number {
    return this.#order.size;
  }

  /** Adds an item (blank items are ignored). A repeat follows the list's RepeatPolicy. */
  add(item: string): void {
    const text = collapseWhitespace(item);
    if (text.length === 0) return;
    const { key, clipped } = this.#keyOf(text);
    const existing = this.#find(key, clipped);
    if (existing === undefined) {
      const entry: Entry = { text, key, clipped, removed: false };
      this.#order.add(entry);
      this.#index(entry);
      return;
    }
    if (existing.clipped && !clipped) {
      const wasIndexedByHead = existing.key.length >= HEAD_LENGTH;
      existing.text = text;
      existing.key = key;
      existing.clipped = false;
      this.#byKey.set(key, existing);
      if (!wasIndexedByHead) this.#index(existing);
    }
    if (this.#options.repeat === "latest") {
      this.#order.delete(existing);
      this.#order.add(existing);
    }
  }

  /** True when an equal item (by key, or by clipped prefix) is in the list. */
  has(item: string): boolean {
    const text = collapseWhitespace(item);
    const { key, clipped } = this.#keyOf(text);
    return this.#find(key, clipped) !== undefined;
  }

  /** Removes the item equal to `item`, if any. */
  delete(item: string): void {
    const text = collapseWhitespace(item);
    const { key, clipped } = this.#keyOf(text);
    const entry = this.#find(key, clipped);
    if (entry === undefined) return;
    entry.removed = true;
    this.#order.delete(entry);
  }

  /** The items in list order. */
  values(): string[] {
    const values: string[] = [];
    for (const entry of this.#order) values.push(entry.text);
    return values;
  }

  #keyOf(text: string): { key: string; clipped: boolean } {
    const clipped = text.endsWith(ELLIPSIS);
    const bare = clipped ? text.slice(0, -ELLIPSIS.length).trimEnd() : text;
    return { key: this.#options.caseless ? bare.toLowerCase() : bare, clipped };
  }

  #index(entry: Entry): void {
    this.#byKey.set(entry.key, entry);
    if (entry.key.length < HEAD_LENGTH) return;
    const head = entry.key.slice(0, HEAD_LENGTH);
    addToBucket(this.#byHead, head, entry);
    if (entry.clipped) addToBucket(this.#clippedByHead, head, entry);
  }

  #find(key: string, clipped: boolean): Entry | undefined {
    const exact = this.#byKey.get(key);
    if (exact !== undefined && !exact.removed) return exact;
    if (key.length < HEAD_LENGTH) return undefined;
    const head = key.slice(0, HEAD_LENGTH);
    const bucket = clipped ? this.#byHead.get(head) : this.#clippedByHead.get(head);
    if (bucket === undefined) return undefined;
    for (const entry of bucket) {
      if (entry.removed) continue;
      if (entry.clipped && key.startsWith(entry.key)) return entry;
      if (clipped && entry.key.startsWith(key)) return entry;
    }
    return undefined;
  }
}

function addToBucket(buckets: Map<string, Entry[]>, head: string, entry: Entry): void {
  const bucket = buckets.get(head);
  if (bucket === undefined) buckets.set(head, [entry]);
  else bucket.push(entry);
}
