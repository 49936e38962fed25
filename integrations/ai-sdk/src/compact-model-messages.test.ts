import { type CompactionPlugin, createTiktokenCounter, ErrorCodes, SHRINK_MARKER_PATTERN } from "@compaction/core";
import { failingSummarizer, makeProject, removeProjects } from "@compaction/core/testing";
import { CLAUDE_FIXTURES, loadClaudeMessages } from "@compaction/fixtures";
import { convertToModelMessages, type ModelMessage, modelMessageSchema, streamText, type UIMessage } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, describe, expect, it } from "vitest";
import { createAiSdkAdapter } from "./ai-sdk-adapter.js";
import { compactModelMessages } from "./compact-model-messages.js";
import { ModelMessageCompaction } from "./model-message-compaction.js";
import type { AiSdkCompactionEvent } from "./options.js";
import { toModelMessages } from "./test-support/from-anthropic.js";

afterAll(() => removeProjects());

const counter = createTiktokenCounter();
const adapter = createAiSdkAdapter();
const counted = new WeakMap<ModelMessage, number>();
/** Our count of what the messages send (the summary's words included), memoised per message. */
function tokensOf(messages: readonly ModelMessage[]): number {
  return messages.reduce((sum, message) => {
    let tokens = counted.get(message);
    if (tokens === undefined) {
      const facts = adapter.readFacts(message);
      tokens = counter.count([facts.text, facts.thinking, ...facts.toolCalls.map((call) => call.name + JSON.stringify(call.arguments))].join("\n"));
      counted.set(message, tokens);
    }
    return sum + tokens;
  }, 0);
}

function project(config: object = {}): string {
  return makeProject({ ".compactionrc.json": JSON.stringify({ preset: "safeguard", ...config }) });
}

/** Tool results whose call is not before them. */
function orphans(messages: readonly ModelMessage[]): string[] {
  const calls = new Set<string>();
  const found: string[] = [];
  for (const message of messages) {
    if (typeof message.content === "string") continue;
    for (const part of message.content) {
      if (part.type === "tool-call") calls.add(part.toolCallId);
      if (part.type === "tool-result" && !calls.has(part.toolCallId)) found.push(part.toolCallId);
    }
  }
  return found;
}

/** A plugin whose summarizer's model is down. */
const failing = failingSummarizer().plugin;

/** A chat of `turns` question/answer pairs, as the UI keeps it. */
function chat(turns: number): UIMessage[] {
  const messages: UIMessage[] = [];
  for (let turn = 0; turn < turns; turn++) {
    messages.push({ id: `u${turn}`, role: "user", parts: [{ type: "text", text: `Question ${turn}: how does module-${turn}.ts handle retries? ${"Explain in detail. ".repeat(40)}` }] });
    messages.push({ id: `a${turn}`, role: "assistant", parts: [{ type: "text", text: `Module-${turn}.ts retries with backoff. ${`Line ${turn} of the explanation. `.repeat(120)}` }] });
  }
  return messages;
}

describe("compactModelMessages", () => {
  it("returns the messages as they are while they fit under the threshold", async () => {
    const messages = await convertToModelMessages(chat(2));
    const out = await compactModelMessages(messages, { cwd: project(), contextWindow: 100_000 });
    expect(out).toHaveLength(messages.length);
    expect(out.every((message, index) => message === messages[index])).toBe(true);
  });

  it("compacts a chat route's history (convertToModelMessages, then compact, then streamText) to fit the window, keeping the newest question", async () => {
    const messages = await convertToModelMessages(chat(40));
    const contextWindow = 16_000;
    expect(tokensOf(messages)).toBeGreaterThan(contextWindow);
    const events: AiSdkCompactionEvent[] = [];
    const out = await compactModelMessages(messages, { cwd: project(), contextWindow, on: (event) => events.push(event) });
    expect(tokensOf(out)).toBeLessThanOrEqual(contextWindow);
    expect(adapter.readFacts(out.at(-1) as ModelMessage).text).toContain("Module-39.ts retries");
    expect(out.some((message) => adapter.readFacts(message).kind === "summary")).toBe(true);
    expect(events.map((event) => event.type)).toEqual(["compaction-start", "compaction-end"]);

    const prompts: unknown[] = [];
    const model = new MockLanguageModelV3({
      doStream: async (options) => {
        prompts.push(options.prompt);
        return {
          stream: new ReadableStream({
            start(controller) {
              controller.enqueue({ type: "text-start", id: "t" });
              controller.enqueue({ type: "text-delta", id: "t", delta: "ok" });
              controller.enqueue({ type: "text-end", id: "t" });
              controller.enqueue({
                type: "finish",
                finishReason: { unified: "stop", raw: "stop" },
                usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
              });
              controller.close();
            },
          }),
        };
      },
    });
    const result = streamText({ model, messages: out });
    expect(await result.text).toBe("ok");
    expect(prompts).toHaveLength(1);
  });

  it("rejects something that is not an array of messages with COMPACTION_INPUT_INVALID", async () => {
    await expect(compactModelMessages("hello" as never, { cwd: project() })).rejects.toMatchObject({ code: ErrorCodes.INPUT_INVALID, path: "/messages" });
  });

  it("gives the same messages for the same history", async () => {
    const cwd = project();
    const first = await compactModelMessages(await convertToModelMessages(chat(40)), { cwd, contextWindow: 16_000 });
    const second = await compactModelMessages(await convertToModelMessages(chat(40)), { cwd, contextWindow: 16_000 });
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
  });

  it("leaves the history untouched and warns with the code when the summarizer fails", async () => {
    const messages = await convertToModelMessages(chat(13));
    const events: AiSdkCompactionEvent[] = [];
    // 13 turns are about 13k tokens: past the threshold of a 16k window (12,444 with its own
    // 2,000-token reserve), within its budget.
    const out = await compactModelMessages(messages, { cwd: project(), contextWindow: 16_000, plugins: [failing], on: (event) => events.push(event) });
    expect(out).toEqual(messages);
    expect(events.find((event) => event.type === "warning")).toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED });
  });

  it("when the summarizer fails on a history over the window, sends it shaped to the window (older messages shortened to head and tail with a marker, the newest question kept) instead of a request the provider rejects", async () => {
    const messages = await convertToModelMessages(chat(40));
    expect(tokensOf(messages)).toBeGreaterThan(16_000);
    const events: AiSdkCompactionEvent[] = [];
    const out = await compactModelMessages(messages, { cwd: project(), contextWindow: 16_000, plugins: [failing], on: (event) => events.push(event) });
    expect(tokensOf(out)).toBeLessThanOrEqual(16_000);
    expect(out).toContain(messages.at(-2)); // the newest question, whole
    expect(out.at(-1)?.role).toBe("assistant");
    expect(JSON.stringify(out)).toMatch(SHRINK_MARKER_PATTERN); // shortened, with the marker
    expect(events.find((event) => event.type === "warning")).toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED });
    // The same history gives the same request.
    const again = await compactModelMessages(structuredClone(messages), { cwd: project(), contextWindow: 16_000, plugins: [failing] });
    expect(JSON.stringify(again)).toBe(JSON.stringify(out));
  });

  it("a chat whose summarizer always fails, grown to 300 short questions in one compaction memory: a summary is asked for at most once per quarter of the window appended, each request fits the budget and holds the newest question whole, and a request that leaves more older turns out than the one before is a COMPACTION_CONTEXT_TRIMMED warning", async () => {
    // Turns too short to shorten to head and tail: only leaving older ones out makes room.
    const TURNS = 300;
    const history: ModelMessage[] = Array.from({ length: TURNS }, (_, turn): ModelMessage[] => [
      { role: "user", content: `Question ${turn}: which module handles retry case ${turn}? Name the file and the function.` },
      { role: "assistant", content: `module-${turn}.ts, function retry${turn}, with a backoff of ${turn} seconds and a tenth of jitter.` },
    ]).flat();
    const contextWindow = 8_000;
    const failing = failingSummarizer();
    const events: AiSdkCompactionEvent[] = [];
    const compaction = new ModelMessageCompaction({ cwd: project(), contextWindow, reserveTokens: 1_000, plugins: [failing.plugin], background: false, on: (event) => events.push(event) });
    let trimmedBefore = 0;
    let leftBefore = 0;
    for (let turns = 1; turns <= TURNS; turns++) {
      // What a chat route sends: the history up to the user's newest question.
      const messages = history.slice(0, turns * 2 - 1);
      const out = await compaction.compact(messages);
      expect(tokensOf(out)).toBeLessThanOrEqual(contextWindow - 1_000);
      expect(out.at(-1)).toBe(messages.at(-1));
      const trimmed = events.filter((event) => event.type === "warning" && event.code === ErrorCodes.CONTEXT_TRIMMED).length;
      const left = messages.length - out.length;
      // A warning exactly when this request leaves out more of the context than the one before it did.
      expect({ turns, warned: trimmed - trimmedBefore }).toEqual({ turns, warned: left > leftBefore ? 1 : 0 });
      trimmedBefore = trimmed;
      leftBefore = left;
    }
    await compaction.dispose();
    const appended = tokensOf(history) - tokensOf(history.slice(0, 2));
    expect(failing.calls()).toBeGreaterThan(0);
    expect(failing.calls()).toBeLessThanOrEqual(Math.floor(appended / (contextWindow / 4)) + 1);
    const trimmed = events.filter((event) => event.type === "warning" && event.code === ErrorCodes.CONTEXT_TRIMMED);
    expect(trimmed.length).toBeGreaterThan(0);
    expect(trimmed[0]?.type === "warning" && trimmed[0].message).toMatch(/^The request leaves out \d+ older message\(s\) of the context's \d+ to fit the budget/);
  });

  it("one compaction memory serving two chats: the wait after one chat's failed compaction does not hold back the other's", async () => {
    // A summarizer whose model fails on chat A's messages and works on chat B's.
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
    const chatA = await convertToModelMessages(chat(13));
    const chatB = await convertToModelMessages(chat(13).map((message) => ({ ...message, id: `b-${message.id}`, parts: message.parts.map((part) => (part.type === "text" ? { ...part, text: `Topic B. ${part.text}` } : part)) })));
    const events: AiSdkCompactionEvent[] = [];
    const compaction = new ModelMessageCompaction({ cwd: project(), contextWindow: 16_000, reserveTokens: 2_000, plugins: [flaky], background: false, on: (event) => events.push(event) });
    const statuses = () => events.filter((event) => event.type === "compaction-end").map((event) => event.type === "compaction-end" && event.result.status);
    await compaction.compact(chatA);
    expect(statuses()).toEqual(["failed"]);
    const outB = await compaction.compact(chatB);
    expect(statuses()).toEqual(["failed", "compacted"]);
    expect(outB.length).toBeLessThan(chatB.length);
    // Chat A goes on waiting for its own growth: one more short turn runs no compaction.
    await compaction.compact([...chatA, { role: "assistant", content: "Noted." }, { role: "user", content: "And module-13.ts?" }]);
    expect(statuses()).toEqual(["failed", "compacted"]);
    await compaction.dispose();
  });

  it("shrinks a tool result larger than the window to head and tail, keeping its call and the request", async () => {
    const huge: ModelMessage[] = [
      { role: "user", content: "Summarise this log." },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "read_log", input: {} }] },
      { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "read_log", output: { type: "text", value: "error at line 12 ".repeat(3000) } }] },
    ];
    const events: AiSdkCompactionEvent[] = [];
    const out = await compactModelMessages(huge, { cwd: project(), contextWindow: 4000, on: (event) => events.push(event) });
    expect(tokensOf(out)).toBeLessThanOrEqual(4000);
    expect(orphans(out)).toEqual([]);
    expect(out[0]).toBe(huge[0]);
    expect(events.filter((event) => event.type === "warning")).toEqual([]);
  });

  it("warns with COMPACTION_CONTEXT_OVERFLOW, and sends the messages as they were, when what must stay does not fit the window", async () => {
    const messages: ModelMessage[] = [
      { role: "system", content: "Follow every rule below. ".repeat(1500) },
      { role: "user", content: "Go." },
      { role: "assistant", content: "Done." },
    ];
    const events: AiSdkCompactionEvent[] = [];
    const out = await compactModelMessages(messages, { cwd: project(), contextWindow: 4000, on: (event) => events.push(event) });
    expect(out).toEqual(messages);
    expect(events.filter((event) => event.type === "warning").map((event) => event.type === "warning" && event.code)).toContain(ErrorCodes.CONTEXT_OVERFLOW);
  });

  it("takes the preset and window from .compactionrc, with the agent's section", async () => {
    const cwd = project({ contextWindow: 200_000, agents: { chat: { preset: "sliding-window", contextWindow: 16_000, reserveTokens: 4000 } } });
    const events: AiSdkCompactionEvent[] = [];
    await compactModelMessages(await convertToModelMessages(chat(40)), { cwd, agent: "chat", on: (event) => events.push(event) });
    const end = events.find((event) => event.type === "compaction-end");
    expect(end).toMatchObject({ result: { status: "compacted", event: { strategy: "sliding-window" } } });
  });
});

describe("compactModelMessages on real transcripts", () => {
  for (const file of CLAUDE_FIXTURES) {
    it(`${file}: fits a 32k window, adds no orphaned tool result, and every message is one the AI SDK accepts`, async () => {
      const messages = toModelMessages(loadClaudeMessages(file));
      const contextWindow = 32_000;
      const out = await compactModelMessages(messages, { cwd: project(), contextWindow });
      const before = new Set(orphans(messages));
      expect(orphans(out).filter((id) => !before.has(id))).toEqual([]);
      expect(tokensOf(out)).toBeLessThanOrEqual(contextWindow);
      expect(out.filter((message) => !modelMessageSchema.safeParse(message).success)).toEqual([]);
    });
  }

  it("a compaction memory extends its compaction as a real transcript grows, one message at a time", async () => {
    const messages = toModelMessages(loadClaudeMessages(CLAUDE_FIXTURES[0] as string));
    const compaction = new ModelMessageCompaction({ cwd: project(), contextWindow: 32_000 });
    let compactions = 0;
    let previousSummary: string | undefined;
    for (let end = 1; end <= messages.length; end++) {
      const out = await compaction.compact(messages.slice(0, end));
      const summary = out.map((message) => adapter.readFacts(message)).find((facts) => facts.kind === "summary")?.text;
      if (summary !== previousSummary) compactions++;
      previousSummary = summary;
      expect(tokensOf(out)).toBeLessThanOrEqual(32_000);
    }
    await compaction.dispose();
    expect(compactions).toBeGreaterThan(0);
    expect(compactions).toBeLessThan(messages.length / 10);
  });
});

describe("the project's code configuration (trusted)", () => {
  const request: ModelMessage[] = [{ role: "user", content: "What does the parser do with an empty file?" }];
  const codeConfig = (marker: string) =>
    `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "ran");\nexport default { preset: "safeguard", contextWindow: 32000 };\n`;

  it("is not run with trusted: false: one warning event with COMPACTION_CONFIG_UNTRUSTED, the messages come back", async () => {
    const marker = `${makeProject({})}/marker.txt`;
    const cwd = makeProject({ ".compactionrc.mjs": codeConfig(marker) });
    const events: AiSdkCompactionEvent[] = [];
    const out = await compactModelMessages(request, { cwd, trusted: false, contextWindow: 32_000, on: (event) => events.push(event) });
    expect(out).toEqual(request);
    const { existsSync } = await import("node:fs");
    expect(existsSync(marker)).toBe(false);
    const warnings = events.filter((event) => event.type === "warning" && event.code === ErrorCodes.CONFIG_UNTRUSTED);
    expect(warnings).toHaveLength(1);
  });

  it("is run by default (the program is the user's own)", async () => {
    const marker = `${makeProject({})}/marker.txt`;
    const cwd = makeProject({ ".compactionrc.mjs": codeConfig(marker) });
    await compactModelMessages(request, { cwd, contextWindow: 32_000 });
    const { existsSync } = await import("node:fs");
    expect(existsSync(marker)).toBe(true);
  });

  it("rejects a trusted that is not true or false", async () => {
    await expect(compactModelMessages(request, { trusted: "no" as unknown as boolean })).rejects.toMatchObject({ code: ErrorCodes.INPUT_INVALID });
  });
});

describe("what no message shows (system prompt, tools), with a usage figure among the messages", () => {
  it("takes it off the window once: the After is within the window less the reserve, and the budget is not smaller by it again", async () => {
    // A window small enough that the budget binds (safeguard's keepRecentTokens, 20,000, does not fit it).
    const WINDOW = 26_000;
    const RESERVE = 2_000;
    const UNSEEN = 8_000;
    const events: AiSdkCompactionEvent[] = [];
    const tracked = new ModelMessageCompaction({ cwd: project(), contextWindow: WINDOW, reserveTokens: RESERVE, on: (event) => events.push(event) });
    // A first prompt under the threshold, then its step's usage: the provider counted the prompt plus UNSEEN tokens no message shows.
    const first = await convertToModelMessages(chat(5));
    expect(await tracked.compact(first)).toHaveLength(first.length);
    const reply: ModelMessage = { role: "assistant", content: `Module-5.ts retries with backoff. ${"Line 5 of the explanation. ".repeat(1000)}` };
    const input = UNSEEN + tokensOf(first);
    const second = [...first, reply, { role: "user", content: `Question 6: and module-6.ts? ${"Explain in detail. ".repeat(450)}` } as ModelMessage];
    const out = await tracked.compact(second, { steps: [{ usage: { inputTokens: input, outputTokens: tokensOf([reply]) }, response: { messages: [reply] } }] });
    const end = events.find((event) => event.type === "compaction-end");
    expect(end?.type === "compaction-end" && end.result.status, JSON.stringify(events.filter((event) => event.type === "warning"))).toBe("compacted");
    if (end?.type !== "compaction-end") return;
    // Within the window less the reserve, as the run reports it ...
    expect(end.result.event?.tokensAfterCompaction).toBeLessThanOrEqual(WINDOW - RESERVE);
    // ... with a budget (safeguard names it when it lowers keepRecentTokens to fit) that, at the
    // run's ratio, is the window less the reserve: what no message shows is not taken off it again.
    const budget = Number(/in the budget of (\d+) tokens/.exec(end.result.warnings.join("\n"))?.[1]);
    const ratio = end.result.tokensBefore / tokensOf(second);
    expect(ratio).toBeGreaterThan(1.2);
    expect(budget * ratio).toBeGreaterThan(WINDOW - RESERVE - UNSEEN / 2);
    expect(budget * ratio).toBeLessThanOrEqual((WINDOW - RESERVE) * 1.01);
    expect(out.length).toBeLessThan(second.length);
  });
});
