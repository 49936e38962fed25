/**
 * compactionHistory in a real LangChain v1 agent (`createAgent` from `langchain`, @langchain/core's
 * own `fakeModel()`), threads in a real SQLite session store: a long thread compacts (compaction
 * entries in the store), then a new agent with fresh objects on the same file and thread id
 * continues it, and the model's `memory_search` call finds the evicted fact by its exact identifier.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CompactionError, ErrorCodes } from "@compaction/core";
import { failingSummarizer, makeProject, removeProjects } from "@compaction/core/testing";
import { MemoryEntryStore, openSqliteStore } from "@compaction/transcript";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { createAgent } from "langchain";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { compactionHistory, type CompactionHistoryOptions } from "./compaction-history.js";
import type { ThreadEvent } from "@compaction/context-manager";

const CONTEXT_WINDOW = 6_000;
const THREAD_ID = "research-thread-7f3e";
const INCIDENT = "INC-20931";
const FACT = `Incident ${INCIDENT}: the root cause was a stale DNS cache on resolver r-eu-7; flush it with dnsctl purge --zone eu.`;
const TURNS = 24;
const SYSTEM = "You are a site-reliability assistant.";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
afterAll(() => removeProjects());

function databaseFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "compaction-langchain-thread-"));
  dirs.push(dir);
  return join(dir, "threads.sqlite");
}

function project(): string {
  return makeProject({ ".compactionrc.json": JSON.stringify({ preset: "safeguard", contextWindow: CONTEXT_WINDOW, reserveTokens: 1_000 }) });
}

/** About 300 tokens of distinct text for turn `turn`, so nothing compresses away. */
function chatter(turn: number): string {
  return Array.from({ length: 24 }, (_, line) => `Turn ${turn} note ${line}: the build of service-${turn}-${line} passed on runner ${(turn * 7 + line) % 13}.`).join(" ");
}

function historyFor(file: string, cwd: string, extra: Partial<CompactionHistoryOptions> = {}) {
  return compactionHistory({ cwd, openStore: (threadId) => openSqliteStore({ file, session: threadId, create: { cwd } }), ...extra });
}

function textOf(message: BaseMessage): string {
  return typeof message.content === "string" ? message.content : JSON.stringify(message.content);
}

describe("compactionHistory on a SQLite store", () => {
  it("records a long thread with its compactions, and a new agent on the same file continues it and recalls an evicted fact", async () => {
    const cwd = project();
    const file = databaseFile();
    const events: ThreadEvent[] = [];

    // Worker 1: a long thread; the first turn states the fact, the rest push it out of the context.
    const history = historyFor(file, cwd, { on: (event) => events.push(event) });
    const model = fakeModel();
    for (let turn = 0; turn < TURNS; turn++) model.respond(new AIMessage(`Noted for turn ${turn}.`));
    const agent = createAgent({ model, tools: [history.memorySearch], systemPrompt: SYSTEM, middleware: [history.middleware] });
    let lastState: { messages: BaseMessage[] } | undefined;
    for (let turn = 0; turn < TURNS; turn++) {
      lastState = await agent.invoke({ messages: [new HumanMessage(turn === 0 ? FACT : chatter(turn))] }, { configurable: { thread_id: THREAD_ID } });
    }
    await history.close();
    const written = events.filter((event) => event.type === "compaction-end" && event.status === "compacted");
    expect(written.length).toBeGreaterThan(0);
    expect(textOf(lastState!.messages.at(-1)!)).toBe(`Noted for turn ${TURNS - 1}.`);

    // The store kept everything: every message of every turn (2 per turn) and a compaction entry per compaction.
    let store = await openSqliteStore({ file, session: THREAD_ID });
    const entries = await store.entries();
    expect(entries.filter((entry) => entry.type === "message")).toHaveLength(TURNS * 2);
    expect(entries.filter((entry) => entry.type === "compaction")).toHaveLength(written.length);
    await store.close();

    // Worker 2: a new agent, fresh objects, the same file and thread id.
    const history2 = historyFor(file, cwd);
    const model2 = fakeModel()
      .respondWithTools([{ name: "memory_search", args: { query: INCIDENT }, id: "recall-1" }])
      .respond(new AIMessage("A stale DNS cache on resolver r-eu-7."));
    const agent2 = createAgent({ model: model2, tools: [history2.memorySearch], systemPrompt: SYSTEM, middleware: [history2.middleware] });
    const state = await agent2.invoke({ messages: [new HumanMessage(`What was the root cause of ${INCIDENT}?`)] }, { configurable: { thread_id: THREAD_ID } });
    await history2.close();

    // The first call resumed from the compaction: a summary first, the fact's message no longer there as written.
    const firstCall = (model2.calls[0]!.messages as BaseMessage[]).filter((message) => message.getType() !== "system");
    expect(firstCall[0]!.additional_kwargs["lc_source"]).toBe("compaction_summary");
    expect(firstCall.some((message) => textOf(message) === FACT)).toBe(false);
    expect(firstCall.some((message) => textOf(message) === `Noted for turn ${TURNS - 1}.`)).toBe(true);
    // The tool's answer, sent with the second call, holds the evicted fact.
    const secondCall = model2.calls[1]!.messages as BaseMessage[];
    const toolAnswer = secondCall.find((message) => ToolMessage.isInstance(message));
    expect(toolAnswer).toBeDefined();
    expect(textOf(toolAnswer!)).toContain("stale DNS cache on resolver r-eu-7");
    // It names the first turn's own entry (not only the summary, which quotes the fact too).
    expect(textOf(toolAnswer!)).toContain(`entry ${entries.find((entry) => entry.type === "message")!.id} · user`);
    expect(textOf(state.messages.at(-1)!)).toBe("A stale DNS cache on resolver r-eu-7.");

    // The new turn is in the store too: the question, the call, the tool's answer, the reply; the fact as written.
    store = await openSqliteStore({ file, session: THREAD_ID });
    const after = await store.entries();
    const messages = after.filter((entry) => entry.type === "message") as unknown as { message: { role: string; details: { langchain: { type: string; data: { content: unknown } } } } }[];
    expect(messages).toHaveLength(TURNS * 2 + 4);
    expect(messages.slice(-4).map((entry) => entry.message.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(messages[0]!.message.details.langchain).toMatchObject({ type: "human", data: { content: FACT } });
    await store.close();
  });

  it("sends a message too large for the window shrunk to head and tail, while the agent's state and the store keep it whole", async () => {
    const cwd = project();
    const file = databaseFile();
    const history = historyFor(file, cwd);
    const model = fakeModel().respond(new AIMessage("Read it."));
    const agent = createAgent({ model, tools: [history.memorySearch], systemPrompt: SYSTEM, middleware: [history.middleware] });
    const huge = Array.from({ length: 60 }, (_, turn) => chatter(turn)).join("\n");
    const state = await agent.invoke({ messages: [new HumanMessage(huge)] }, { configurable: { thread_id: THREAD_ID } });
    await history.close();
    const sent = (model.calls[0]!.messages as BaseMessage[]).filter((message) => message.getType() === "human");
    expect(textOf(sent.at(-1)!).length).toBeLessThan(huge.length / 2);
    expect(textOf(sent.at(-1)!).startsWith(huge.slice(0, 200))).toBe(true);
    expect(state.messages.some((message) => textOf(message) === huge)).toBe(true);
    const store = await openSqliteStore({ file, session: THREAD_ID });
    const first = (await store.entries())[0] as unknown as { message: { details: { langchain: { data: { content: string } } } } };
    expect(first.message.details.langchain.data.content).toBe(huge);
    await store.close();
  });

  it("sends the newest turns that fit when the summarizer fails, and tells its on callback with a COMPACTION_CONTEXT_TRIMMED warning", async () => {
    const cwd = project();
    const failing = failingSummarizer();
    const events: ThreadEvent[] = [];
    const store = new MemoryEntryStore();
    const history = compactionHistory({ cwd, openStore: () => store.handle(), plugins: [failing.plugin], on: (event) => events.push(event) });
    const model = fakeModel().respond(new AIMessage("module-149.ts, retry149."));
    const agent = createAgent({ model, tools: [history.memorySearch], middleware: [history.middleware] });
    // Short turns: only leaving older ones out of what is sent makes room.
    const turns = Array.from({ length: 150 }, (_, turn) => [
      new HumanMessage({ id: `h-${turn}`, content: `Question ${turn}: which module handles retry case ${turn}? Name the file and the function.` }),
      new AIMessage({ id: `a-${turn}`, content: `module-${turn}.ts, function retry${turn}, with a backoff of ${turn} seconds and a tenth of jitter.` }),
    ]).flat();
    const state = await agent.invoke({ messages: [...turns, new HumanMessage({ id: "q-new", content: "And retry case 149 again?" })] }, { configurable: { thread_id: THREAD_ID } });
    await history.close();
    expect(failing.calls()).toBe(1);
    const sent = model.calls[0]!.messages as BaseMessage[];
    expect(sent.length).toBeLessThan(turns.length);
    expect(textOf(sent.at(-1)!)).toBe("And retry case 149 again?");
    expect(state.messages).toHaveLength(turns.length + 2); // the agent's state keeps every message
    const trimmed = events.filter((event) => event.type === "warning" && event.code === ErrorCodes.CONTEXT_TRIMMED);
    expect(trimmed).toHaveLength(1);
    expect(trimmed[0]?.type === "warning" && trimmed[0].message).toMatch(/^The request leaves out \d+ older message\(s\) of the context's 301 /);
  });

  it("takes the reply's reserve from its options: a reserveTokens the model's window cannot hold fails the run naming the option", async () => {
    const cwd = project();
    const history = compactionHistory({ cwd, reserveTokens: 4_000, openStore: () => new MemoryEntryStore() });
    const agent = createAgent({ model: fakeModel().respond(new AIMessage("hi")), tools: [history.memorySearch], middleware: [history.middleware] });
    await expect(agent.invoke({ messages: [new HumanMessage("hello")] }, { configurable: { thread_id: THREAD_ID } })).rejects.toMatchObject({
      code: ErrorCodes.INPUT_INVALID,
      path: "/reserveTokens",
      message: expect.stringContaining("the reserveTokens option of @compaction/langchain history"),
    });
    await history.close();
  });

  it("fails the run with COMPACTION_INPUT_INVALID when no thread_id is given, and with the store's COMPACTION_TRANSCRIPT_NOT_FOUND for an unknown one", async () => {
    const cwd = project();
    const file = databaseFile();
    const created = await openSqliteStore({ file, session: THREAD_ID, create: { cwd } });
    await created.close();
    const history = compactionHistory({ cwd, openStore: (threadId) => openSqliteStore({ file, session: threadId }) });
    const agent = createAgent({ model: fakeModel().respond(new AIMessage("hi")), tools: [history.memorySearch], middleware: [history.middleware] });
    const missing = await agent.invoke({ messages: [new HumanMessage("hello")] }).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(CompactionError);
    expect(missing).toMatchObject({ code: ErrorCodes.INPUT_INVALID, message: expect.stringContaining("the run has no thread id: configurable.thread_id is not set") });
    const unknown = await agent.invoke({ messages: [new HumanMessage("hello")] }, { configurable: { thread_id: "no-such-thread" } }).catch((error: unknown) => error);
    expect(unknown).toBeInstanceOf(CompactionError);
    expect(unknown).toMatchObject({ code: ErrorCodes.TRANSCRIPT_NOT_FOUND, message: expect.stringContaining("no-such-thread") });
    await history.close();
  });

  it("fails with COMPACTION_TRANSCRIPT_INVALID naming the thread when its stored context holds a message LangChain cannot read", async () => {
    const cwd = project();
    const file = databaseFile();
    const store = await openSqliteStore({ file, session: THREAD_ID, create: { cwd } });
    await store.append([{ type: "message", message: { role: "user", content: "again", timestamp: 2, details: { langchain: { type: 42 } } } } as never]);
    await store.close();
    const history = historyFor(file, cwd);
    const agent = createAgent({ model: fakeModel().respond(new AIMessage("hi")), tools: [history.memorySearch], middleware: [history.middleware] });
    const error = await agent.invoke({ messages: [new HumanMessage("hello")] }, { configurable: { thread_id: THREAD_ID } }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CompactionError);
    expect(error).toMatchObject({ code: ErrorCodes.TRANSCRIPT_INVALID, message: expect.stringContaining(`message 1 of the context of sqlite:`) });
    expect((error as Error).message).toContain(`#${THREAD_ID}`);
    await history.close();
    // Nothing was written by the failed run.
    const reopened = await openSqliteStore({ file, session: THREAD_ID });
    expect(await reopened.entries()).toHaveLength(1);
    await reopened.close();
  });

  it("refuses options without openStore, naming the option", () => {
    expect(() => compactionHistory({} as never)).toThrow(expect.objectContaining({ code: ErrorCodes.INPUT_INVALID, message: expect.stringContaining("openStore must be a function") }));
  });
});
