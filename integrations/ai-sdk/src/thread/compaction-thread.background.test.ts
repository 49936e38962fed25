/**
 * The thread's `background` option, on the real `ai` package (`generateText` with its
 * `MockLanguageModelV3`) and the real model summarizer (`summarizer-openai` from `.compactionrc`)
 * against a local server that holds each summary until the test lets it answer.
 */
import { makeProject, removeProjects, startHeldModelServer, type HeldModelServer } from "@compaction/core/testing";
import type { ThreadEvent } from "@compaction/context-manager";
import { MemoryEntryStore } from "@compaction/transcript";
import { generateText } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type CompactionThread, openCompactionThread } from "./compaction-thread.js";

const CONTEXT_WINDOW = 6_000;

const servers: HeldModelServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});
afterAll(() => removeProjects());

async function heldModel(answerAfterMs: number): Promise<{ server: HeldModelServer; cwd: string }> {
  const server = await startHeldModelServer({ answerAfterMs });
  servers.push(server);
  const plugins = [["summarizer-openai", { model: "held-model", baseUrl: server.baseUrl, maxRetries: 0 }]];
  return { server, cwd: makeProject({ ".compactionrc.json": JSON.stringify({ preset: "safeguard", contextWindow: CONTEXT_WINDOW, reserveTokens: 1_000, plugins }) }) };
}

/** About 300 tokens of distinct text for turn `turn`. */
function chatter(turn: number): string {
  return Array.from({ length: 24 }, (_, line) => `Turn ${turn} note ${line}: the build of service-${turn}-${line} passed on runner ${(turn * 7 + line) % 13}.`).join(" ");
}

const USAGE = { inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 10, text: 10, reasoning: 0 } };
const model = new MockLanguageModelV3({
  doGenerate: async (options) => ({ content: [{ type: "text", text: `Noted: ${chatter(options.prompt.length)}` }], finishReason: { unified: "stop", raw: "stop" }, usage: USAGE, warnings: [] }),
});

/** One request of the thread: the user's message, the model's answer through generateText, appended. Returns the summaries asked for before and after it. */
async function turn(thread: CompactionThread, server: HeldModelServer, index: number): Promise<{ asked: number; askedAfter: number }> {
  const asked = server.requests.length;
  await thread.append({ role: "user", content: `Question ${index}: ${chatter(index)}` });
  const result = await generateText({ model, messages: await thread.messages() });
  await thread.append(result.response.messages);
  return { asked, askedAfter: server.requests.length };
}

const background = (events: readonly ThreadEvent[], type: string) => events.filter((event) => event.type === "background" && event.background.type === type);

describe("openCompactionThread's background option", () => {
  it("background: true prepares the compaction after one turn and writes it at a later one, which asks for no summary and waits for none", async () => {
    const { server, cwd } = await heldModel(10_000);
    const store = new MemoryEntryStore();
    const events: ThreadEvent[] = [];
    let readyNow: () => void = () => undefined;
    const thread = await openCompactionThread({
      store,
      cwd,
      background: true,
      on: (event) => {
        events.push(event);
        if (event.type === "background" && event.background.type === "ready") readyNow();
      },
    });
    const turns: Array<{ asked: number; askedAfter: number }> = [];
    /** Preparations started by the end of each turn. */
    const started: number[] = [];
    for (let index = 0; index < 30 && !events.some((event) => event.type === "compaction-end" && event.status === "compacted"); index++) {
      turns.push(await turn(thread, server, index));
      started.push(background(events, "start").length);
      // Between turns the user reads and types: the summary asked for is written then.
      if (background(events, "start").length > background(events, "ready").length) {
        const ready = new Promise<void>((resolve) => (readyNow = resolve));
        server.release();
        await ready;
        server.hold();
      }
    }
    const start = events.find((event) => event.type === "compaction-start");
    const end = events.find((event) => event.type === "compaction-end");
    expect(start?.type === "compaction-start" && start.prepared).toMatchObject({ appended: expect.any(Number) });
    expect(end).toMatchObject({ type: "compaction-end", status: "compacted", entryId: expect.any(String) });
    // The turn that wrote it asked for no summary; the one summary was asked for at an earlier turn.
    expect(turns.at(-1)).toEqual({ asked: 1, askedAfter: 1 });
    expect(started.indexOf(1)).toBeLessThan(turns.length - 1);
    expect(started.at(-1)).toBe(1);
    expect(background(events, "waiting")).toEqual([]);
    // The store holds the compaction entry with the model's summary, and every message appended.
    const entries = await store.entries();
    const compaction = entries.find((entry) => entry.type === "compaction") as { summary: string } | undefined;
    expect(compaction?.summary).toContain("held summary 1");
    expect(entries.filter((entry) => entry.type === "message")).toHaveLength(2 * turns.length);
    expect(JSON.stringify((await thread.messages())[0])).toContain("held summary 1");
    await thread.close();
  });

  it("by default it compacts at the threshold: the turn past it asks for the summary itself and waits for it", async () => {
    const { server, cwd } = await heldModel(50);
    const events: ThreadEvent[] = [];
    const thread = await openCompactionThread({ store: new MemoryEntryStore(), cwd, on: (event) => events.push(event) });
    let crossed: { asked: number; askedAfter: number } | undefined;
    for (let index = 0; index < 30 && crossed === undefined; index++) {
      const record = await turn(thread, server, index);
      if (events.some((event) => event.type === "compaction-end")) crossed = record;
    }
    expect(events.filter((event) => event.type === "background")).toEqual([]);
    expect(crossed).toEqual({ asked: 0, askedAfter: 1 });
    expect(events.find((event) => event.type === "compaction-end")).toMatchObject({ status: "compacted" });
    await thread.close();
  });

  it("close() cancels a compaction prepared in the background, reported as dropped, and writes nothing", async () => {
    const { server, cwd } = await heldModel(10_000);
    const store = new MemoryEntryStore();
    const events: ThreadEvent[] = [];
    const thread = await openCompactionThread({ store, cwd, background: true, on: (event) => events.push(event) });
    for (let index = 0; index < 30 && background(events, "start").length === 0; index++) await turn(thread, server, index);
    await thread.close();
    expect(background(events, "dropped")).toMatchObject([{ type: "background", background: { cost: { why: "the context manager was disposed" } } }]);
    expect((await store.entries()).some((entry) => entry.type === "compaction")).toBe(false);
  });
});
