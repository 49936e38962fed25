/**
 * A 14-step tool loop on the real `ai` package and its own mock model (`MockLanguageModelV3` from
 * `ai/test`), for ai 6 and ai 7 alike: the user asks for an audit, the model reads one large file
 * per step, then answers. The mock records every prompt it is sent, measured in tokens the way a
 * provider sees it (system prompt, tool definitions and every message), and reports that figure
 * as its usage, as a provider does.
 */
import { createTiktokenCounter, type TokenCounter } from "@compaction/core";

/** The user's request; every prompt must still carry it. */
export const REQUEST = "Audit the repository for every call of the deprecated fetchLegacy() API and list the files that still use it.";
export const SYSTEM = "You are a careful code auditor. Use the read_file tool to read files.";
/** Tool calls before the final answer: 14 steps with a tool call, then one that answers. */
export const TOOL_STEPS = 14;
/** Tokens of each file the tool returns. */
export const RESULT_TOKENS = 3000;

let counter: TokenCounter | undefined;
function tokens(text: string): number {
  counter ??= createTiktokenCounter();
  return counter.count(text);
}

const files = new Map<number, string>();

/** A file's content: distinct lines (so nothing compresses away), about RESULT_TOKENS tokens. */
export function fileContent(index: number): string {
  let content = files.get(index);
  if (content === undefined) {
    content = writeFile(index);
    files.set(index, content);
  }
  return content;
}

function writeFile(index: number): string {
  const lines: string[] = [`// src/module-${index}.ts`];
  let line = 0;
  while (tokens(lines.join("\n")) < RESULT_TOKENS) {
    for (let i = 0; i < 20; i++, line++) {
      lines.push(`export function handler${index}_${line}(input: Request${line % 7}) { return transform${(line * 31 + index) % 97}(input, "${index}-${line}"); }`);
    }
  }
  return lines.join("\n");
}

/** One prompt as the model received it (`LanguageModelV3Prompt`, loosely typed for ai 6 and 7). */
export interface RecordedPrompt {
  readonly messages: readonly PromptMessage[];
  /** Tokens of everything sent: system, messages and tool definitions. */
  readonly tokens: number;
}

export interface PromptMessage {
  readonly role: string;
  readonly content: string | readonly Record<string, unknown>[];
}

function partText(part: Record<string, unknown>): string {
  switch (part["type"]) {
    case "text":
    case "reasoning":
      return String(part["text"] ?? "");
    case "tool-call":
      return `${String(part["toolName"])}${typeof part["input"] === "string" ? part["input"] : JSON.stringify(part["input"])}`;
    case "tool-result":
      return JSON.stringify(part["output"]);
    default:
      return JSON.stringify(part);
  }
}

/** The text a prompt message sends. */
export function promptText(message: PromptMessage): string {
  return typeof message.content === "string" ? message.content : message.content.map(partText).join("\n");
}

function promptTokens(prompt: readonly PromptMessage[], tools: unknown): number {
  return prompt.reduce((sum, message) => sum + tokens(promptText(message)), 0) + tokens(JSON.stringify(tools ?? []));
}

/** The parts of `ai` and `ai/test` the loop uses; the same in ai 6 and ai 7. */
export interface AiPackage {
  readonly ai: {
    generateText(options: any): PromiseLike<{ text: string; steps: readonly unknown[]; response: { messages: readonly unknown[] }; responseMessages?: readonly unknown[] }>;
    streamText(options: any): { consumeStream(): PromiseLike<void>; text: PromiseLike<string> };
    ToolLoopAgent: new (settings: any) => { generate(options: any): PromiseLike<{ text: string; steps: readonly unknown[] }> };
    tool(definition: any): unknown;
    jsonSchema(schema: any): unknown;
    stepCountIs(count: number): unknown;
  };
  readonly test: { MockLanguageModelV3: new (options: any) => unknown };
}

const USAGE = (input: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 20, text: 20, reasoning: 0 },
});

/** What the model does at each step: call read_file on the next module (`toolSteps` times), then answer. */
function reply(step: number, input: number, idPrefix: string, toolSteps: number) {
  if (step < toolSteps) {
    return {
      content: [{ type: "tool-call", toolCallId: `${idPrefix}${step}`, toolName: "read_file", input: JSON.stringify({ path: `src/module-${step}.ts` }) }],
      finishReason: { unified: "tool-calls", raw: "tool_calls" },
      usage: USAGE(input),
      warnings: [],
    };
  }
  return {
    content: [{ type: "text", text: "Files still calling fetchLegacy(): src/module-3.ts, src/module-9.ts." }],
    finishReason: { unified: "stop", raw: "stop" },
    usage: USAGE(input),
    warnings: [],
  };
}

/** What the model does before it answers step `step` (0-based): a model's answer takes time, and the test decides how much. */
export type BeforeReply = (step: number) => Promise<void>;

/** A mock model that records each prompt and answers by the script above (after `beforeReply`, for `generateText`). */
export function recordingModel(pkg: AiPackage, idPrefix = "call-", toolSteps = TOOL_STEPS, beforeReply?: BeforeReply): { model: unknown; prompts: RecordedPrompt[] } {
  const prompts: RecordedPrompt[] = [];
  const model = new pkg.test.MockLanguageModelV3({
    doGenerate: async (options: { prompt: PromptMessage[]; tools?: unknown }) => {
      const input = promptTokens(options.prompt, options.tools);
      prompts.push({ messages: options.prompt, tokens: input });
      await beforeReply?.(prompts.length - 1);
      return reply(prompts.length - 1, input, idPrefix, toolSteps);
    },
    doStream: async (options: { prompt: PromptMessage[]; tools?: unknown }) => {
      const input = promptTokens(options.prompt, options.tools);
      prompts.push({ messages: options.prompt, tokens: input });
      const answer = reply(prompts.length - 1, input, idPrefix, toolSteps);
      const parts: unknown[] = [{ type: "stream-start", warnings: [] }];
      for (const part of answer.content) {
        if ("text" in part) {
          parts.push({ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: part.text }, { type: "text-end", id: "t" });
        } else {
          parts.push(part);
        }
      }
      parts.push({ type: "finish", finishReason: answer.finishReason, usage: answer.usage });
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  });
  return { model, prompts };
}

export function readFileTool(pkg: AiPackage): unknown {
  return pkg.ai.tool({
    description: "Read a file of the repository.",
    inputSchema: pkg.ai.jsonSchema({ type: "object", properties: { path: { type: "string" } }, required: ["path"] }),
    execute: async ({ path }: { path: string }) => fileContent(Number(/module-(\d+)/.exec(path)?.[1] ?? 0)),
  });
}

export type Runner = "generateText" | "streamText" | "ToolLoopAgent";

/** Runs the loop with `prepareStep` (or none) through one of the three entry points, with `toolSteps` tool calls; returns the prompts. */
export async function runToolLoop(
  pkg: AiPackage,
  runner: Runner,
  prepareStep: unknown,
  toolSteps = TOOL_STEPS,
  beforeReply?: BeforeReply,
): Promise<{ prompts: RecordedPrompt[]; text: string; steps: number }> {
  const { model, prompts } = recordingModel(pkg, "call-", toolSteps, beforeReply);
  const settings = {
    model,
    system: SYSTEM,
    tools: { read_file: readFileTool(pkg) },
    stopWhen: pkg.ai.stepCountIs(toolSteps + 1),
    ...(prepareStep === undefined ? {} : { prepareStep }),
  };
  const messages = [{ role: "user", content: REQUEST }];
  if (runner === "generateText") {
    const result = await pkg.ai.generateText({ ...settings, messages });
    return { prompts, text: result.text, steps: result.steps.length };
  }
  if (runner === "streamText") {
    const result = pkg.ai.streamText({ ...settings, messages, onError: ({ error }: { error: unknown }) => { throw error; } });
    await result.consumeStream();
    return { prompts, text: await result.text, steps: prompts.length };
  }
  const { system, ...rest } = settings;
  const agent = new pkg.ai.ToolLoopAgent({ ...rest, instructions: system });
  const result = await agent.generate({ messages });
  return { prompts, text: result.text, steps: result.steps.length };
}

/** Tool results in `prompt` whose call is not before them in the same prompt. */
export function orphanedResults(prompt: RecordedPrompt): string[] {
  const called = new Set<string>();
  const orphans: string[] = [];
  for (const message of prompt.messages) {
    if (typeof message.content === "string") continue;
    for (const part of message.content) {
      if (part["type"] === "tool-call") called.add(String(part["toolCallId"]));
      if (part["type"] === "tool-result" && !called.has(String(part["toolCallId"]))) orphans.push(String(part["toolCallId"]));
    }
  }
  return orphans;
}

/** Whether the prompt's user-visible text carries the request (verbatim, or quoted in a summary). */
export function carriesRequest(prompt: RecordedPrompt): boolean {
  return prompt.messages.some((message) => message.role === "user" && promptText(message).includes(REQUEST));
}

/**
 * A second request in the same conversation (generateText): the history so far, the first run's
 * response messages and a new user message; the model reads 14 more files (ids `next-<n>`).
 */
export async function continueConversation(
  pkg: AiPackage,
  history: readonly unknown[],
  request: string,
  prepareStep: unknown,
): Promise<{ prompts: RecordedPrompt[]; messages: unknown[] }> {
  const { model, prompts } = recordingModel(pkg, "next-");
  const messages = [...history, { role: "user", content: request }];
  const result = await pkg.ai.generateText({
    model,
    system: SYSTEM,
    tools: { read_file: readFileTool(pkg) },
    stopWhen: pkg.ai.stepCountIs(TOOL_STEPS + 1),
    prepareStep,
    messages,
  });
  // Every step's response messages: ai 7's `responseMessages` (its `response.messages` is the final step's), ai 6's `response.messages`.
  return { prompts, messages: [...messages, ...(result.responseMessages ?? result.response.messages)] };
}
