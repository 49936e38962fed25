import { describe, expect, it } from "vitest";
import { bm25Scorer } from "./bm25-scorer.js";

const everything = () => true;
const docs = [
  { id: "a", text: "configure the compaction threshold for the agent" },
  { id: "b", text: "the websocket reconnect logic retries forever" },
  { id: "c", text: "websocket websocket heartbeat every second" },
];

function scorer() {
  const s = bm25Scorer();
  s.add(docs);
  return s;
}

describe("bm25Scorer", () => {
  it("ranks an entry with more occurrences of the word higher (BM25)", async () => {
    const results = await scorer().search("websocket", { limit: 5, filter: everything });
    expect(results.map((r) => r.id)).toEqual(["c", "b"]);
    expect(results[0]?.score).toBeGreaterThan(results[1]?.score ?? Infinity);
  });

  it("matches a query word as the start of a longer word", async () => {
    expect((await scorer().search("compact", { limit: 5, filter: everything })).map((r) => r.id)).toEqual(["a"]);
  });

  it("tolerates a typo in a longer query word", async () => {
    expect((await scorer().search("heartbaet", { limit: 5, filter: everything })).map((r) => r.id)).toEqual(["c"]);
  });

  it("reports the entry's words that matched, for the snippet", async () => {
    const [result] = await scorer().search("compact", { limit: 1, filter: everything });
    expect(result?.terms).toEqual(["compaction"]);
  });

  it("returns only entries the filter accepts, and at most limit", async () => {
    const s = scorer();
    expect((await s.search("websocket", { limit: 5, filter: (id) => id !== "c" })).map((r) => r.id)).toEqual(["b"]);
    expect(await s.search("websocket", { limit: 1, filter: everything })).toHaveLength(1);
  });

  it("replaces an entry added again under the same id", async () => {
    const s = scorer();
    s.add([{ id: "b", text: "rewritten" }]);
    expect((await s.search("reconnect", { limit: 5, filter: everything })).map((r) => r.id)).toEqual([]);
    expect((await s.search("rewritten", { limit: 5, filter: everything })).map((r) => r.id)).toEqual(["b"]);
  });

  it("restores from its JSON to the same results", async () => {
    const restored = bm25Scorer();
    restored.restore(JSON.parse(JSON.stringify(scorer().toJSON())));
    expect(await restored.search("websocket", { limit: 5, filter: everything })).toEqual(await scorer().search("websocket", { limit: 5, filter: everything }));
  });

  it("throws when restoring something that is not its state", () => {
    expect(() => bm25Scorer().restore({ vectors: {} })).toThrow("not a minisearch index");
  });

  it("forgets everything on reset", async () => {
    const s = scorer();
    s.reset();
    expect(await s.search("websocket", { limit: 5, filter: everything })).toEqual([]);
  });

  it("leaves out words longer than 64 characters (base64, minified code)", async () => {
    const s = bm25Scorer();
    const blob = "A".repeat(80);
    s.add([{ id: "x", text: `image ${blob}` }]);
    expect(await s.search(blob, { limit: 5, filter: everything })).toEqual([]);
    expect((await s.search("image", { limit: 5, filter: everything })).map((r) => r.id)).toEqual(["x"]);
  });
});
