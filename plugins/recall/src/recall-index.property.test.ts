import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { openRecallIndex, type RecallIndex } from "./recall-index.js";
import { append, sessionWith, tempDir, user } from "./test-support/sessions.js";

const WORDS = ["alpha", "bravo", "charlie", "delta", "echo"] as const;

const text = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }).map((words) => words.join(" "));
/** A batch of messages appended together, to the leaf or (branching) to an earlier entry. */
const batch = fc.record({ texts: fc.array(text, { minLength: 1, maxLength: 3 }), branchFrom: fc.option(fc.nat(), { nil: undefined }), reopen: fc.boolean() });

async function everySearch(index: RecallIndex): Promise<unknown[]> {
  const all = [];
  for (const word of WORDS) {
    const hits = await index.search(word, { limit: 100 });
    all.push(hits.map((hit) => [hit.entryId, hit.role, hit.snippet, Number(hit.score.toFixed(9))]));
  }
  return all;
}

describe("RecallIndex: incremental updates", () => {
  it("give the same results as one build of the final file, however the appends were split, branched and reopened", async () => {
    await fc.assert(
      fc.asyncProperty(text, fc.array(batch, { maxLength: 5 }), async (first, batches) => {
        const { path, ids } = await sessionWith([user(first)]);
        const indexPath = join(tempDir(), "incremental.json");
        let index = await openRecallIndex(path, { indexPath });
        for (const { texts, branchFrom, reopen } of batches) {
          const parent = branchFrom === undefined ? undefined : ids[branchFrom % ids.length];
          ids.push(...(await append(path, texts.map(user), parent)));
          if (reopen) index = await openRecallIndex(path, { indexPath });
          else await index.update();
          expect(index.lastUpdate?.rebuilt).toBe(false);
        }
        const fresh = await openRecallIndex(path, { indexPath: join(tempDir(), "fresh.json") });
        expect(index.leafId).toBe(fresh.leafId);
        expect(await everySearch(index)).toEqual(await everySearch(fresh));
      }),
      { numRuns: 25 },
    );
  });
});

describe("RecallIndex: the query as typed ranks first", () => {
  // Path-like words: BM25 splits "alpha-bravo.ts" into alpha, bravo, ts, so many entries share them.
  const PARTS = ["alpha", "bravo", "charlie", "src", "ts", "md"] as const;
  const SEPARATORS = ["-", ".", "/", "_", " "] as const;
  const word = fc.constantFrom(...PARTS);
  const path = fc
    .tuple(word, fc.array(fc.tuple(fc.constantFrom(...SEPARATORS), word), { minLength: 1, maxLength: 3 }))
    .map(([head, rest]) => head + rest.map(([separator, part]) => separator + part).join(""));
  const entryText = fc.array(fc.oneof(word, path), { minLength: 1, maxLength: 8 }).map((words) => words.join(" "));

  it("puts every entry that contains the query (ignoring case) above every entry that only shares its words", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(entryText, { minLength: 1, maxLength: 12 }), path, fc.boolean(), async (texts, query, upper) => {
        const { path: file } = await sessionWith(texts.map(user));
        const index = await openRecallIndex(file, { indexPath: join(tempDir(), "exact.json") });
        const hits = await index.search(upper ? query.toUpperCase() : query, { limit: 100 });
        const containing = texts.filter((text) => text.toLowerCase().includes(query.toLowerCase())).length;
        // Every containing entry is found and marked, and they all come first.
        expect(hits.filter((hit) => hit.exact)).toHaveLength(containing);
        expect(hits.slice(0, containing).every((hit) => hit.exact)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });
});
