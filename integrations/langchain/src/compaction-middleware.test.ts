/**
 * compactionMiddleware in a real LangChain v1 agent (`createAgent` from `langchain`) driven by
 * @langchain/core's own fake chat model (`fakeModel()`): a multi-step tool loop whose tool results
 * are large. Every model call is checked: never more than the window, no tool result without its
 * call, and the user's request present.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type CompactionPlugin, createTiktokenCounter, ErrorCodes, messageTokenText, type TokenCounter } from "@compaction/core";
import { failingSummarizer } from "@compaction/core/testing";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import fc from "fast-check";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { createAgent, tool } from "langchain";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { compactionMiddleware } from "./compaction-middleware.js";
import { createLangChainAdapter } from "./langchain-adapter.js";
import type { LangChainCompactionEvent } from "./options.js";

const TMP = fileURLToPath(new URL("../.tmp/", import.meta.url));
const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A project folder with a `.compactionrc.json`, inside the repo so presets resolve as installed. */
function project(config: object): string {
  mkdirSync(TMP, { recursive: true });
  const dir = mkdtempSync(join(TMP, "agent-"));
  made.push(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "user-project", private: true }));
  writeFileSync(join(dir, ".compactionrc.json"), JSON.stringify(config));
  return dir;
}

const REQUEST = "Audit every module under src/ and list the functions that never close their file handles.";
const SYSTEM = "You are a careful code auditor. Read files with read_file before answering.";
const STEPS = 14;

const readFile = tool(
  async ({ path }: { path: string }) =>
    // ~2,500 tokens of distinct text per result: the history outgrows a 12k window after a few steps.
    Array.from({ length: 180 }, (_, line) => `${path}:${line + 1}: export function handler${line}(fd) { return open(fd, ${line}); }`).join("\n"),
  { name: "read_file", description: "Read a source file.", schema: z.object({ path: z.string() }) },
);

/** A script of `steps` tool calls (two calls in parallel on every third step), then an answer. */
function scriptedModel(steps = STEPS) {
  const model = fakeModel();
  for (let step = 0; step < steps; step++) {
    const calls = [{ id: `call_${step}_a`, name: "read_file", args: { path: `src/module-${step}.ts` } }];
    if (step % 3 === 2) calls.push({ id: `call_${step}_b`, name: "read_file", args: { path: `src/extra-${step}.ts` } });
    model.respond(new AIMessage({ content: `Reading step ${step}.`, tool_calls: calls.map((c) => ({ ...c, type: "tool_call" as const })) }));
  }
  model.respond(new AIMessage("handler3 in src/module-3.ts never closes its handle."));
  return model;
}

let counter: TokenCounter;
beforeAll(() => {
  counter = createTiktokenCounter();
});
afterAll(() => counter.dispose());

const adapter = createLangChainAdapter();
/** The size of one model call as sent: every message, and the tool definitions. */
function sentTokens(messages: readonly BaseMessage[]): number {
  const tools = counter.count(JSON.stringify(convertToOpenAITool(readFile)));
  return messages.reduce((sum, message) => sum + counter.count(messageTokenText(adapter.readFacts(message))), tools);
}

async function runAgent(cwd: string, window: number, events: LangChainCompactionEvent[] = []) {
  const model = scriptedModel();
  const agent = createAgent({
    model,
    tools: [readFile],
    systemPrompt: SYSTEM,
    middleware: [compactionMiddleware({ cwd, contextWindow: window, agent: "auditor", on: (event) => events.push(event) })],
  });
  const state = await agent.invoke({ messages: [new HumanMessage(REQUEST)] }, { recursionLimit: 200 });
  return { model, state, events };
}

describe("compactionMiddleware in a createAgent tool loop", () => {
  const WINDOW = 12_000;

  it("never sends more than the window, never a tool result without its call, always the user's request", async () => {
    const cwd = project({ reserveTokens: 1000, agents: { auditor: { preset: "safeguard" } } });
    const { model, state, events } = await runAgent(cwd, WINDOW);

    expect(model.callCount).toBe(STEPS + 1);
    const uncompacted = 16 + STEPS * 2_500;
    expect(uncompacted).toBeGreaterThan(WINDOW * 2);
    let peak = 0;
    for (const [index, call] of model.calls.entries()) {
      const sent = call.messages as BaseMessage[];
      expect(sentTokens(sent), `call ${index}`).toBeLessThanOrEqual(WINDOW);
      // The system prompt goes first, as createAgent sends it.
      expect(sent[0]?.type).toBe("system");
      const issued = new Set<string>();
      for (const message of sent) {
        const facts = adapter.readFacts(message);
        for (const id of facts.toolResultIds) expect(issued.has(id), `call ${index}: result ${id} without its call`).toBe(true);
        for (const toolCall of facts.toolCalls) issued.add(toolCall.id);
      }
      const text = sent.map((message) => adapter.readFacts(message).text).join("\n");
      expect(text, `call ${index}`).toContain(REQUEST);
      peak = Math.max(peak, sentTokens(sent));
    }
    expect(peak).toBeLessThan(uncompacted / 2);

    // The state holds the compacted history (real BaseMessages, under the window), the answer last.
    expect(sentTokens(state.messages as BaseMessage[])).toBeLessThanOrEqual(WINDOW);
    expect(state.messages.at(-1)?.text).toContain("never closes its handle");
    const ends = events.filter((event) => event.type === "compaction-end");
    const compacted = ends.filter((event) => event.type === "compaction-end" && event.result.status === "compacted");
    expect(compacted.length).toBeGreaterThan(0);
    // Past the threshold (below what a call can hold, so calls stay prefix-stable) and within the
    // budget, the one turn leaves nothing to summarise: those runs change nothing and say why.
    for (const event of ends) {
      if (event.type !== "compaction-end" || event.result.status === "compacted") continue;
      expect(event.result.status).toBe("noop");
      expect(event.result.reason).toMatch(/Nothing new to compact|compacts no messages/);
    }
    // Fewer compactions than steps: each one leaves room for several more before the next.
    expect(compacted.length).toBeLessThan(STEPS);
    expect(events.filter((event) => event.type === "warning")).toEqual([]);
    // One turn: the request is never compacted, so the old outputs were shrunk, not summarised.
    expect(compacted.some((event) => event.type === "compaction-end" && event.result.messages.length < (state.messages as BaseMessage[]).length)).toBe(true);
  }, 60_000);

  it("gives the same messages for the same history (prompt caches stay warm)", async () => {
    const cwd = project({ reserveTokens: 1000, agents: { auditor: { preset: "safeguard" } } });
    // A history as the agent's state holds it (LangGraph gives every message an id).
    const history = (): BaseMessage[] => {
      const messages: BaseMessage[] = [new HumanMessage({ content: REQUEST, id: "m-request" })];
      for (let step = 0; step < STEPS; step++) {
        messages.push(new AIMessage({ id: `m-ai-${step}`, content: `Reading step ${step}.`, tool_calls: [{ id: `call_${step}`, name: "read_file", args: { path: `src/module-${step}.ts` }, type: "tool_call" }] }));
        messages.push(new ToolMessage({ id: `m-tool-${step}`, tool_call_id: `call_${step}`, content: `// module ${step}\n` + "export const value = compute(); // a long line of code\n".repeat(150) }));
      }
      return messages;
    };
    const compactOnce = async (messages: BaseMessage[]) => {
      const middleware = compactionMiddleware({ cwd, contextWindow: WINDOW, agent: "auditor" });
      const beforeModel = middleware.beforeModel as (state: unknown, runtime: unknown) => Promise<{ messages: BaseMessage[] } | undefined>;
      const update = await beforeModel({ messages }, {});
      expect(update).toBeDefined();
      return update!.messages.map((message) => `${message.type}:${message.id ?? ""}:${adapter.readFacts(message).text}`);
    };
    // Two middlewares (two processes, or a restart) and two copies of the same history.
    expect(await compactOnce(history())).toEqual(await compactOnce(history()));
  }, 60_000);

  it("does nothing while the history is under the threshold", async () => {
    const cwd = project({ agents: { auditor: { preset: "safeguard" } } });
    const { model, events } = await runAgent(cwd, 1_000_000);
    expect(events).toEqual([]);
    const last = model.calls.at(-1)?.messages as BaseMessage[];
    expect(last).toHaveLength(2 + STEPS * 2 + Math.floor(STEPS / 3));
  }, 60_000);

  it("rejects bad options with the option's path", () => {
    expect(() => compactionMiddleware({ contextWindow: -5 })).toThrow(expect.objectContaining({ code: "COMPACTION_INPUT_INVALID", path: "/contextWindow" }));
    expect(() => compactionMiddleware({ on: "log" as never })).toThrow(/on must be a function/);
  });
});

/** `turns` short question/answer pairs (too short to shorten to head and tail), ids as LangGraph gives them. */
function shortChat(turns: number, prefix = "t"): BaseMessage[] {
  return Array.from({ length: turns }, (_, turn) => [
    new HumanMessage({ id: `${prefix}-h-${turn}`, content: `Question ${turn}: which module handles retry case ${turn}? Name the file and the function.` }),
    new AIMessage({ id: `${prefix}-a-${turn}`, content: `module-${turn}.ts, function retry${turn}, with a backoff of ${turn} seconds and a tenth of jitter.` }),
  ]).flat();
}

describe("compactionMiddleware when compaction cannot free room", () => {
  it("with a summarizer that always fails, a 40-step tool loop after earlier turns calls it at most once per quarter of the window appended (not before every call), and every call fits the window less the reply's reserve and carries the request", async () => {
    const WINDOW = 64_000;
    const LOOP_STEPS = 40;
    const cwd = project({ reserveTokens: 1000, agents: { auditor: { preset: "safeguard" } } });
    const summarizer = failingSummarizer();
    const events: LangChainCompactionEvent[] = [];
    const model = scriptedModel(LOOP_STEPS);
    const agent = createAgent({
      model,
      tools: [readFile],
      systemPrompt: SYSTEM,
      middleware: [compactionMiddleware({ cwd, contextWindow: WINDOW, agent: "auditor", plugins: [summarizer.plugin], on: (event) => events.push(event) })],
    });
    // Earlier turns of the conversation: what a compaction would summarise.
    const earlier = shortChat(20);
    const state = await agent.invoke({ messages: [...earlier, new HumanMessage(REQUEST)] }, { recursionLimit: 200 });

    expect(model.callCount).toBe(LOOP_STEPS + 1);
    // Nothing was compacted: the state holds every message; what each call would carry without shaping is a prefix of it.
    const history = state.messages as BaseMessage[];
    const replies = history.flatMap((message, index) => (index > earlier.length && message.type === "ai" ? [index] : []));
    expect(replies).toHaveLength(LOOP_STEPS + 1);
    const carried = replies.map((index) => sentTokens(history.slice(0, index)));
    const appended = sentTokens(history) - sentTokens(history.slice(0, earlier.length + 1));
    const perQuarter = Math.floor(appended / (WINDOW / 4)) + 1;
    // Without the wait, a summary would be asked for before each of these calls.
    expect(carried.filter((tokens) => tokens > WINDOW * 0.8).length).toBeGreaterThan(perQuarter + 5);
    expect(summarizer.calls()).toBeGreaterThan(1);
    expect(summarizer.calls()).toBeLessThanOrEqual(perQuarter);
    const failures = events.filter((event) => event.type === "warning" && event.code === ErrorCodes.SUMMARIZER_FAILED);
    expect(failures.length).toBe(events.filter((event) => event.type === "compaction-start").length);
    expect(failures[0]?.type === "warning" && failures[0].message).toMatch(/waits until the call has grown by 16000 tokens/);
    for (const [index, call] of model.calls.entries()) {
      const sent = call.messages as BaseMessage[];
      expect({ index, over: sentTokens(sent) > WINDOW - 1000 }).toEqual({ index, over: false });
      expect(sent.map((message) => adapter.readFacts(message).text).join("\n"), `call ${index}`).toContain(REQUEST);
    }
  }, 120_000);

  it("a long history whose compaction fails is sent with its older turns left out, and says so with a COMPACTION_CONTEXT_TRIMMED warning; the newest question goes whole", async () => {
    const cwd = project({ reserveTokens: 500, agents: { auditor: { preset: "safeguard" } } });
    const summarizer = failingSummarizer();
    const events: LangChainCompactionEvent[] = [];
    const model = fakeModel();
    model.respond(new AIMessage("module-299.ts, retry299."));
    const agent = createAgent({
      model,
      tools: [readFile],
      middleware: [compactionMiddleware({ cwd, contextWindow: 8_000, agent: "auditor", plugins: [summarizer.plugin], on: (event) => events.push(event) })],
    });
    const history = shortChat(300);
    const question = new HumanMessage({ id: "q-new", content: "Which module handles retry case 299 again?" });
    await agent.invoke({ messages: [...history, question] });

    expect(summarizer.calls()).toBe(1);
    const sent = model.calls[0]?.messages as BaseMessage[];
    expect(sentTokens(sent)).toBeLessThanOrEqual(8_000 - 500);
    expect(sent.length).toBeLessThan(history.length);
    expect(sent.at(-1)?.id).toBe("q-new");
    expect(sent.map((message) => message.id)).toContain("t-h-299");
    const trimmed = events.filter((event) => event.type === "warning" && event.code === ErrorCodes.CONTEXT_TRIMMED);
    expect(trimmed).toHaveLength(1);
    expect(trimmed[0]?.type === "warning" && trimmed[0].message).toMatch(/^The request leaves out \d+ older message\(s\) of the context's 601 /);
  }, 60_000);

  it("keeps one loop per thread: the wait after one thread's failed compaction does not hold back another thread's", async () => {
    const cwd = project({ reserveTokens: 500, agents: { auditor: { preset: "safeguard" } } });
    // A summarizer whose model fails on thread A's messages and works on thread B's.
    const flaky: CompactionPlugin = {
      name: "flaky-summarizer",
      apply(compactor) {
        const real = compactor.summarizer;
        compactor.summarizer = {
          name: "flaky",
          summarize: async (request) => {
            if (request.messages.some((message) => message.text.startsWith("Question"))) throw new Error("model unavailable");
            return real.summarize(request);
          },
        };
      },
    };
    const events: LangChainCompactionEvent[] = [];
    const model = fakeModel();
    for (let i = 0; i < 2; i++) model.respond(new AIMessage("Noted."));
    const agent = createAgent({
      model,
      tools: [readFile],
      // At the threshold, in the foreground (background compaction has tests of its own).
      middleware: [compactionMiddleware({ cwd, contextWindow: 8_000, agent: "auditor", plugins: [flaky], background: false, on: (event) => events.push(event) })],
    });
    const threadB = shortChat(170, "b").map((message) =>
      message.type === "human" ? new HumanMessage({ id: message.id, content: `Topic B. ${message.text}` }) : message,
    );
    await agent.invoke({ messages: shortChat(170, "a") }, { configurable: { thread_id: "thread-a" } });
    await agent.invoke({ messages: threadB }, { configurable: { thread_id: "thread-b" } });
    const ends = events.filter((event) => event.type === "compaction-end" && event.scope === "state").map((event) => event.type === "compaction-end" && event.result.status);
    expect(ends).toEqual(["failed", "compacted"]);
  }, 60_000);
});

describe("compactionMiddleware and the project's code configuration (trusted)", () => {
  /** A project whose `.compactionrc.mjs` writes `marker` when it runs. */
  function codeProject(marker: string): string {
    mkdirSync(TMP, { recursive: true });
    const dir = mkdtempSync(join(TMP, "untrusted-"));
    made.push(dir);
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "cloned-repo", private: true }));
    writeFileSync(
      join(dir, ".compactionrc.mjs"),
      `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "ran");\nexport default { preset: "safeguard" };\n`,
    );
    return dir;
  }

  async function oneCall(cwd: string, trusted: boolean | undefined, events: LangChainCompactionEvent[]) {
    const model = fakeModel();
    model.respond(new AIMessage("Nothing to audit."));
    const agent = createAgent({
      model,
      tools: [readFile],
      middleware: [compactionMiddleware({ cwd, contextWindow: 100_000, ...(trusted === undefined ? {} : { trusted }), on: (event) => events.push(event) })],
    });
    await agent.invoke({ messages: [new HumanMessage(REQUEST)] });
  }

  it("does not run it with trusted: false, and says so once with COMPACTION_CONFIG_UNTRUSTED", async () => {
    const marker = join(TMP, `marker-${process.pid}-a.txt`);
    const events: LangChainCompactionEvent[] = [];
    await oneCall(codeProject(marker), false, events);
    const { existsSync } = await import("node:fs");
    expect(existsSync(marker)).toBe(false);
    expect(events.filter((event) => event.type === "warning" && event.code === "COMPACTION_CONFIG_UNTRUSTED")).toHaveLength(1);
  }, 60_000);

  it("runs it by default (the program is the user's own)", async () => {
    const marker = join(TMP, `marker-${process.pid}-b.txt`);
    made.push(marker);
    await oneCall(codeProject(marker), undefined, []);
    const { existsSync } = await import("node:fs");
    expect(existsSync(marker)).toBe(true);
  }, 60_000);

  it("rejects a trusted that is not true or false", () => {
    expect(() => compactionMiddleware({ trusted: "yes" as never })).toThrow(expect.objectContaining({ code: "COMPACTION_INPUT_INVALID", path: "/trusted" }));
  });
});

describe("compactionMiddleware in the provider's measure", () => {
  it("fits a call to the window less the reply's reserve as a provider counting 1.5x our count sees it", async () => {
    const cwd = project({ reserveTokens: 500, agents: { auditor: { preset: "safeguard" } } });
    // A history whose AI messages carry the usage figures of a provider counting 1.5x what we do.
    const messages: BaseMessage[] = [new HumanMessage({ content: REQUEST, id: "m-request" })];
    let counted = counter.count(messageTokenText(adapter.readFacts(messages[0]!)));
    for (let step = 0; step < 8; step++) {
      const input = Math.round(1.5 * counted);
      const ai = new AIMessage({
        id: `m-ai-${step}`,
        content: `Reading step ${step}.`,
        tool_calls: [{ id: `call_${step}`, name: "read_file", args: { path: `src/module-${step}.ts` }, type: "tool_call" }],
        usage_metadata: { input_tokens: input, output_tokens: 0, total_tokens: input },
      });
      const result = new ToolMessage({ id: `m-tool-${step}`, tool_call_id: `call_${step}`, content: `// module ${step}\n` + `export const value${step} = compute(${step}); // a long line of code\n`.repeat(60) });
      messages.push(ai, result);
      counted += counter.count(messageTokenText(adapter.readFacts(ai))) + counter.count(messageTokenText(adapter.readFacts(result)));
    }
    // A window our count of the call fits, and the provider's does not.
    const window = Math.round(counted * 1.25);
    const middleware = compactionMiddleware({ cwd, contextWindow: window, agent: "auditor" });
    const wrap = middleware.wrapModelCall as unknown as (request: { messages: BaseMessage[] }, handler: (request: { messages: BaseMessage[] }) => Promise<unknown>) => Promise<unknown>;
    let sent: BaseMessage[] | undefined;
    await wrap({ messages }, async (request) => {
      sent = request.messages;
      return new AIMessage("done");
    });
    expect(sent).toBeDefined();
    expect(sent).not.toEqual(messages);
    expect(sentTokens(sent!) - sentTokens([])).toBeLessThanOrEqual((window - 500) / 1.5 + 1);

    // The next call carries a history too short to learn from (as after a compaction): the ratio
    // learned before still applies.
    const short = [new HumanMessage({ content: REQUEST, id: "m-request" }), new AIMessage({ id: "m-ai", content: "Reading." }), new HumanMessage({ content: `go on ${"with the audit of every module. ".repeat(120)}`, id: "m-next" })];
    // A window whose room beside the reply's reserve (the config's 500) our count of the call fits, and the provider's does not.
    const shortWindow = Math.round((sentTokens(short) - sentTokens([])) * 1.25) + 500;
    const learner = compactionMiddleware({ cwd, contextWindow: shortWindow, agent: "auditor" }).wrapModelCall as unknown as typeof wrap;
    await learner({ messages }, async () => new AIMessage("done"));
    await learner({ messages: short }, async (request) => {
      sent = request.messages;
      return new AIMessage("done");
    });
    expect(sent).not.toEqual(short);
    expect(sentTokens(sent!) - sentTokens([])).toBeLessThanOrEqual((shortWindow - 500) / 1.5 + 1);
    const again = compactionMiddleware({ cwd, contextWindow: shortWindow, agent: "auditor" }).wrapModelCall as unknown as typeof wrap;
    await again({ messages: short }, async (request) => {
      sent = request.messages;
      return new AIMessage("done");
    });
    expect(sent).toEqual(short); // a middleware that never learned a ratio counts 1:1, and the call fits
  }, 60_000);

  it("fits generated calls to the window as a provider counting r times our count sees them, or refuses them with COMPACTION_CONTEXT_OVERFLOW", async () => {
    const projects = new Map<string, string>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("safeguard", "layered", "sliding-window"),
        fc.double({ min: 1, max: 2.5, noNaN: true }),
        fc.integer({ min: 3, max: 12 }),
        fc.integer({ min: 5, max: 120 }),
        fc.double({ min: 0.3, max: 1.3, noNaN: true }),
        fc.integer({ min: 1, max: 4 }),
        async (preset, r, steps, lines, share, turnSteps) => {
          let cwd = projects.get(preset);
          if (cwd === undefined) {
            cwd = project({ reserveTokens: 500, agents: { auditor: { preset } } });
            projects.set(preset, cwd);
          }
          // Turns of tool loops whose AI messages carry the usage figures of a provider counting r times what we do.
          const messages: BaseMessage[] = [];
          let counted = 0;
          let request = "";
          for (let step = 0; step < steps; step++) {
            if (step % turnSteps === 0) {
              request = `${REQUEST} Part ${step / turnSteps + 1}: the modules from m${step}.ts on.`;
              const human = new HumanMessage({ content: request, id: `g-human-${step}` });
              messages.push(human);
              counted += counter.count(messageTokenText(adapter.readFacts(human)));
            }
            const input = Math.round(r * counted);
            const reply = { content: `Reading step ${step}.`, tool_calls: [{ id: `g_${step}`, name: "read_file", args: { path: `src/m${step}.ts` }, type: "tool_call" as const }] };
            // The response's own tokens are in the figure too, as a provider reports them (input + output).
            const replyTokens = Math.round(r * counter.count(messageTokenText(adapter.readFacts(new AIMessage(reply)))));
            const ai = new AIMessage({
              id: `g-ai-${step}`,
              ...reply,
              usage_metadata: { input_tokens: input, output_tokens: replyTokens, total_tokens: input + replyTokens },
            });
            const output = Array.from({ length: lines + ((step * 37) % 50) }, (_, i) => `export const v${step}_${i} = open("f${i}"); // handle ${i} of step ${step}`).join("\n");
            const result = new ToolMessage({ id: `g-tool-${step}`, tool_call_id: `g_${step}`, content: output });
            messages.push(ai, result);
            counted += counter.count(messageTokenText(adapter.readFacts(ai))) + counter.count(messageTokenText(adapter.readFacts(result)));
          }
          const window = Math.max(2_000, Math.round(r * counted * share));
          const wrap = compactionMiddleware({ cwd, contextWindow: window, agent: "auditor" }).wrapModelCall as unknown as (
            request: { messages: BaseMessage[] },
            handler: (request: { messages: BaseMessage[] }) => Promise<unknown>,
          ) => Promise<unknown>;
          let sent: BaseMessage[] | undefined;
          try {
            await wrap({ messages }, async (request) => {
              sent = request.messages;
              return new AIMessage("done");
            });
          } catch (error) {
            // Only a call that cannot be brought under the window is refused, and nothing was sent.
            expect((error as { code?: string }).code, String(error)).toBe("COMPACTION_CONTEXT_OVERFLOW");
            expect(sent).toBeUndefined();
            return;
          }
          expect(sent).toBeDefined();
          // The ratio is learned from usage figures rounded to whole tokens: a few tokens' slack per thousand.
          expect((sentTokens(sent!) - sentTokens([])) * r).toBeLessThanOrEqual(window * 1.005 + r);
          // The request being worked on is sent (cut to head and tail at the most).
          expect(sent!.map((message) => adapter.readFacts(message).text).join("\n")).toContain(request.slice(0, 40));
        },
      ),
      { numRuns: 30 },
    );
  }, 240_000);

  it("compacts a call whose system prompt and tools leave less room than the config's reserve", async () => {
    // The config's reserve is the default 16,384; a 32,000-token window less a 20,000-token prompt leaves 12,000.
    const cwd = project({ agents: { auditor: { preset: "safeguard" } } });
    const messages: BaseMessage[] = [new HumanMessage({ content: REQUEST, id: "m-request" })];
    for (let step = 0; step < 8; step++) {
      messages.push(new AIMessage({ id: `m-ai-${step}`, content: `Reading step ${step}.`, tool_calls: [{ id: `call_${step}`, name: "read_file", args: { path: `src/module-${step}.ts` }, type: "tool_call" }] }));
      messages.push(new ToolMessage({ id: `m-tool-${step}`, tool_call_id: `call_${step}`, content: `// module ${step}\n` + `export const value${step} = compute(${step}); // a long line of code\n`.repeat(160) }));
    }
    const systemPrompt = `You are a careful code auditor. ${"Follow the house rules for every file you read. ".repeat(2_000)}`;
    const window = 32_000;
    const middleware = compactionMiddleware({ cwd, contextWindow: window, agent: "auditor" });
    const wrap = middleware.wrapModelCall as unknown as (request: { messages: BaseMessage[]; systemPrompt: string }, handler: (request: { messages: BaseMessage[] }) => Promise<unknown>) => Promise<unknown>;
    let sent: BaseMessage[] | undefined;
    await wrap({ messages, systemPrompt }, async (request) => {
      sent = request.messages;
      return new AIMessage("done");
    });
    expect(sentTokens(sent!) - sentTokens([]) + counter.count(systemPrompt)).toBeLessThanOrEqual(window);
  }, 60_000);
});
