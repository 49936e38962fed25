/**
 * Background compaction in compactionMiddleware, in a real LangChain v1 agent (`createAgent`)
 * driven by @langchain/core's own fake chat model, with the real model summarizer
 * (`summarizer-openai` from `.compactionrc`) against a local server that holds each summary until
 * the test lets it answer. The tool takes as long as the summary: it is written while the agent
 * goes on.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type HeldModelServer, startHeldModelServer } from "@compaction/core/testing";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { createAgent, tool } from "langchain";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { compactionMiddleware } from "./compaction-middleware.js";
import { createLangChainAdapter } from "./langchain-adapter.js";
import type { LangChainCompactionEvent, LangChainCompactionOptions } from "./options.js";

const TMP = fileURLToPath(new URL("../.tmp/", import.meta.url));
const made: string[] = [];
const servers: HeldModelServer[] = [];
afterEach(async () => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  for (const server of servers.splice(0)) await server.close();
});

const REQUEST = "Audit every module under src/ and list the functions that never close their file handles.";
const STEPS = 14;
/** Each step adds about 4,000 tokens: a tenth of the threshold, so some steps fall between the prepare mark and the threshold. */
const WINDOW = 48_000;
const adapter = createLangChainAdapter();

/** A project (inside the repo, so packages resolve as installed) whose safeguard preset summarises with a held model. */
async function heldProject(answerAfterMs: number): Promise<{ cwd: string; server: HeldModelServer }> {
  const server = await startHeldModelServer({ answerAfterMs });
  servers.push(server);
  mkdirSync(TMP, { recursive: true });
  const cwd = mkdtempSync(join(TMP, "agent-"));
  made.push(cwd);
  writeFileSync(join(cwd, "package.json"), JSON.stringify({ name: "user-project", private: true }));
  const plugins = [["summarizer-openai", { model: "held-model", baseUrl: server.baseUrl, maxRetries: 0 }]];
  writeFileSync(join(cwd, ".compactionrc.json"), JSON.stringify({ reserveTokens: 1000, agents: { auditor: { preset: "safeguard", plugins } } }));
  return { cwd, server };
}

/** What the run saw of the summarizer, per event. */
interface Seen {
  readonly events: LangChainCompactionEvent[];
  /** Summary requests made by then, at each compaction's start and end. */
  readonly asked: Array<{ readonly type: string; readonly prepared: boolean; readonly requests: number }>;
}

/**
 * A 14-step tool loop (about 2,500 tokens per result) in a 48,000-token window. `whileReading`
 * runs in each tool call: the step the agent is on while a summary is written.
 */
async function run(cwd: string, server: HeldModelServer, options: Partial<LangChainCompactionOptions>, whileReading: (seen: Seen) => Promise<void> = async () => undefined) {
  const seen: Seen = { events: [], asked: [] };
  const readFile = tool(
    async ({ path }: { path: string }) => {
      await whileReading(seen);
      return Array.from({ length: 180 }, (_, line) => `${path}:${line + 1}: export function handler${line}(fd) { return open(fd, ${line}); }`).join("\n");
    },
    { name: "read_file", description: "Read a source file.", schema: z.object({ path: z.string() }) },
  );
  const model = fakeModel();
  for (let step = 0; step < STEPS; step++) model.respond(new AIMessage({ content: `Reading step ${step}.`, tool_calls: [{ id: `call_${step}`, name: "read_file", args: { path: `src/module-${step}.ts` }, type: "tool_call" }] }));
  model.respond(new AIMessage("handler3 in src/module-3.ts never closes its handle."));
  const on = (event: LangChainCompactionEvent) => {
    seen.events.push(event);
    if (event.type === "compaction-start" || event.type === "compaction-end") {
      seen.asked.push({ type: event.type, prepared: event.type === "compaction-start" && event.prepared !== undefined, requests: server.requests.length });
    }
  };
  const agent = createAgent({ model, tools: [readFile], systemPrompt: "You are a careful code auditor.", middleware: [compactionMiddleware({ cwd, contextWindow: WINDOW, agent: "auditor", ...options, on })] });
  const state = await agent.invoke({ messages: [new HumanMessage(REQUEST)] }, { recursionLimit: 200 });
  return { model, state, seen };
}

const background = (events: readonly LangChainCompactionEvent[], type: string) => events.filter((event) => event.type === "background" && event.background.type === type);

describe("compactionMiddleware in the background", () => {
  it("prepares past the prepare mark while the tool loop goes on, and the model call at the threshold gets it without a summary asked for or waited on", async () => {
    const { cwd, server } = await heldProject(10_000);
    // The tool call after a preparation started takes as long as the summary.
    const { model, state, seen } = await run(cwd, server, {}, async ({ events }) => {
      if (background(events, "start").length <= background(events, "ready").length) return;
      server.release();
      for (let i = 0; i < 500 && background(events, "start").length > background(events, "ready").length; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      server.hold();
    });
    expect(model.callCount).toBe(STEPS + 1);
    const start = seen.asked.findIndex((entry) => entry.prepared);
    expect(start).toBeGreaterThanOrEqual(0);
    // Its start and end: no summary asked for between them, and none since the one prepared.
    const [begin, end] = [seen.asked[start], seen.asked[start + 1]];
    expect(end?.type).toBe("compaction-end");
    expect(end?.requests).toBe(begin?.requests);
    expect(begin?.requests).toBe(background(seen.events, "start").length);
    expect(background(seen.events, "waiting")).toEqual([]);
    const applied = seen.events.find((event) => event.type === "compaction-start" && event.prepared !== undefined);
    expect(applied?.type === "compaction-start" && applied.prepared?.appended).toBeGreaterThan(0);
    // A later call: the summary first (after the system prompt), the user's request still there, every call within the window.
    const texts = model.calls.map((call) => (call.messages as BaseMessage[]).map((message) => adapter.readFacts(message).text).join("\n"));
    expect(texts.some((text) => text.includes("held summary 1"))).toBe(true);
    for (const text of texts) expect(text).toContain(REQUEST);
    expect(state.messages.at(-1)?.text).toContain("never closes its handle");
  });

  it("with background: false the call at the threshold asks for the summary itself and waits for it", async () => {
    const { cwd, server } = await heldProject(50);
    const { seen } = await run(cwd, server, { background: false });
    expect(seen.events.filter((event) => event.type === "background")).toEqual([]);
    const [begin, end] = seen.asked;
    expect(begin).toMatchObject({ type: "compaction-start", prepared: false, requests: 0 });
    expect(end?.type).toBe("compaction-end");
    expect(end?.requests).toBeGreaterThan(0);
  });

  it("checks the option: background must be true, false or \"auto\"", () => {
    expect(() => compactionMiddleware({ background: "soon" as never })).toThrow(expect.objectContaining({ code: "COMPACTION_INPUT_INVALID", path: "/background" }));
  });
});
