/**
 * Background compaction between the requests of a chat route (`compactModelMessages`), with the
 * real `ai` package's `convertToModelMessages` and the real model summarizer (`summarizer-openai`
 * from `.compactionrc`) against a local server that holds each summary until the test lets it
 * answer: the summary is written between two requests, while the user reads and types.
 */
import { makeProject, removeProjects, startHeldModelServer, type HeldModelServer } from "@compaction/core/testing";
import { convertToModelMessages, type ModelMessage, type UIMessage } from "ai";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { compactModelMessages } from "./compact-model-messages.js";
import { ModelMessageCompaction } from "./model-message-compaction.js";
import type { AiSdkCompactionEvent, AiSdkCompactionOptions, BackgroundCompactionEvent, CompactionStartEvent } from "./options.js";

const CONTEXT_WINDOW = 16_000;

const servers: HeldModelServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});
afterAll(() => removeProjects());

async function heldModel(answerAfterMs: number): Promise<{ server: HeldModelServer; cwd: string }> {
  const server = await startHeldModelServer({ answerAfterMs });
  servers.push(server);
  const plugins = [["summarizer-openai", { model: "held-model", baseUrl: server.baseUrl, maxRetries: 0 }]];
  return { server, cwd: makeProject({ ".compactionrc.json": JSON.stringify({ preset: "safeguard", contextWindow: CONTEXT_WINDOW, plugins }) }) };
}

/** A chat as the UI sends it to the route: `turns` answered questions (about 1,200 tokens each), then the new question. */
function chat(turns: number): UIMessage[] {
  const messages: UIMessage[] = [];
  for (let turn = 0; turn <= turns; turn++) {
    messages.push({ id: `u${turn}`, role: "user", parts: [{ type: "text", text: `Question ${turn}: how does module-${turn}.ts handle retries? ${"Explain in detail. ".repeat(40)}` }] });
    if (turn < turns) messages.push({ id: `a${turn}`, role: "assistant", parts: [{ type: "text", text: `Module-${turn}.ts retries with backoff. ${`Line ${turn} of the explanation. `.repeat(120)}` }] });
  }
  return messages;
}

/** Resolves once `condition` holds (checked every 5 ms, for at most 5 s). */
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(condition()).toBe(true);
}

const backgroundOf = (events: readonly AiSdkCompactionEvent[], type: string) => events.filter((event): event is BackgroundCompactionEvent => event.type === "background" && event.background.type === type);

/** Each request's summaries asked for before and after it, and what it sent. */
interface Request {
  readonly turns: number;
  readonly asked: number;
  readonly askedAfter: number;
  readonly sent: ModelMessage[];
}

describe("compactModelMessages in the background", () => {
  it("with one options object for the route, a compaction prepared at one request is put in place at a later one, which asks for no summary and waits for none", async () => {
    const { server, cwd } = await heldModel(10_000);
    const events: AiSdkCompactionEvent[] = [];
    let readyNow: () => void = () => undefined;
    const options: AiSdkCompactionOptions = {
      cwd,
      on: (event) => {
        events.push(event);
        if (event.type === "background" && event.background.type === "ready") readyNow();
      },
    };
    const requests: Request[] = [];
    /** Preparations started by the end of each request. */
    const started: number[] = [];
    for (let turns = 1; turns <= 30 && !events.some((event) => event.type === "compaction-start" && event.prepared !== undefined); turns++) {
      const asked = server.requests.length;
      const sent = await compactModelMessages(await convertToModelMessages(chat(turns)), options);
      requests.push({ turns, asked, askedAfter: server.requests.length, sent });
      started.push(backgroundOf(events, "start").length);
      // Between two requests the user reads the answer and types: a summary asked for is written then.
      if (backgroundOf(events, "start").length > backgroundOf(events, "ready").length) {
        const ready = new Promise<void>((resolve) => (readyNow = resolve));
        server.release();
        await ready;
        server.hold();
      }
    }

    const applied = events.find((event): event is CompactionStartEvent => event.type === "compaction-start" && event.prepared !== undefined);
    expect(applied).toBeDefined();
    const last = requests.at(-1) as Request;
    // The request that put it in place asked for no summary, and none was in flight.
    expect({ asked: last.asked, askedAfter: last.askedAfter }).toEqual({ asked: 1, askedAfter: 1 });
    expect(backgroundOf(events, "waiting")).toEqual([]);
    // Prepared at an earlier request, below the threshold.
    expect(started.indexOf(1)).toBeGreaterThan(0);
    expect(started.indexOf(1)).toBeLessThan(requests.length - 1);
    expect(started.at(-1)).toBe(1);
    expect(applied?.prepared?.tokens).toBeLessThanOrEqual(applied?.threshold as number);
    // What it sent: the summary, then the newest turns verbatim, the new question last.
    const sent = last.sent;
    expect(JSON.stringify(sent[0])).toContain("held summary 1");
    expect(sent.length).toBeLessThan(2 * last.turns + 1);
    expect(sent.at(-1)).toEqual((await convertToModelMessages(chat(last.turns))).at(-1));
    // The first call with the object compacted nothing in the background: it had no later request to carry it to.
    expect(requests[0]?.askedAfter).toBe(0);
  });

  it("with a new options object per request it never prepares: the request past the threshold asks for the summary itself and waits for it", async () => {
    const { server, cwd } = await heldModel(50);
    const events: AiSdkCompactionEvent[] = [];
    let crossed: Request | undefined;
    for (let turns = 1; turns <= 30 && crossed === undefined; turns++) {
      const asked = server.requests.length;
      const sent = await compactModelMessages(await convertToModelMessages(chat(turns)), { cwd, on: (event) => events.push(event) });
      if (events.some((event) => event.type === "compaction-end")) crossed = { turns, asked, askedAfter: server.requests.length, sent };
    }
    expect(events.filter((event) => event.type === "background")).toEqual([]);
    expect(crossed).toMatchObject({ asked: 0, askedAfter: 1 });
    expect(JSON.stringify(crossed?.sent[0])).toContain("held summary 1");
  });

  it("dispose() cancels a compaction in flight, reported as dropped, and the summary request is given up", async () => {
    const { server, cwd } = await heldModel(10_000);
    const events: AiSdkCompactionEvent[] = [];
    const compaction = new ModelMessageCompaction({ cwd, on: (event) => events.push(event) });
    for (let turns = 1; turns <= 30 && backgroundOf(events, "start").length === 0; turns++) await compaction.compact(await convertToModelMessages(chat(turns)));
    expect(backgroundOf(events, "start")).toHaveLength(1);
    await until(() => server.pending === 1);
    await compaction.dispose();
    // The summarizer's request was aborted: the server holds nothing any more.
    await until(() => server.pending === 0);
    const dropped = backgroundOf(events, "dropped");
    expect(dropped).toHaveLength(1);
    expect(dropped[0]?.background).toMatchObject({ cost: { reason: "prepare", why: "the compaction memory was disposed", compactedMessages: 0 } });
    expect(events.filter((event) => event.type === "compaction-start")).toEqual([]);
  });
});
