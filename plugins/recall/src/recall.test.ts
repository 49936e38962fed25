import { existsSync, rmSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { type CompactionPlugin, Compactor, createEstimateCounter, createPiAdapter, ErrorCodes, type PiMessage } from "@compaction/core";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import { describe, expect, it } from "vitest";
import recallDefault, { connectRecall, PLUGIN_NAME, recall, recallSettings } from "./index.js";
import { RECALL_DEFAULTS } from "./options.js";
import { append, assistant, sessionWith, tempDir, user } from "./test-support/sessions.js";

/** A strategy that compacts everything but the last two messages into a note. */
const keepLastTwo: CompactionPlugin = {
  name: "keep-last-two",
  apply(compactor) {
    compactor.hooks.selectCut.tap("keep-last-two", (run) => ({ firstKeptIndex: run.messages.length - 2, layer: "test", reason: "test" }));
    compactor.hooks.summarize.tap("keep-last-two", () => ({ text: "[older messages evicted]", kind: "note" }));
  },
};

function compactorWith(plugins: CompactionPlugin[]): Compactor<PiMessage> {
  return new Compactor<PiMessage>({ summarizer: createExtractiveSummarizer(), adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), contextWindow: 100_000, plugins });
}

/** The two messages keepLastTwo evicts are longer than its note, so the compaction is written (a bigger context is refused). */
const conversation = (): PiMessage[] => [user(`one: ${"look at the parser. ".repeat(10)}`), assistant(`two: ${"read parse.ts. ".repeat(10)}`), user("three"), assistant("four")];

describe("recall plugin", () => {
  it("is the package's default and named export, named 'recall'", () => {
    expect(recallDefault).toBe(recall);
    expect(recall().name).toBe(PLUGIN_NAME);
    expect(PLUGIN_NAME).toBe("recall");
  });

  it("provides memory_search, so other plugins (rolling) see that the agent can recall", () => {
    expect(recall().provides).toEqual(["memory_search"]);
    expect(compactorWith([recall()]).provides("memory_search")).toBe(true);
    expect(compactorWith([]).provides("memory_search")).toBe(false);
  });

  it("provides the configured tool name instead", () => {
    const compactor = compactorWith([recall({ toolName: "search_history" })]);
    expect(compactor.provides("search_history")).toBe(true);
    expect(compactor.provides("memory_search")).toBe(false);
  });

  it("rejects a misspelt option naming the plugin and suggesting the option", () => {
    expect(() => recall({ toolNmae: "x" } as never)).toThrow(expect.objectContaining({ code: ErrorCodes.PLUGIN_OPTIONS_INVALID, plugin: "recall", message: expect.stringContaining("toolName") }));
  });

  it("rejects a tool name providers would refuse", () => {
    expect(() => recall({ toolName: "memory search!" })).toThrow(expect.objectContaining({ code: ErrorCodes.PLUGIN_OPTIONS_INVALID }));
  });

  it("exposes its settings, defaults filled, on the compactor it was applied to", () => {
    const compactor = compactorWith([recall({ limit: 8 })]);
    expect(recallSettings(compactor)).toEqual({ ...RECALL_DEFAULTS, limit: 8 });
    expect(recallSettings(compactorWith([]))).toBeUndefined();
  });
});

describe("connectRecall", () => {
  it("returns undefined for a compactor without the recall plugin", async () => {
    const { path } = await sessionWith([user("hello")]);
    expect(await connectRecall(compactorWith([]), path)).toBeUndefined();
  });

  it("opens the session's index and builds the tool with the plugin's settings", async () => {
    const { path, ids } = await sessionWith([user("the cron job runs at midnight"), user("the cron job failed"), user("cron again")]);
    const indexDir = tempDir();
    const compactor = compactorWith([recall({ toolName: "search_history", limit: 2, indexDir })]);
    const connection = await connectRecall(compactor, path);
    expect(connection?.index.indexPath).toBe(join(indexDir, `${basename(path)}.recall.json`));
    expect(existsSync(connection?.index.indexPath as string)).toBe(true);
    expect(connection?.tool.name).toBe("search_history");
    const result = await connection?.tool.handle({ query: "cron" });
    expect(result?.kind === "search" && result.hits.length).toBe(2);
    expect(ids).toHaveLength(3);
  });

  it("brings the connected index up to date after a compaction", async () => {
    const { path } = await sessionWith([user("hello")]);
    const compactor = compactorWith([keepLastTwo, recall()]);
    const connection = await connectRecall(compactor, path, {});
    if (connection === undefined) throw new Error("no connection");
    await append(path, [user("appended while the agent worked")]);
    const result = await compactor.compact({ messages: conversation() });
    expect(result.status).toBe("compacted");
    expect(connection.index.indexedBytes).toBe(statSync(path).size);
  });

  it("leaves the index alone after a compaction that did not compact", async () => {
    const { path } = await sessionWith([user("hello")]);
    const compactor = compactorWith([recall()]);
    const connection = await connectRecall(compactor, path);
    const before = connection?.index.indexedBytes;
    await append(path, [user("not indexed by a noop")]);
    expect((await compactor.compact({ messages: conversation() })).status).toBe("noop");
    expect(connection?.index.indexedBytes).toBe(before);
  });

  it("stops updating a detached index", async () => {
    const { path } = await sessionWith([user("hello")]);
    const compactor = compactorWith([keepLastTwo, recall()]);
    const connection = await connectRecall(compactor, path);
    connection?.detach();
    const before = connection?.index.indexedBytes;
    await append(path, [user("after detach")]);
    expect((await compactor.compact({ messages: conversation() })).status).toBe("compacted");
    expect(connection?.index.indexedBytes).toBe(before);
  });

  it("turns a failed index update into a warning on the result; the compaction stands", async () => {
    const { path } = await sessionWith([user("hello")]);
    const compactor = compactorWith([keepLastTwo, recall()]);
    await connectRecall(compactor, path);
    rmSync(path);
    const result = await compactor.compact({ messages: conversation() });
    expect(result.status).toBe("compacted");
    expect(result.warnings.join("\n")).toContain(`could not update the recall index of ${path}`);
  });
});
