/**
 * The thread examples of docs/hosts/ai-sdk.md (`<!-- example: ai-sdk-thread -->`) and
 * docs/hosts/langchain.md (`<!-- example: langchain-thread -->`) run as a user's module, as they
 * are written: each request of a thread is its own Node process (a worker) in a project folder,
 * with the framework's own mock model, and the thread lives in that folder's threads.sqlite. The
 * second request, on fresh objects, is answered by a `memory_search` call that finds the first's
 * message by its exact identifier.
 */
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { openSqliteStore } from "@compaction/transcript";
import { describe, expect, it } from "vitest";
import { tmpProject } from "./support/tmp-project.js";

const THREAD = "thread-docs-0194f3a2";
const FACT = "Order ORD-55120 ships from the Rotterdam warehouse on Thursday.";

function exampleBlock(page: string, name: string): string {
  const text = readFileSync(new URL(`../${page}`, import.meta.url), "utf8");
  const marker = `<!-- example: ${name} -->`;
  const at = text.indexOf(marker);
  if (at < 0) throw new Error(`${page} has no ${marker}`);
  const match = /```js\n([\s\S]*?)```/.exec(text.slice(at));
  if (!match?.[1]) throw new Error(`no js block after ${marker} in ${page}`);
  return match[1];
}

/** Runs `runner.mjs` in `cwd` as its own process (a worker) and returns what it printed as JSON. */
async function worker(cwd: string, ...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(process.execPath, ["--no-warnings", "runner.mjs", ...args], { cwd });
  return JSON.parse(stdout) as Record<string, unknown>;
}

async function storedEntries(cwd: string): Promise<{ type: string; message?: { role: string } }[]> {
  const store = await openSqliteStore({ file: join(cwd, "threads.sqlite"), session: THREAD });
  try {
    return (await store.entries()) as never;
  } finally {
    await store.close();
  }
}

const AI_SDK_RUNNER = `
import { MockLanguageModelV3 } from "ai/test";
import { reply } from "./example.mjs";

const [threadId, text, mode] = process.argv.slice(2);
const usage = { inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 10, text: 10, reasoning: 0 } };
const script = mode === "recall"
  ? [{ type: "tool-call", toolCallId: "recall-1", toolName: "memory_search", input: JSON.stringify({ query: "ORD-55120" }) }, { type: "text", text: "Thursday, from Rotterdam." }]
  : [{ type: "text", text: "Noted." }];
const prompts = [];
const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    prompts.push(prompt);
    const part = script[prompts.length - 1];
    const finish = part.type === "tool-call" ? { unified: "tool-calls", raw: "tool_calls" } : { unified: "stop", raw: "stop" };
    return { content: [part], finishReason: finish, usage, warnings: [] };
  },
});
const answer = await reply(threadId, text, model);
process.stdout.write(JSON.stringify({ answer, prompts }));
`;

const LANGCHAIN_RUNNER = `
import { AIMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { threadAgent } from "./example.mjs";

const [threadId, text, mode] = process.argv.slice(2);
const model = mode === "recall"
  ? fakeModel().respondWithTools([{ name: "memory_search", args: { query: "ORD-55120" }, id: "recall-1" }]).respond(new AIMessage("Thursday, from Rotterdam."))
  : fakeModel().respond(new AIMessage("Noted."));
const { agent, history } = threadAgent(model);
const state = await agent.invoke({ messages: [{ role: "user", content: text }] }, { configurable: { thread_id: threadId } });
await history.close();
const calls = model.calls.map((call) => call.messages.map((message) => ({ type: message.getType(), text: typeof message.content === "string" ? message.content : JSON.stringify(message.content) })));
process.stdout.write(JSON.stringify({ answer: state.messages.at(-1).content, calls }));
`;

describe("the thread examples of the host docs", () => {
  it("docs/hosts/ai-sdk.md: two requests of one thread in two processes; the second recalls the first by memory_search", async () => {
    const cwd = tmpProject({ "example.mjs": exampleBlock("docs/hosts/ai-sdk.md", "ai-sdk-thread"), "runner.mjs": AI_SDK_RUNNER });
    const first = await worker(cwd, THREAD, FACT, "note");
    expect(first["answer"]).toBe("Noted.");
    const second = await worker(cwd, THREAD, "When does ORD-55120 ship?", "recall");
    expect(second["answer"]).toBe("Thursday, from Rotterdam.");
    const prompts = second["prompts"] as { role: string; content: unknown }[][];
    // The second worker's first prompt is the thread so far, read from the file.
    expect(JSON.stringify(prompts[0])).toContain(FACT);
    const toolAnswer = prompts[1]!.find((message) => message.role === "tool");
    expect(JSON.stringify(toolAnswer?.content)).toContain("ships from the Rotterdam warehouse");
    const entries = await storedEntries(cwd);
    expect(entries.map((entry) => entry.message?.role)).toEqual(["user", "assistant", "user", "assistant", "toolResult", "assistant"]);
  });

  it("docs/hosts/langchain.md: two runs of one thread by two agents in two processes; the second recalls the first by memory_search", async () => {
    const cwd = tmpProject({ "example.mjs": exampleBlock("docs/hosts/langchain.md", "langchain-thread"), "runner.mjs": LANGCHAIN_RUNNER });
    const first = await worker(cwd, THREAD, FACT, "note");
    expect(first["answer"]).toBe("Noted.");
    const second = await worker(cwd, THREAD, "When does ORD-55120 ship?", "recall");
    expect(second["answer"]).toBe("Thursday, from Rotterdam.");
    const calls = second["calls"] as { type: string; text: string }[][];
    expect(calls[0]!.some((message) => message.text === FACT)).toBe(true);
    const toolAnswer = calls[1]!.find((message) => message.type === "tool");
    expect(toolAnswer?.text).toContain("ships from the Rotterdam warehouse");
    const entries = await storedEntries(cwd);
    expect(entries.map((entry) => entry.message?.role)).toEqual(["user", "assistant", "user", "assistant", "toolResult", "assistant"]);
  });
});
