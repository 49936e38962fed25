/**
 * Recall over a session kept in a session store (`EntryStore`: SQLite, Postgres, memory, a pi
 * file through `openPiFileStore`). When the store has a full-text search of its own (SQLite FTS5,
 * Postgres tsvector: `EntryStore.search`), searches go to it; otherwise the entries are indexed
 * here, in memory, with the same scorer a session file's index uses (BM25 by default). Either way
 * the results are what `RecallIndex` gives over a pi file: the same entry ids, roles, times and
 * snippets, the current branch only, and entries that contain the query as typed (a path, a
 * function name, an error code) first, then the rest by score.
 *
 * The entries are read again whenever the store's `version()` moved (another writer, a
 * compaction): a store is append-only, so only the entries after those already indexed are added.
 */
import { CompactionError, ErrorCodes } from "@compaction/core";
import type { EntryStore, SessionEntry } from "@compaction/transcript";
import { branchIds } from "./branch.js";
import { bm25Scorer } from "./bm25-scorer.js";
import { entryText, entryTimestamp } from "./entry-text.js";
import type { RecallEntry, RecallHit, RecallSearchOptions, RecallUpdate } from "./recall-index.js";
import type { RecallScorer, ScoredEntry } from "./scorer.js";
import { queryWords, snippet } from "./snippet.js";

export interface OpenStoreRecallIndexOptions {
  /**
   * How entries are ranked when the store has no full-text search of its own. Default
   * `bm25Scorer()`. One scorer instance per index.
   */
  readonly scorer?: RecallScorer;
  /**
   * Use this scorer even when the store has a full-text search (e.g. embeddings over a
   * database session). Default false: the store's own search.
   */
  readonly preferScorer?: boolean;
  /** Snippet length in characters. Default 200. */
  readonly snippetChars?: number;
}

/** What `memory_search` needs of an index: a session file's `RecallIndex` and `StoreRecallIndex` both give it. */
export interface RecallSource {
  /** Where the session is (a file path, or a store's location). */
  readonly sessionPath: string;
  search(query: string, options?: RecallSearchOptions): Promise<RecallHit[]>;
  get(entryId: string, options?: { readonly leafId?: string | null }): Promise<RecallEntry | undefined>;
  update(): Promise<RecallUpdate>;
}

interface Known {
  readonly entry: SessionEntry;
  /** The entry's line in the session as a pi file (the header is line 1). */
  readonly line: number;
  readonly role: string;
  readonly text: string;
}

/** Hits asked of the store's search per hit wanted: room for those off the branch and for the exact ones. */
const STORE_SEARCH_FACTOR = 4;
const STORE_SEARCH_MIN = 50;

/** Opens recall over the session in `store` and reads its entries once. */
export async function openStoreRecallIndex(store: EntryStore, options: OpenStoreRecallIndexOptions = {}): Promise<StoreRecallIndex> {
  const index = new StoreRecallIndex(store, options);
  await index.update();
  return index;
}

export class StoreRecallIndex implements RecallSource {
  readonly store: EntryStore;
  /** The store's location. */
  readonly sessionPath: string;
  readonly #options: OpenStoreRecallIndexOptions;
  /** The scorer when the store's own search is not used, else null. */
  readonly #scorer: RecallScorer | null;
  #entries = new Map<string, Known>();
  #order: string[] = [];
  #leafId: string | null = null;
  #version: string | null = null;
  #sessionId: string | null = null;
  #queue: Promise<unknown> = Promise.resolve();
  #lastUpdate: RecallUpdate | null = null;

  /** Prefer `openStoreRecallIndex`, which reads the entries too. */
  constructor(store: EntryStore, options: OpenStoreRecallIndexOptions = {}) {
    this.store = store;
    this.sessionPath = store.location;
    this.#options = options;
    this.#scorer = store.search !== undefined && options.preferScorer !== true ? null : (options.scorer ?? bm25Scorer());
  }

  /** The session id from the store's header (null before the first update). */
  get sessionId(): string | null {
    return this.#sessionId;
  }
  /** The last entry written: the default leaf, whose branch searches cover. */
  get leafId(): string | null {
    return this.#leafId;
  }
  /** Entries known (searchable or not). */
  get entryCount(): number {
    return this.#entries.size;
  }
  /** `store:<kind>` when the store's own full-text search ranks, else the scorer's name. */
  get scorerName(): string {
    return this.#scorer === null ? `store:${this.store.kind}` : this.#scorer.name;
  }
  get lastUpdate(): RecallUpdate | null {
    return this.#lastUpdate;
  }

  /** Reads the entries written since the last update (nothing when the store's version did not move). */
  update(): Promise<RecallUpdate> {
    return this.#exclusive(() => this.#update());
  }

  async #update(): Promise<RecallUpdate> {
    const version = await this.store.version();
    if (version === this.#version) return this.#noUpdate();
    if (this.#sessionId === null) this.#sessionId = (await this.store.header()).id;
    const entries = await this.store.entries();
    let reason: string | null = null;
    // Append-only: the entries already known are the first ones, in the same order.
    const known = this.#order.length;
    if (known > 0 && (entries.length < known || entries[known - 1]?.id !== this.#order[known - 1])) {
      reason = `the entries of ${this.sessionPath} changed since they were read (not only appended)`;
      this.#entries = new Map();
      this.#order = [];
      this.#scorer?.reset();
    } else if (known === 0) {
      reason = "no index yet";
    }
    const fresh = entries.slice(this.#order.length);
    const documents: { id: string; text: string }[] = [];
    let indexed = 0;
    fresh.forEach((entry, i) => {
      const searchable = entryText(entry);
      const line = this.#order.length + i + 2;
      this.#entries.set(entry.id, { entry, line, role: searchable?.role ?? "", text: searchable?.text ?? "" });
      if (searchable !== undefined) {
        indexed += 1;
        documents.push({ id: entry.id, text: searchable.text });
      }
    });
    for (const entry of fresh) this.#order.push(entry.id);
    if (this.#scorer !== null && documents.length > 0) await this.#scorer.add(documents);
    this.#leafId = this.#order[this.#order.length - 1] ?? null;
    this.#version = version;
    this.#lastUpdate = { rebuilt: reason !== null, reason, entriesRead: fresh.length, indexed, skippedLines: 0, bytesRead: 0, saved: false, saveError: null };
    return this.#lastUpdate;
  }

  #noUpdate(): RecallUpdate {
    return { rebuilt: false, reason: null, entriesRead: 0, indexed: 0, skippedLines: 0, bytesRead: 0, saved: false, saveError: null };
  }

  /** Ids of the entries on the branch ending at `leafId` (default: the last entry written). */
  branchIds(leafId?: string | null): Set<string> {
    const leaf = leafId === undefined ? this.#leafId : leafId;
    if (leaf !== null && !this.#entries.has(leaf)) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `No entry "${leaf}" in ${this.sessionPath}: cannot search its branch.`, {
        hint: "Pass the id of an entry of this session as leafId, or leave it out for the current branch.",
      });
    }
    return branchIds(leaf, (id) => {
      const known = this.#entries.get(id);
      return known === undefined ? undefined : known.entry.parentId ? known.entry.parentId : null;
    });
  }

  /** The best entries on the branch for `query`, best first, exact matches of the query as typed first. */
  async search(query: string, options: RecallSearchOptions = {}): Promise<RecallHit[]> {
    const limit = options.limit ?? 5;
    if (!Number.isInteger(limit) || limit < 1) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `search() limit must be a whole number of at least 1, but it is ${String(limit)}.`);
    }
    await this.update();
    return this.#exclusive(async () => {
      const branch = this.branchIds(options.leafId);
      const filter = (id: string) => branch.has(id) && (this.#entries.get(id)?.role ?? "") !== "";
      const ranked = this.#scorer === null ? await this.#storeSearch(query, limit, filter) : await this.#scorerSearch(this.#scorer, query, limit, filter);
      const width = this.#options.snippetChars ?? 200;
      return ranked.map(({ id, score, terms, exact }) => {
        const known = this.#entries.get(id) as Known;
        const words = exact ? [literal(query)] : terms.length > 0 ? terms : queryWords(query);
        return { entryId: id, timestamp: entryTimestamp(known.entry), role: known.role, snippet: snippet(known.text, words, width), score, exact };
      });
    });
  }

  /**
   * The store's own full-text search, asked for more hits than wanted (some are off the branch
   * or have no text), then the exact-first rule over what it returned.
   */
  async #storeSearch(query: string, limit: number, filter: (id: string) => boolean): Promise<RankedEntry[]> {
    const search = this.store.search as NonNullable<EntryStore["search"]>;
    const hits = await search.call(this.store, query, { limit: Math.max(STORE_SEARCH_MIN, limit * STORE_SEARCH_FACTOR) });
    const seen = new Set<string>();
    const scored: ScoredEntry[] = [];
    for (const hit of hits) {
      const id = hit.entry.id;
      if (seen.has(id) || !this.#entries.has(id) || !filter(id)) continue;
      seen.add(id);
      scored.push({ id, score: hit.score, terms: [] });
    }
    return exactFirst(query, scored, limit, (id) => this.#entries.get(id)?.text ?? "");
  }

  async #scorerSearch(scorer: RecallScorer, query: string, limit: number, filter: (id: string) => boolean): Promise<RankedEntry[]> {
    const scored = await scorer.search(query, { limit, filter });
    if (scored.length === 0) return [];
    // As RecallIndex: the entries that may contain the query as typed, checked against their text.
    const candidates = scorer.mayContain?.(query, { filter }) ?? scored.map((hit) => hit.id);
    const wanted = literal(query).toLowerCase();
    const exactIds = new Set(candidates.filter((id) => literal(this.#entries.get(id)?.text ?? "").toLowerCase().includes(wanted)));
    if (exactIds.size === 0) return scored.map((hit) => ({ ...hit, exact: false }));
    const allScored = [...exactIds].every((id) => scored.some((hit) => hit.id === id));
    const exact = allScored
      ? scored.filter((hit) => exactIds.has(hit.id))
      : await scorer.search(query, { limit: Math.min(limit, exactIds.size), filter: (id) => exactIds.has(id) });
    const rest = scored.filter((hit) => !exactIds.has(hit.id));
    return [...exact.map((hit) => ({ ...hit, exact: true })), ...rest.map((hit) => ({ ...hit, exact: false }))].slice(0, limit);
  }

  /** The whole entry with this id, or undefined when the session has none. */
  async get(entryId: string, options: { readonly leafId?: string | null } = {}): Promise<RecallEntry | undefined> {
    await this.update();
    return this.#exclusive(async () => {
      const known = this.#entries.get(entryId);
      if (known === undefined) return undefined;
      return {
        entryId,
        parentId: known.entry.parentId ? known.entry.parentId : null,
        timestamp: entryTimestamp(known.entry),
        role: known.role,
        text: known.text,
        line: known.line,
        entry: known.entry,
        onBranch: this.branchIds(options.leafId).has(entryId),
      };
    });
  }

  /** Nothing to save: the store holds the entries (and its own search index). */
  close(): Promise<null> {
    return Promise.resolve(null);
  }

  #exclusive<R>(task: () => Promise<R>): Promise<R> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}

type RankedEntry = ScoredEntry & { readonly exact: boolean };

/** Entries whose text holds the query as typed first (by their score), then the rest; at most `limit`. */
function exactFirst(query: string, scored: readonly ScoredEntry[], limit: number, textOf: (id: string) => string): RankedEntry[] {
  const wanted = literal(query).toLowerCase();
  const exact: RankedEntry[] = [];
  const rest: RankedEntry[] = [];
  for (const hit of scored) {
    if (literal(textOf(hit.id)).toLowerCase().includes(wanted)) exact.push({ ...hit, exact: true });
    else rest.push({ ...hit, exact: false });
  }
  return [...exact, ...rest].slice(0, limit);
}

/** The query as typed, without surrounding space and with runs of space as one. */
function literal(query: string): string {
  return query.trim().replace(/\s+/g, " ");
}
