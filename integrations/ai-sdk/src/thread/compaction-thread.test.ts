/**
 * A thread kept in a real SQLite session store, driven through the real `ai` package's
 * `generateText` with its own `MockLanguageModelV3`: a long conversation compacts (a compaction
 * entry in the store), then fresh objects on the same file and thread id continue it, and the
 * model's `memory_search` call finds the evicted fact by its exact identifier.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CompactionError, ErrorCodes } from "@compaction/core";
import { failingSummarizer, makeProject, removeProjects } from "@compaction/core/testing";
import { MemoryEntryStore, openSqliteStore, type SqliteStore } from "@compaction/transcript";
import { generateText, type ModelMessage, stepCountIs } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { openCompactionThread } from "./compaction-thread.js";
import type { ThreadEvent } from "@compaction/context-manager";

const CONTEXT_WINDOW = 6_000;
const THREAD_ID = "support-thread-0194f3a2";
const INCIDENT = "INC-20931";
const FACT = `Incident ${INCIDENT}: the root cause was a stale DNS cache on resolver r-eu-7; flush it with dnsctl purge --zone eu.`;
const TURNS = 24;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
afterAll(() => removeProjects());

function databaseFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "compaction-ai-sdk-thread-"));
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

const USAGE = { inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 10, text: 10, reasoning: 0 } };

/** A mock model that answers each call with the next reply of `script`, recording every prompt. */
function scriptedModel(script: readonly ({ text: string } | { call: string; input: object })[]) {
  const prompts: { role: string; content: unknown }[][] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      prompts.push(options.prompt as never);
      const next = script[prompts.length - 1] ?? { text: "Done." };
      if ("text" in next) return { content: [{ type: "text", text: next.text }], finishReason: { unified: "stop", raw: "stop" }, usage: USAGE, warnings: [] };
      return {
        content: [{ type: "tool-call", toolCallId: `call-${prompts.length}`, toolName: next.call, input: JSON.stringify(next.input) }],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage: USAGE,
        warnings: [],
      };
    },
  });
  return { model, prompts };
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  return JSON.stringify(content);
}

describe("openCompactionThread on a SQLite store", () => {
  it("records a long thread with its compactions, and a fresh thread on the same file continues it and recalls an evicted fact", async () => {
    const cwd = project();
    const file = databaseFile();
    const events: ThreadEvent[] = [];

    // Worker 1: a long conversation. The first turn states the fact; the rest push it out of the context.
    let store: SqliteStore = await openSqliteStore({ file, session: THREAD_ID, create: { cwd } });
    let thread = await openCompactionThread({ store, cwd, on: (event) => events.push(event) });
    const firstTurn: ModelMessage[] = [];
    for (let turn = 0; turn < TURNS; turn++) {
      const user: ModelMessage = { role: "user", content: turn === 0 ? FACT : chatter(turn) };
      await thread.append(user);
      const { model } = scriptedModel([{ text: `Noted for turn ${turn}.` }]);
      const result = await generateText({ model, messages: await thread.messages(), tools: { memory_search: thread.memorySearch }, prepareStep: thread.prepareStep });
      await thread.append(result.response.messages);
      if (turn === 0) firstTurn.push(user, ...result.response.messages);
    }
    expect(thread.compactions).toBeGreaterThan(0);
    const written = events.filter((event) => event.type === "compaction-end" && event.status === "compacted");
    expect(written.length).toBe(thread.compactions);
    expect(written.every((event) => event.type === "compaction-end" && typeof event.entryId === "string")).toBe(true);
    await thread.close();
    await store.close();

    // The store kept everything: every message appended (2 per turn) and the compaction entries.
    store = await openSqliteStore({ file, session: THREAD_ID });
    const entries = await store.entries();
    expect(entries.filter((entry) => entry.type === "message")).toHaveLength(TURNS * 2);
    expect(entries.filter((entry) => entry.type === "compaction").length).toBe(written.length);
    await store.close();

    // Worker 2: fresh objects, the same file and thread id.
    store = await openSqliteStore({ file, session: THREAD_ID });
    thread = await openCompactionThread({ store, cwd });
    const context = await thread.messages();
    // It resumes from the compaction: a summary first, the fact's message no longer there as it was written.
    expect(JSON.stringify(context[0])).toContain('"kind":"summary"');
    expect(context.some((message) => textOf(message.content) === FACT)).toBe(false);
    // The messages after the summary are the ones appended, as they were appended.
    const last = context[context.length - 1]!;
    expect(last).toEqual({ role: "assistant", content: [{ type: "text", text: `Noted for turn ${TURNS - 1}.` }] });

    await thread.append({ role: "user", content: `What was the root cause of ${INCIDENT}?` });
    const { model, prompts } = scriptedModel([{ call: "memory_search", input: { query: INCIDENT } }, { text: "A stale DNS cache on resolver r-eu-7." }]);
    const result = await generateText({
      model,
      messages: await thread.messages(),
      tools: { memory_search: thread.memorySearch },
      prepareStep: thread.prepareStep,
      stopWhen: stepCountIs(3),
    });
    await thread.append(result.response.messages);
    // The tool's answer, sent to the model with the second call, holds the evicted fact.
    const toolMessage = prompts[1]!.find((message) => message.role === "tool");
    expect(textOf(toolMessage?.content)).toContain("stale DNS cache on resolver r-eu-7");
    // It names the first turn's own entry (not only the summary, which quotes the fact too).
    const factEntry = (await store.entries()).find((entry) => entry.type === "message")!;
    expect(textOf(toolMessage?.content)).toContain(`entry ${factEntry.id} · user`);
    expect(result.text).toBe("A stale DNS cache on resolver r-eu-7.");
    // The first turn is still in the store, word for word, as the AI SDK message it was.
    const stored = (await store.entries()).find((entry) => entry.type === "message") as { message: { details: { aiSdk: unknown } } };
    expect(stored.message.details.aiSdk).toEqual(firstTurn[0]);
    await thread.close();
    await store.close();
  });

  it("works with ai 7 too: its generateText runs the thread's memory_search tool, and its responseMessages are appended", async () => {
    const ai7 = (await import("ai7")) as unknown as typeof import("ai");
    const { MockLanguageModelV3: Mock7 } = (await import("ai7/test")) as unknown as typeof import("ai/test");
    const cwd = project();
    const file = databaseFile();
    let store = await openSqliteStore({ file, session: THREAD_ID, create: { cwd } });
    let thread = await openCompactionThread({ store, cwd, contextWindow: 100_000 });
    await thread.append({ role: "user", content: FACT });
    await thread.append({ role: "assistant", content: [{ type: "text", text: "Noted." }] });
    await thread.close();
    await store.close();

    store = await openSqliteStore({ file, session: THREAD_ID });
    thread = await openCompactionThread({ store, cwd, contextWindow: 100_000 });
    await thread.append({ role: "user", content: `What caused ${INCIDENT}?` });
    const prompts: { role: string; content: unknown }[][] = [];
    const script = [
      { content: [{ type: "tool-call", toolCallId: "r1", toolName: "memory_search", input: JSON.stringify({ query: INCIDENT }) }], finishReason: { unified: "tool-calls", raw: "tool_calls" } },
      { content: [{ type: "text", text: "A stale DNS cache." }], finishReason: { unified: "stop", raw: "stop" } },
    ];
    const model = new Mock7({
      doGenerate: async (options) => {
        prompts.push(options.prompt as never);
        return { ...script[prompts.length - 1]!, usage: USAGE, warnings: [] } as never;
      },
    });
    const result = await ai7.generateText({ model, messages: await thread.messages(), tools: { memory_search: thread.memorySearch }, prepareStep: thread.prepareStep, stopWhen: ai7.stepCountIs(3) });
    const responseMessages = (result as unknown as { responseMessages: ModelMessage[] }).responseMessages;
    await thread.append(responseMessages, { usage: result.usage });
    expect(textOf(prompts[1]!.find((message) => message.role === "tool")?.content)).toContain("stale DNS cache on resolver r-eu-7");
    const roles = (await store.entries()).map((entry) => (entry as { message?: { role: string } }).message?.role);
    expect(roles).toEqual(["user", "assistant", "user", "assistant", "toolResult", "assistant"]);
    await thread.close();
    await store.close();
  });

  it("runs on any EntryStore: two handles on one in-memory session share the thread, and the store's lack of search is made up for in memory", async () => {
    const cwd = project();
    const first = new MemoryEntryStore();
    const second = first.handle();
    const a = await openCompactionThread({ store: first, cwd, contextWindow: 100_000 });
    const b = await openCompactionThread({ store: second, cwd, contextWindow: 100_000 });
    await a.append([{ role: "user", content: FACT }, { role: "assistant", content: [{ type: "text", text: "Noted." }] }]);
    // The other handle reads what was written through the first before it sends.
    expect(await b.messages()).toEqual([{ role: "user", content: FACT }, { role: "assistant", content: [{ type: "text", text: "Noted." }] }]);
    const answer = await b.memorySearch.execute!({ query: INCIDENT }, { toolCallId: "t", messages: [] });
    expect(answer).toContain("stale DNS cache on resolver r-eu-7");
    await a.close();
    await b.close();
  });

  it("keeps a tool loop's calls and results, each tool-result part as its own pi tool result, and reads them back as written", async () => {
    const cwd = project();
    const store = await openSqliteStore({ file: databaseFile(), session: THREAD_ID, create: { cwd } });
    const thread = await openCompactionThread({ store, cwd, contextWindow: 100_000 });
    const messages: ModelMessage[] = [
      { role: "user", content: [{ type: "text", text: "Read both files." }], providerOptions: { app: { turn: 1 } } },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "Two reads at once." },
          { type: "tool-call", toolCallId: "a", toolName: "read_file", input: { path: "src/a.ts" } },
          { type: "tool-call", toolCallId: "b", toolName: "read_file", input: { path: "src/b.ts" } },
        ],
      },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "a", toolName: "read_file", output: { type: "text", value: "export const a = 1;" } },
          { type: "tool-result", toolCallId: "b", toolName: "read_file", output: { type: "error-text", value: "ENOENT: src/b.ts" } },
        ],
      },
    ];
    await thread.append(messages);
    const entries = await store.entries();
    expect(entries.map((entry) => (entry as { message?: { role: string } }).message?.role)).toEqual(["user", "assistant", "toolResult", "toolResult"]);
    expect((entries[3] as { message: { isError: boolean; toolCallId: string } }).message).toMatchObject({ isError: true, toolCallId: "b" });
    const back = await thread.messages();
    expect(back.slice(0, 2)).toEqual(messages.slice(0, 2));
    expect(back.slice(2)).toEqual([
      { role: "tool", content: [messages[2]!.content[0]] },
      { role: "tool", content: [messages[2]!.content[1]] },
    ]);
    await thread.close();
    await store.close();
  });

  it("measures from the provider's usage given with the response: a context our count finds small compacts when the usage says it is full", async () => {
    const cwd = project();
    const run = async (usage: boolean) => {
      const store = await openSqliteStore({ file: databaseFile(), session: THREAD_ID, create: { cwd } });
      const thread = await openCompactionThread({ store, cwd });
      for (let turn = 0; turn < 4; turn++) {
        await thread.append({ role: "user", content: `Question ${turn}: how is service-${turn} doing?` });
        // Replies long enough that a summary of the older turns is smaller than they are (a compaction
        // that would not shrink the context is refused), short enough that our count stays far below the window.
        const reply: ModelMessage = { role: "assistant", content: [{ type: "text", text: `Service ${turn} is fine. ${chatter(turn)}` }] };
        // The provider counted the system prompt and tools too: 5,600 of the 6,000-token window.
        await thread.append([reply], usage && turn === 3 ? { usage: { inputTokens: 5_590, outputTokens: 10 } } : {});
      }
      const compactions = thread.compactions;
      await thread.close();
      await store.close();
      return compactions;
    };
    expect(await run(false)).toBe(0);
    expect(await run(true)).toBe(1);
  });

  it("sends a message too large for the window shrunk to head and tail, while the store keeps it whole", async () => {
    const cwd = project();
    const store = await openSqliteStore({ file: databaseFile(), session: THREAD_ID, create: { cwd } });
    const thread = await openCompactionThread({ store, cwd });
    const huge = Array.from({ length: 60 }, (_, turn) => chatter(turn)).join("\n");
    await thread.append({ role: "user", content: huge });
    const sent = await thread.messages();
    const text = textOf(sent.at(-1)!.content);
    expect(text.length).toBeLessThan(huge.length / 2);
    expect(text.startsWith(huge.slice(0, 200))).toBe(true);
    const stored = (await store.entries()).at(-1) as { message: { details: { aiSdk: { content: string } } } };
    expect(stored.message.details.aiSdk.content).toBe(huge);
    await thread.close();
    await store.close();
  });

  it("sends the newest turns that fit when the summarizer fails, and tells its on callback with a COMPACTION_CONTEXT_TRIMMED warning", async () => {
    const cwd = project();
    const failing = failingSummarizer();
    const events: ThreadEvent[] = [];
    const thread = await openCompactionThread({ store: new MemoryEntryStore(), cwd, plugins: [failing.plugin], on: (event) => events.push(event) });
    // Short turns: only leaving older ones out of what is sent makes room.
    const turns = Array.from({ length: 150 }, (_, turn): ModelMessage[] => [
      { role: "user", content: `Question ${turn}: which module handles retry case ${turn}? Name the file and the function.` },
      { role: "assistant", content: [{ type: "text", text: `module-${turn}.ts, function retry${turn}, with a backoff of ${turn} seconds and a tenth of jitter.` }] },
    ]).flat();
    await thread.append(turns);
    await thread.append({ role: "user", content: "And retry case 149 again?" });
    const sent = await thread.messages();
    expect(failing.calls()).toBe(1); // not again before the request: the context grew too little since
    expect(sent.length).toBeLessThan(turns.length);
    expect(sent.at(-1)).toEqual({ role: "user", content: "And retry case 149 again?" });
    expect(sent.at(-2)).toEqual(turns.at(-1));
    const trimmed = events.filter((event) => event.type === "warning" && event.code === ErrorCodes.CONTEXT_TRIMMED);
    expect(trimmed).toHaveLength(1);
    expect(trimmed[0]?.type === "warning" && trimmed[0].message).toMatch(/^The request leaves out \d+ older message\(s\) of the context's 301 /);
    await thread.close();
  });

  it("takes the reply's reserve from its options: maxOutputTokens sets it, and a reserveTokens the window cannot hold fails at open naming the option", async () => {
    const cwd = makeProject({ ".compactionrc.json": JSON.stringify({ preset: "safeguard", contextWindow: 8_000 }) });
    const thresholdWith = async (options: { maxOutputTokens?: number }) => {
      const events: ThreadEvent[] = [];
      const thread = await openCompactionThread({ store: new MemoryEntryStore(), cwd, ...options, on: (event) => events.push(event) });
      await thread.append(Array.from({ length: 8 }, (_, turn): ModelMessage[] => [
        { role: "user", content: `Question ${turn}: ${chatter(turn)}` },
        { role: "assistant", content: [{ type: "text", text: `Answer ${turn}: ${chatter(turn + 100)}` }] },
      ]).flat());
      await thread.close();
      return events.find((event) => event.type === "compaction-start")?.threshold;
    };
    // The window's own reserve (an eighth of 8,000), then the model's reply limit (a quarter of it).
    expect(await thresholdWith({})).toBe(Math.floor(0.8 * Math.min(8_000, (8_000 - 1_000) / 0.9)));
    expect(await thresholdWith({ maxOutputTokens: 2_000 })).toBe(Math.floor(0.8 * ((8_000 - 2_000) / 0.9)));
    await expect(openCompactionThread({ store: new MemoryEntryStore(), cwd, reserveTokens: 5_000 })).rejects.toMatchObject({
      code: ErrorCodes.INPUT_INVALID,
      path: "/reserveTokens",
      message: expect.stringContaining("the reserveTokens option of @compaction/ai-sdk thread"),
    });
  });

  it("refuses usage without an assistant message to record it on", async () => {
    const cwd = project();
    const store = await openSqliteStore({ file: databaseFile(), session: THREAD_ID, create: { cwd } });
    const thread = await openCompactionThread({ store, cwd });
    await expect(thread.append({ role: "user", content: "hi" }, { usage: { inputTokens: 10, outputTokens: 1 } })).rejects.toMatchObject({ code: ErrorCodes.INPUT_INVALID, message: expect.stringContaining("no assistant message") });
    expect(await store.entries()).toEqual([]);
    await thread.close();
    await store.close();
  });

  it("fails with the store's COMPACTION_TRANSCRIPT_NOT_FOUND for a thread id the database does not hold", async () => {
    const cwd = project();
    const file = databaseFile();
    const created = await openSqliteStore({ file, session: THREAD_ID, create: { cwd } });
    await created.close();
    const error = await openSqliteStore({ file, session: "no-such-thread" }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CompactionError);
    expect((error as CompactionError).code).toBe(ErrorCodes.TRANSCRIPT_NOT_FOUND);
    expect((error as CompactionError).message).toContain("no-such-thread");
  });

  it("fails with COMPACTION_TRANSCRIPT_INVALID naming the thread when its stored context holds a message no AI SDK thread or pi wrote", async () => {
    const cwd = project();
    const store = await openSqliteStore({ file: databaseFile(), session: THREAD_ID, create: { cwd } });
    await store.append([{ type: "message", message: { role: "user", content: "hello", timestamp: 1 } } as never]);
    await store.append([{ type: "message", message: { role: "user", content: "again", timestamp: 2, details: { aiSdk: { role: "robot", content: "beep" } } } } as never]);
    const error = await openCompactionThread({ store, cwd, contextWindow: 100_000 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CompactionError);
    expect((error as CompactionError).code).toBe(ErrorCodes.TRANSCRIPT_INVALID);
    expect((error as CompactionError).message).toContain(`message 2 of the context of ${store.location}`);
    expect((error as CompactionError).message).toContain('role string "robot" (expected user, assistant or tool)');
    await store.close();
  });

  it("refuses a system message and a store that is not one, writing nothing", async () => {
    const cwd = project();
    const store = await openSqliteStore({ file: databaseFile(), session: THREAD_ID, create: { cwd } });
    const thread = await openCompactionThread({ store, cwd, contextWindow: 100_000 });
    await expect(thread.append([{ role: "user", content: "hi" }, { role: "system", content: "Be brief." }])).rejects.toMatchObject({
      code: ErrorCodes.INPUT_INVALID,
      message: expect.stringContaining("append: message 2 is a system message"),
    });
    expect(await store.entries()).toEqual([]);
    await expect(openCompactionThread({ store: { location: "x" } as never, cwd })).rejects.toMatchObject({ code: ErrorCodes.INPUT_INVALID, message: expect.stringContaining("store must be a session store") });
    await thread.close();
    await store.close();
  });
});
