/**
 * A scorer for users who have an embedding model: each entry's text is embedded once, when it
 * is indexed (vectors are stored in the index file), and a query ranks entries by cosine
 * similarity. The model is the user's: pass a function that embeds a batch of texts.
 */
import { CompactionError, ErrorCodes } from "@compaction/core";
import type { RecallDocument, RecallScorer, ScoredEntry, ScorerSearchOptions } from "./scorer.js";

/** Embeds texts with the user's model: one vector per text, in order, all of one length. */
export type EmbedFunction = (texts: string[]) => Promise<readonly (readonly number[])[]> | readonly (readonly number[])[];

export interface EmbeddingScorerOptions {
  readonly embed: EmbedFunction;
  /**
   * The model's name. Part of the scorer's name (`embedding:<model>`), so an index built with
   * another model is rebuilt rather than compared across models.
   */
  readonly model: string;
  /** Texts per `embed` call. Default 32. */
  readonly batchSize?: number;
  /** Characters of an entry's text embedded (the start of it). Default 8000. */
  readonly maxChars?: number;
}

interface StoredState {
  readonly dimensions: number;
  readonly vectors: Record<string, number[]>;
}

/** A scorer ranking by cosine similarity of embeddings from `options.embed`. */
export function embeddingScorer(options: EmbeddingScorerOptions): RecallScorer {
  const batchSize = Math.max(1, options.batchSize ?? 32);
  const maxChars = Math.max(1, options.maxChars ?? 8000);
  const name = `embedding:${options.model}`;
  let vectors = new Map<string, Float64Array>();
  let dimensions = 0;

  async function embed(texts: string[]): Promise<Float64Array[]> {
    const out = await options.embed(texts);
    if (!Array.isArray(out) || out.length !== texts.length) {
      throw embedError(`returned ${Array.isArray(out) ? `${out.length} vectors` : typeof out} for ${texts.length} texts`);
    }
    return out.map((vector, i) => {
      if (!Array.isArray(vector) || vector.length === 0 || !vector.every((x) => typeof x === "number" && Number.isFinite(x))) {
        throw embedError(`returned something other than a non-empty array of finite numbers for text ${i}`);
      }
      if (dimensions === 0) dimensions = vector.length;
      if (vector.length !== dimensions) throw embedError(`returned a vector of ${vector.length} numbers where earlier ones had ${dimensions}`);
      return normalise(Float64Array.from(vector));
    });
  }

  function embedError(found: string): CompactionError {
    return new CompactionError(ErrorCodes.INPUT_INVALID, `The embed function of the '${name}' recall scorer ${found}; expected one vector per text, all of the same length.`, {
      hint: "Check the embed function passed to embeddingScorer(): it must return number[][] in the order of the texts.",
    });
  }

  return {
    name,
    reset() {
      vectors = new Map();
      dimensions = 0;
    },
    async add(documents: readonly RecallDocument[]) {
      for (let start = 0; start < documents.length; start += batchSize) {
        const batch = documents.slice(start, start + batchSize);
        const embedded = await embed(batch.map((document) => document.text.slice(0, maxChars)));
        batch.forEach((document, i) => vectors.set(document.id, embedded[i] as Float64Array));
      }
    },
    async search(query: string, { limit, filter }: ScorerSearchOptions): Promise<ScoredEntry[]> {
      if (vectors.size === 0 || query.trim() === "") return [];
      const [target] = await embed([query.slice(0, maxChars)]);
      const scored: ScoredEntry[] = [];
      for (const [id, vector] of vectors) {
        if (!filter(id)) continue;
        scored.push({ id, score: dot(target as Float64Array, vector), terms: [] });
      }
      return scored.sort((a, b) => b.score - a.score).slice(0, limit);
    },
    toJSON(): StoredState {
      const stored: Record<string, number[]> = {};
      for (const [id, vector] of vectors) stored[id] = Array.from(vector, (x) => Math.round(x * 1e7) / 1e7);
      return { dimensions, vectors: stored };
    },
    restore(state: unknown) {
      const stored = state as Partial<StoredState> | null;
      if (typeof stored !== "object" || stored === null || typeof stored.dimensions !== "number" || typeof stored.vectors !== "object" || stored.vectors === null) {
        throw new Error("not an embedding index");
      }
      const loaded = new Map<string, Float64Array>();
      for (const [id, vector] of Object.entries(stored.vectors)) {
        if (!Array.isArray(vector) || vector.length !== stored.dimensions) throw new Error(`vector of entry ${id} has the wrong length`);
        loaded.set(id, Float64Array.from(vector));
      }
      vectors = loaded;
      dimensions = stored.dimensions;
    },
  };
}

/** Cosine similarity of two vectors already scaled to length 1. */
function dot(a: Float64Array, b: Float64Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}

/** The vector scaled to length 1 (a zero vector stays zero: similar to nothing). */
function normalise(vector: Float64Array): Float64Array {
  let norm = 0;
  for (const x of vector) norm += x * x;
  norm = Math.sqrt(norm);
  if (norm === 0) return vector;
  return vector.map((x) => x / norm);
}

/** Cosine similarity of two vectors of equal length (0 when either is all zeros). */
export function cosineSimilarity(a: readonly number[], b: readonly number[]): number {
  return dot(normalise(Float64Array.from(a)), normalise(Float64Array.from(b)));
}
