import { join } from "node:path";
import { ErrorCodes } from "@compaction/core";
import { describe, expect, it } from "vitest";
import { cosineSimilarity, embeddingScorer } from "./embedding-scorer.js";
import { openRecallIndex, RecallIndex } from "./recall-index.js";
import { sessionWith, tempDir, user } from "./test-support/sessions.js";

const DIMENSIONS = 32;

/** A deterministic stand-in for an embedding model: word counts hashed into 32 buckets. */
function fakeEmbed() {
  const calls: string[][] = [];
  const embed = (texts: string[]) => {
    calls.push(texts);
    return texts.map((text) => {
      const vector = new Array<number>(DIMENSIONS).fill(0);
      for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
        let hash = 0;
        for (const char of word) hash = (hash * 31 + char.charCodeAt(0)) % DIMENSIONS;
        vector[hash] = (vector[hash] ?? 0) + 1;
      }
      return vector;
    });
  };
  return { embed, calls };
}

const everything = () => true;

describe("embeddingScorer", () => {
  it("ranks entries by cosine similarity of their embeddings to the query's", async () => {
    const scorer = embeddingScorer({ embed: fakeEmbed().embed, model: "fake" });
    await scorer.add([
      { id: "db", text: "postgres database migration" },
      { id: "ui", text: "button colour theme" },
    ]);
    const results = await scorer.search("database migration plan", { limit: 2, filter: everything });
    expect(results.map((r) => r.id)).toEqual(["db", "ui"]);
    expect(results[0]?.score).toBeGreaterThan(results[1]?.score ?? 1);
    expect(results[0]?.terms).toEqual([]);
  });

  it("returns only entries the filter accepts", async () => {
    const scorer = embeddingScorer({ embed: fakeEmbed().embed, model: "fake" });
    await scorer.add([{ id: "a", text: "alpha" }, { id: "b", text: "alpha beta" }]);
    expect((await scorer.search("alpha", { limit: 5, filter: (id) => id === "b" })).map((r) => r.id)).toEqual(["b"]);
  });

  it("embeds in batches of batchSize", async () => {
    const fake = fakeEmbed();
    const scorer = embeddingScorer({ embed: fake.embed, model: "fake", batchSize: 2 });
    await scorer.add(["a", "b", "c", "d", "e"].map((id) => ({ id, text: id })));
    expect(fake.calls.map((batch) => batch.length)).toEqual([2, 2, 1]);
  });

  it("is named after the model, so an index built with another model is rebuilt", async () => {
    const { path } = await sessionWith([user("postgres database")]);
    const indexPath = join(tempDir(), "index.json");
    await openRecallIndex(path, { indexPath, scorer: embeddingScorer({ embed: fakeEmbed().embed, model: "one" }) });
    const other = await openRecallIndex(path, { indexPath, scorer: embeddingScorer({ embed: fakeEmbed().embed, model: "two" }) });
    expect(other.scorerName).toBe("embedding:two");
    expect(other.lastUpdate).toMatchObject({ rebuilt: true, reason: expect.stringContaining("'embedding:one' scorer") });
  });

  it("stores the vectors in the index file: a reopened index embeds only the query", async () => {
    const { path, ids } = await sessionWith([user("postgres database migration"), user("button colour theme")]);
    const indexPath = join(tempDir(), "index.json");
    await openRecallIndex(path, { indexPath, scorer: embeddingScorer({ embed: fakeEmbed().embed, model: "fake" }) });
    const fake = fakeEmbed();
    const index = await openRecallIndex(path, { indexPath, scorer: embeddingScorer({ embed: fake.embed, model: "fake" }) });
    const hits = await index.search("database migration", { limit: 1 });
    expect(hits[0]?.entryId).toBe(ids[0]);
    expect(hits[0]?.snippet).toBe("postgres database migration");
    expect(fake.calls).toEqual([["database migration"]]);
  });

  it("throws INPUT_INVALID naming the scorer when embed returns the wrong number of vectors", async () => {
    const scorer = embeddingScorer({ embed: () => [[1, 0]], model: "broken" });
    await expect(scorer.add([{ id: "a", text: "a" }, { id: "b", text: "b" }])).rejects.toMatchObject({
      code: ErrorCodes.INPUT_INVALID,
      message: expect.stringContaining("'embedding:broken'"),
    });
  });

  it("throws INPUT_INVALID when embed returns vectors of different lengths", async () => {
    const scorer = embeddingScorer({ embed: (texts) => texts.map((_, i) => new Array(i + 2).fill(1)), model: "ragged" });
    await expect(scorer.add([{ id: "a", text: "a" }, { id: "b", text: "b" }])).rejects.toMatchObject({ code: ErrorCodes.INPUT_INVALID });
  });

  it("throws when restoring something that is not its state", () => {
    expect(() => embeddingScorer({ embed: fakeEmbed().embed, model: "fake" }).restore({ serializationVersion: 2 })).toThrow("not an embedding index");
  });
});

describe("cosineSimilarity", () => {
  it.each([
    [[1, 0], [1, 0], 1],
    [[1, 0], [0, 1], 0],
    [[1, 1], [-1, -1], -1],
    [[3, 4], [6, 8], 1],
    [[0, 0], [1, 1], 0],
  ])("of %j and %j is %d", (a, b, expected) => {
    expect(cosineSimilarity(a, b)).toBeCloseTo(expected, 10);
  });
});

describe("embeddingScorer in an index: a failing model", () => {
  it("fails the update, and the next update starts over instead of skipping what failed", async () => {
    const { path } = await sessionWith([user("postgres database")]);
    let failing = true;
    const fake = fakeEmbed();
    const embed = (texts: string[]) => {
      if (failing) throw new Error("model unavailable");
      return fake.embed(texts);
    };
    const index = new RecallIndex(path, { scorer: embeddingScorer({ embed, model: "flaky" }), indexPath: join(tempDir(), "i.json") });
    await expect(index.update()).rejects.toThrow("model unavailable");
    failing = false;
    expect(await index.update()).toMatchObject({ rebuilt: true, reason: "the previous update failed (model unavailable)", indexed: 1 });
    expect((await index.search("database")).length).toBe(1);
  });
});
