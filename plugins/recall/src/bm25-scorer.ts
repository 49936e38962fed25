/**
 * The default scorer: BM25 full-text search with minisearch. Words are split at spaces and
 * punctuation and lower-cased (so `user-message-selector.ts` is found by `selector`); a query
 * word of three letters or more also matches longer words it starts (`compact` finds
 * `compaction`), and one of five or more tolerates a typo or two. Entries holding more of the
 * query's words rank higher.
 */
import MiniSearch, { type AsPlainObject, type Options } from "minisearch";
import type { RecallDocument, RecallScorer, ScoredEntry, ScorerSearchOptions } from "./scorer.js";

/** Longer "words" (base64, minified code) only bloat the index: nobody searches for them. */
const MAX_TERM_LENGTH = 64;

export interface Bm25ScorerOptions {
  /** Shortest query word that also matches as a prefix. Default 3; 0 turns prefix matching off. */
  readonly prefixMinLength?: number;
  /** Shortest query word matched with typos (edit distance up to 20% of its length, at most 2). Default 5; 0: off. */
  readonly fuzzyMinLength?: number;
}

/**
 * Words are split at spaces, punctuation and symbols (minisearch splits at the first two only):
 * in code and paths `` `src/x.ts` ``, `a+b`, `<Foo>` and `$HOME` hold the words themselves, so
 * a search for `x.ts` finds them, and an entry containing the query as typed holds each of its
 * words (see mayContain).
 */
const WORD_SEPARATORS = /[\n\r\p{Z}\p{P}\p{S}]+/u;

function tokenize(text: string): string[] {
  return text.split(WORD_SEPARATORS);
}

function processTerm(term: string): string | null {
  if (term === "") return null;
  if (term.length > MAX_TERM_LENGTH) return null;
  return term.toLowerCase();
}

const MINISEARCH_OPTIONS: Options<RecallDocument> = {
  idField: "id",
  fields: ["text"],
  storeFields: [],
  tokenize,
  processTerm,
};

/** A BM25 scorer backed by minisearch (the built-in default; needs no model). */
export function bm25Scorer(options: Bm25ScorerOptions = {}): RecallScorer {
  const prefixMin = options.prefixMinLength ?? 3;
  const fuzzyMin = options.fuzzyMinLength ?? 5;
  let search = new MiniSearch<RecallDocument>(MINISEARCH_OPTIONS);
  return {
    name: "bm25",
    reset() {
      search = new MiniSearch<RecallDocument>(MINISEARCH_OPTIONS);
    },
    add(documents: readonly RecallDocument[]) {
      for (const document of documents) {
        if (search.has(document.id)) search.replace(document);
        else search.add(document);
      }
    },
    search(query: string, { limit, filter }: ScorerSearchOptions): ScoredEntry[] {
      const results = search.search(query, {
        combineWith: "OR",
        prefix: (term) => prefixMin > 0 && term.length >= prefixMin,
        fuzzy: (term) => (fuzzyMin > 0 && term.length >= fuzzyMin ? 0.2 : false),
        maxFuzzy: 2,
        filter: (result) => filter(String(result.id)),
      });
      return results.slice(0, limit).map((result) => ({ id: String(result.id), score: result.score, terms: result.terms }));
    },
    mayContain(query: string, { filter }: { readonly filter: (id: string) => boolean }): string[] {
      // Text containing the query holds each of its words, the first and the last possibly as
      // the end or start of a longer word: every word as a prefix, all of them, is a superset
      // when the query starts at a word boundary (paths, names, ids do).
      return search.search(query, { combineWith: "AND", prefix: true, fuzzy: false, filter: (result) => filter(String(result.id)) }).map((result) => String(result.id));
    },
    toJSON(): unknown {
      return search.toJSON();
    },
    restore(state: unknown) {
      if (typeof state !== "object" || state === null || !("serializationVersion" in state)) {
        throw new Error("not a minisearch index");
      }
      search = MiniSearch.loadJS<RecallDocument>(state as AsPlainObject, MINISEARCH_OPTIONS);
    },
  };
}
