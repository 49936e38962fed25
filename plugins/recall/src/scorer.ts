/**
 * The part of the recall index that ranks entries for a query. The index keeps everything else
 * (entry ids, the branch tree, byte offsets); a scorer only sees entry ids and texts. The
 * default is BM25 full-text search (`bm25Scorer`); `embeddingScorer` ranks by cosine similarity
 * of embeddings from a model the user supplies.
 */

/** An entry's searchable text, as handed to a scorer. */
export interface RecallDocument {
  /** The session entry id. */
  readonly id: string;
  readonly text: string;
}

/** One ranked entry. */
export interface ScoredEntry {
  readonly id: string;
  /** Higher is better; only comparable within one search. */
  readonly score: number;
  /**
   * Words of the entry's text that matched, lower case, for the snippet. Empty when the scorer
   * has none (embeddings): the snippet then looks for the query's own words.
   */
  readonly terms: readonly string[];
}

export interface ScorerSearchOptions {
  /** Most entries to return. */
  readonly limit: number;
  /** Only entries this accepts may be returned (the current branch). */
  readonly filter: (id: string) => boolean;
}

/**
 * A ranking method for the recall index. One instance serves one index: it holds that index's
 * documents. Its state is stored in the index file (`toJSON` / `restore`) under its `name`; an
 * index file written by a scorer of another name is rebuilt.
 */
export interface RecallScorer {
  /** Identifies the method and anything that changes its state (e.g. `embedding:<model>`). */
  readonly name: string;
  /** Forgets every document. */
  reset(): void;
  /** Adds documents; an id already present is replaced. */
  add(documents: readonly RecallDocument[]): void | Promise<void>;
  /** The best entries for `query`, best first. */
  search(query: string, options: ScorerSearchOptions): readonly ScoredEntry[] | Promise<readonly ScoredEntry[]>;
  /**
   * Every entry (that `filter` accepts) whose text may contain `query` as typed: a superset of
   * those that do, e.g. the entries holding each of its words. The index reads these entries'
   * texts to rank the ones that contain the query above the ones that only share its words.
   * Without it, the index checks the best `search` results only (see RecallIndex.search).
   */
  mayContain?(query: string, options: { readonly filter: (id: string) => boolean }): readonly string[];
  /** The state to store in the index file (JSON-compatible). */
  toJSON(): unknown;
  /** Loads a state `toJSON` returned; throws when it is not one (the index is then rebuilt). */
  restore(state: unknown): void;
}
