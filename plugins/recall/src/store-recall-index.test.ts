import { chmodSync, copyFileSync } from "node:fs";
import { join } from "node:path";
import { FIXTURES_DIR } from "@compaction/fixtures";
import { type EntryHit, type EntrySearchOptions, MemoryEntryStore, readSession, type SessionEntry, upgradeSession } from "@compaction/transcript";
import { describe, expect, it } from "vitest";
import { entryText } from "./entry-text.js";
import { memorySearchTool } from "./memory-search-tool.js";
import { openRecallIndex } from "./recall-index.js";
import { openStoreRecallIndex } from "./store-recall-index.js";
import { assistant, message, tempDir, user } from "./test-support/sessions.js";

const LARGE = join(FIXTURES_DIR, "pi-large-session.jsonl");

/** A version 3 copy of the real pi session, and a store holding the same header and entries. */
async function fileAndStore(): Promise<{ path: string; store: MemoryEntryStore }> {
  const path = join(tempDir(), "session.jsonl");
  copyFileSync(LARGE, path);
  chmodSync(path, 0o644);
  await upgradeSession(path);
  const parsed = readSession(path);
  return { path, store: new MemoryEntryStore({ header: parsed.header, entries: parsed.entries }) };
}

/**
 * A store with a full-text search of its own, as SQLite's and Postgres's are: entries holding
 * every word of the query (ignoring case), scored by how often the words occur, best first.
 */
class SearchingStore extends MemoryEntryStore {
  readonly searches: string[] = [];
  async search(query: string, options: EntrySearchOptions): Promise<EntryHit[]> {
    this.searches.push(query);
    const words = query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
    const hits: EntryHit[] = [];
    for (const entry of await this.entries()) {
      const text = entryText(entry)?.text.toLowerCase() ?? "";
      const counts = words.map((word) => text.split(word).length - 1);
      if (words.length > 0 && counts.every((count) => count > 0)) hits.push({ entry, score: counts.reduce((a, b) => a + b, 0) });
    }
    return hits.sort((a, b) => b.score - a.score).slice(0, options.limit);
  }
}

describe("recall over a session store without a search of its own", () => {
  it("gives memory_search the same text and ids as over the same session in a pi file", async () => {
    const { path, store } = await fileAndStore();
    const fileTool = memorySearchTool(await openRecallIndex(path, { indexPath: join(tempDir(), "index.json") }));
    const storeIndex = await openStoreRecallIndex(store);
    const storeTool = memorySearchTool(storeIndex);
    expect(storeIndex.scorerName).toBe("bm25");
    for (const query of ["port user-message-selector", "theme", "npm run check", "keybindings.ts", "error"]) {
      const fromFile = await fileTool.handle({ query, limit: 8 });
      const fromStore = await storeTool.handle({ query, limit: 8 });
      expect(fromStore.text, query).toBe(fromFile.text);
    }
    const first = await fileTool.handle({ query: "port user-message-selector" });
    if (first.kind !== "search") throw new Error(first.text);
    const id = first.hits[0]!.entryId;
    expect((await storeTool.handle({ entryId: id })).text).toBe((await fileTool.handle({ entryId: id })).text);
  });

  it("sees entries other writers append, and searches the current branch only", async () => {
    const store = new MemoryEntryStore();
    const [root] = await store.append([message(user("we chose the zephyr queue for jobs"))]);
    const index = await openStoreRecallIndex(store);
    const tool = memorySearchTool(index);
    expect((await tool.handle({ query: "kestrel" })).text).toContain("No entries on the current branch");
    await store.append([message(assistant("kestrel is the cache we deploy"))]);
    const found = await tool.handle({ query: "kestrel" });
    expect(found.kind).toBe("search");
    expect(found.text).toContain("kestrel is the cache we deploy");
    // A branch from the root: the kestrel entry is now off the current branch.
    await store.append([{ ...message(user("another path")), parentId: root!.id }]);
    expect((await tool.handle({ query: "kestrel" })).text).toContain("No entries on the current branch");
    expect((await tool.handle({ query: "zephyr" })).text).toContain("zephyr queue");
  });
});

describe("recall over a session store with its own full-text search", () => {
  it("asks the store, ranks entries holding the query as typed first, and gives the file's text", async () => {
    const { path, store: plain } = await fileAndStore();
    const store = new SearchingStore({ header: await plain.header(), entries: await plain.entries() });
    const index = await openStoreRecallIndex(store);
    expect(index.scorerName).toBe("store:memory");
    const tool = memorySearchTool(index);
    const result = await tool.handle({ query: "user-message-selector", limit: 5 });
    expect(store.searches).toEqual(["user-message-selector"]);
    if (result.kind !== "search") throw new Error(result.text);
    expect(result.hits.length).toBeGreaterThan(0);
    // Exact first: every hit that holds the query as typed comes before every one that does not.
    const exact = result.hits.map((hit) => hit.exact);
    expect(exact).toEqual([...exact].sort((a, b) => Number(b) - Number(a)));
    expect(exact[0]).toBe(true);
    // Ids, roles, times and snippets are those of the same entries read from the pi file.
    const fileIndex = await openRecallIndex(path, { indexPath: join(tempDir(), "index.json") });
    for (const hit of result.hits) {
      const entry = await fileIndex.get(hit.entryId);
      expect(entry?.role).toBe(hit.role);
      expect(entry?.timestamp).toBe(hit.timestamp);
      expect(hit.snippet.length).toBeGreaterThan(0);
    }
    const whole = await tool.handle({ entryId: result.hits[0]!.entryId });
    const fileTool = memorySearchTool(fileIndex);
    expect(whole.text).toBe((await fileTool.handle({ entryId: result.hits[0]!.entryId })).text);
  });

  it("leaves out the store's hits that are off the current branch", async () => {
    const store = new SearchingStore();
    const [root] = await store.append([message(user("start"))]);
    const [offBranch] = await store.append([message(user("the ORCHID-42 ticket"))]);
    await store.append([{ ...message(user("ORCHID-42 again, on the branch")), parentId: root!.id }]);
    const hits = await (await openStoreRecallIndex(store)).search("ORCHID-42");
    expect(hits.map((hit) => hit.entryId)).not.toContain(offBranch!.id);
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ role: "user", exact: true });
  });
});

describe("entries of a store as recall reads them", () => {
  it("numbers them as lines of the same session in a pi file (the header is line 1)", async () => {
    const store = new MemoryEntryStore();
    const written: SessionEntry[] = await store.append([message(user("one")), message(user("two"))]);
    const index = await openStoreRecallIndex(store);
    expect((await index.get(written[1]!.id))?.line).toBe(3);
  });
});

describe("connectRecall with a session store", () => {
  it("gives the memory_search tool over the store, with the recall plugin's settings", async () => {
    const { Compactor, createEstimateCounter, createPiAdapter } = await import("@compaction/core");
    const { connectRecall, recall } = await import("./index.js");
    const compactor = new Compactor({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), contextWindow: 100_000, plugins: [recall({ toolName: "search_history", limit: 2 })] });
    const store = new SearchingStore();
    await store.append([message(user("the GRANITE build flag")), message(user("GRANITE again")), message(user("and GRANITE once more"))]);
    const connection = await connectRecall(compactor, store);
    expect(connection?.index.sessionPath).toBe(store.location);
    expect(connection?.tool.name).toBe("search_history");
    const result = await connection!.tool.handle({ query: "granite" });
    if (result.kind !== "search") throw new Error(result.text);
    expect(result.hits).toHaveLength(2);
    expect(store.searches).toEqual(["granite"]);
    connection!.detach();
  });
});
