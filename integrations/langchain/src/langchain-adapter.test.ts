/**
 * The LangChain adapter on real @langchain/core message instances: the facts of each class, what
 * it builds (real BaseMessages of the same class), that the core's cut rules see its tool pairs, and
 * that the core's shrinking can drop thinking and cut tool-call arguments through it.
 */
import { createEstimateCounter, FactsCache, MessageTokenCounter, type MessageFacts, SHRINK_MARKER_PATTERN, shrinkToBudget, toolPairs } from "@compaction/core";
import {
  AIMessage,
  AIMessageChunk,
  BaseMessage,
  ChatMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
} from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { createLangChainAdapter, LANGCHAIN_SUMMARY_SOURCE } from "./langchain-adapter.js";

const adapter = createLangChainAdapter();

const pick = (facts: MessageFacts) => ({
  kind: facts.kind,
  text: facts.text,
  thinking: facts.thinking,
  toolCalls: facts.toolCalls,
  toolResultIds: facts.toolResultIds,
  isError: facts.isError,
  imageCount: facts.imageCount,
});

describe("createLangChainAdapter: facts", () => {
  const cases: Array<[string, BaseMessage, Partial<ReturnType<typeof pick>> & { toolName?: string; id?: string; usage?: number }]> = [
    ["a SystemMessage", new SystemMessage("be brief"), { kind: "system", text: "be brief" }],
    ["a HumanMessage with a string", new HumanMessage({ content: "fix the build", id: "h1" }), { kind: "user", text: "fix the build", id: "h1" }],
    [
      "a HumanMessage with text and image blocks",
      new HumanMessage({
        content: [
          { type: "text", text: "look" },
          { type: "image_url", image_url: { url: "data:image/png;base64,aGk=" } },
          { type: "image", source_type: "base64", mime_type: "image/png", data: "aGk=" },
        ],
      }),
      { kind: "user", text: "look", imageCount: 2 },
    ],
    [
      "an AIMessage with tool_calls and usage",
      new AIMessage({
        content: "running it",
        tool_calls: [{ id: "call_1", name: "bash", args: { command: "make" }, type: "tool_call" }],
        usage_metadata: { input_tokens: 100, output_tokens: 20, total_tokens: 120 },
      }),
      { kind: "assistant", text: "running it", toolCalls: [{ id: "call_1", name: "bash", arguments: { command: "make" } }], usage: 120 },
    ],
    [
      "an AIMessage with Anthropic blocks (thinking, text, tool_use) read through tool_calls",
      new AIMessage({
        content: [
          { type: "thinking", thinking: "plan first", signature: "sig" },
          { type: "text", text: "reading" },
          { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a.ts" } },
        ],
        tool_calls: [{ id: "toolu_1", name: "read", args: { path: "a.ts" }, type: "tool_call" }],
      }),
      { kind: "assistant", text: "reading", thinking: "plan first", toolCalls: [{ id: "toolu_1", name: "read", arguments: { path: "a.ts" } }] },
    ],
    [
      "an AIMessage with v1 reasoning blocks",
      new AIMessage({ content: [{ type: "reasoning", reasoning: "think" }, { type: "text", text: "done" }] }),
      { kind: "assistant", text: "done", thinking: "think" },
    ],
    ["an AIMessageChunk", new AIMessageChunk({ content: "partial" }), { kind: "assistant", text: "partial" }],
    [
      "a ToolMessage",
      new ToolMessage({ content: "exit 0", tool_call_id: "call_1", name: "bash" }),
      { kind: "toolResult", text: "exit 0", toolResultIds: ["call_1"], toolName: "bash", isError: false },
    ],
    [
      "a failed ToolMessage with text blocks",
      new ToolMessage({ content: [{ type: "text", text: "error:" }, { type: "text", text: "no such file" }], tool_call_id: "c2", status: "error" }),
      { kind: "toolResult", text: "error:\nno such file", toolResultIds: ["c2"], isError: true },
    ],
    [
      "a summary written by this adapter",
      createLangChainAdapter().createSummary("## Goal\nfix it"),
      { kind: "summary", text: "## Goal\nfix it" },
    ],
    [
      "a summary written by LangChain's summarizationMiddleware",
      new HumanMessage({ content: "Here is a summary of the conversation to date:\n\nearlier work", additional_kwargs: { lc_source: "summarization" } }),
      { kind: "summary", text: "Here is a summary of the conversation to date:\n\nearlier work" },
    ],
    ["a note", createLangChainAdapter().createNote("3 messages evicted"), { kind: "other", text: "3 messages evicted" }],
    ["a ChatMessage of another role", new ChatMessage({ content: "x", role: "critic" }), { kind: "other", text: "x" }],
  ];

  it.each(cases)("reads %s", (_label, message, expected) => {
    const facts = adapter.readFacts(message);
    const { toolName, id, usage, ...rest } = expected;
    expect(pick(facts)).toMatchObject(rest);
    if (toolName !== undefined) expect(facts.toolName).toBe(toolName);
    if (id !== undefined) expect(facts.id).toBe(id);
    if (usage !== undefined) expect(facts.usageContextTokens).toBe(usage);
  });

  it("reads pins from additional_kwargs.pinned, or from isPinned", () => {
    expect(adapter.readFacts(new HumanMessage({ content: "x", additional_kwargs: { pinned: true } })).pinned).toBe(true);
    expect(adapter.readFacts(new HumanMessage("x")).pinned).toBe(false);
    const byName = createLangChainAdapter({ isPinned: (m) => m.name === "keep" });
    expect(byName.readFacts(new HumanMessage({ content: "x", name: "keep" })).pinned).toBe(true);
  });

  it("throws COMPACTION_MESSAGE_UNREADABLE for what is not a message, saying what it found", () => {
    expect(() => adapter.readFacts(null as unknown as BaseMessage)).toThrow(expect.objectContaining({ code: "COMPACTION_MESSAGE_UNREADABLE", message: expect.stringContaining("found null") }));
    expect(() => adapter.readFacts("hi" as unknown as BaseMessage)).toThrow(/expected a BaseMessage .* found .*"hi"/);
  });
});

describe("createLangChainAdapter: what it builds", () => {
  it("builds summaries and notes as real HumanMessages the model sees as text", () => {
    const summary = adapter.createSummary("the summary");
    expect(summary).toBeInstanceOf(HumanMessage);
    expect(summary.additional_kwargs["lc_source"]).toBe(LANGCHAIN_SUMMARY_SOURCE);
    expect(summary.text).toContain("<summary>\nthe summary\n</summary>");
    expect(adapter.createNote("n")).toBeInstanceOf(HumanMessage);
  });

  it("replaces a tool output and keeps the class, id, call id, name, status and artifact", () => {
    const tool = new ToolMessage({ content: "x".repeat(5000), tool_call_id: "c1", name: "read", status: "error", artifact: { raw: 1 }, id: "t1" });
    const replaced = adapter.replaceToolOutput(tool, "[pruned]") as ToolMessage;
    expect(replaced).toBeInstanceOf(ToolMessage);
    expect(replaced).not.toBe(tool);
    expect({ content: replaced.content, tool_call_id: replaced.tool_call_id, name: replaced.name, status: replaced.status, artifact: replaced.artifact, id: replaced.id }).toEqual({
      content: "[pruned]",
      tool_call_id: "c1",
      name: "read",
      status: "error",
      artifact: { raw: 1 },
      id: "t1",
    });
    expect(tool.content).toBe("x".repeat(5000));
    expect(() => adapter.replaceToolOutput(new HumanMessage("x"), "y")).toThrow(expect.objectContaining({ code: "COMPACTION_INPUT_INVALID" }));
  });

  const samples: BaseMessage[] = [
    new SystemMessage("policy"),
    new HumanMessage({ content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "data:x" } }], id: "h" }),
    new AIMessage({
      content: [{ type: "thinking", thinking: "plan" }, { type: "text", text: "running" }],
      tool_calls: [{ id: "a", name: "bash", args: { command: "make" }, type: "tool_call" }],
      usage_metadata: { input_tokens: 5, output_tokens: 6, total_tokens: 11 },
      id: "ai-1",
    }),
    new AIMessageChunk({ content: "chunk text", tool_calls: [{ id: "b", name: "ls", args: {}, type: "tool_call" }] }),
    new ToolMessage({ content: "error: x", tool_call_id: "a", status: "error", name: "bash" }),
    new ToolMessage({ content: [{ type: "text", text: "one" }, { type: "text", text: "two" }], tool_call_id: "b" }),
    new HumanMessage({ content: "pinned", additional_kwargs: { pinned: true } }),
  ];

  it.each(samples.map((m, i) => [`${m.type} #${i}`, m] as const))("mapText rewrites only the text of %s, into the same class", (_label, message) => {
    const before = adapter.readFacts(message);
    const seen: string[] = [];
    const mapped = adapter.mapText(message, (text) => {
      seen.push(text);
      return text.toUpperCase();
    });
    expect(mapped.constructor).toBe(message.constructor);
    const after = adapter.readFacts(mapped);
    expect(after.text).toBe(before.text.toUpperCase());
    expect({ ...after, text: "" }).toEqual({ ...before, text: "" });
    expect(seen.join("\n")).toBe(before.text);
    expect(adapter.readFacts(message)).toEqual(before);
  });

  it("lets the core pair an AIMessage's tool calls with their ToolMessages", () => {
    const messages: BaseMessage[] = [
      new HumanMessage("do it"),
      new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "a", args: {}, type: "tool_call" }, { id: "c2", name: "b", args: {}, type: "tool_call" }] }),
      new ToolMessage({ content: "1", tool_call_id: "c1" }),
      new ToolMessage({ content: "2", tool_call_id: "c2" }),
      new AIMessage("done"),
    ];
    const facts = new FactsCache(adapter);
    const pairs = toolPairs(messages.map((m) => facts.of(m)));
    expect(pairs.callsOf[2]).toEqual([1]);
    expect(pairs.callsOf[3]).toEqual([1]);
    expect(pairs.resultsOf[1]).toEqual([2, 3]);
  });
});

/** `value` with every string in it (not the keys) wrapped in angle brackets: what the tests' rewrite does to arguments. */
function bracketed(value: unknown): unknown {
  if (typeof value === "string") return `<${value}>`;
  if (Array.isArray(value)) return value.map(bracketed);
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, bracketed(item)]));
  return value;
}

/** What a message holds, as plain data, to tell whether it was changed. */
const snapshot = (message: BaseMessage) => structuredClone(JSON.parse(JSON.stringify(message)) as unknown);

describe("createLangChainAdapter: what the core's shrinking may shorten beyond text", () => {
  const written = "export const value = compute(); // a line of the file being written\n";
  // ChatAnthropic's shape: thinking blocks, and the call both as a tool_use block and in tool_calls.
  const anthropic = () =>
    new AIMessage({
      id: "msg_01",
      content: [
        { type: "thinking", thinking: "the file needs a header", signature: "sig" },
        { type: "redacted_thinking", data: "EmwKAhgB" },
        { type: "text", text: "Writing it." },
        { type: "tool_use", id: "toolu_1", name: "write", input: { path: "src/a.ts", content: written } },
      ],
      tool_calls: [{ id: "toolu_1", name: "write", args: { path: "src/a.ts", content: written }, type: "tool_call" }],
      usage_metadata: { input_tokens: 100, output_tokens: 20, total_tokens: 120 },
      response_metadata: { model_provider: "anthropic", stop_reason: "tool_use" },
    });
  // ChatOpenAI's shape: the call in tool_calls and, as the API sent it, in additional_kwargs.
  const openai = () =>
    new AIMessage({
      content: "",
      tool_calls: [{ id: "call_1", name: "write", args: { path: "src/b.ts", content: written, mode: 420 }, type: "tool_call" }],
      additional_kwargs: {
        tool_calls: [{ id: "call_1", type: "function", function: { name: "write", arguments: JSON.stringify({ path: "src/b.ts", content: written, mode: 420 }) } }],
      },
    });
  // A v1 message (output_version "v1"): standard reasoning and tool_call blocks in its content.
  const v1 = () =>
    new AIMessage({
      content: [
        { type: "reasoning", reasoning: "plan the write" },
        { type: "text", text: "Writing." },
        { type: "tool_call", id: "call_2", name: "write", args: { path: "src/c.ts", content: written } },
      ],
      tool_calls: [{ id: "call_2", name: "write", args: { path: "src/c.ts", content: written }, type: "tool_call" }],
      response_metadata: { output_version: "v1" },
    });
  const chunk = () => new AIMessageChunk({ content: [{ type: "reasoning", reasoning: "streamed plan" }, { type: "text", text: "ok" }], id: "run-1" });
  const samples: Array<[string, () => BaseMessage]> = [
    ["an Anthropic AIMessage", anthropic],
    ["an OpenAI AIMessage", openai],
    ["a v1 AIMessage", v1],
    ["an AIMessageChunk", chunk],
    ["a ToolMessage", () => new ToolMessage({ content: "ok", tool_call_id: "call_1" })],
    ["a HumanMessage", () => new HumanMessage("write the files")],
  ];

  it.each(samples)("dropThinking leaves no thinking in %s and keeps every other fact and the class, the message unchanged", (_label, make) => {
    const message = make();
    const copy = snapshot(message);
    const before = adapter.readFacts(message);
    const dropped = adapter.dropThinking!(message);
    const after = adapter.readFacts(dropped);
    expect(after.thinking).toBe("");
    expect({ ...after, thinking: "" }).toEqual({ ...before, thinking: "" });
    expect(dropped.constructor).toBe(message.constructor);
    expect(snapshot(message)).toEqual(copy);
    if (before.thinking === "") expect(dropped).toBe(message);
  });

  it("dropThinking removes thinking, redacted thinking and reasoning blocks and nothing else", () => {
    const dropped = adapter.dropThinking!(anthropic()) as AIMessage;
    expect((dropped.content as Array<{ type: string }>).map((block) => block.type)).toEqual(["text", "tool_use"]);
    expect({ id: dropped.id, usage: dropped.usage_metadata, calls: dropped.tool_calls, stop: dropped.response_metadata["stop_reason"] }).toEqual({
      id: "msg_01",
      usage: { input_tokens: 100, output_tokens: 20, total_tokens: 120 },
      calls: anthropic().tool_calls,
      stop: "tool_use",
    });
    expect((adapter.dropThinking!(v1()) as AIMessage).contentBlocks.map((block) => block.type)).toEqual(["text", "tool_call"]);
    // Nothing else would be left: the message is kept as it is.
    const onlyThinking = new AIMessage({ content: [{ type: "thinking", thinking: "hm", signature: "s" }] });
    expect(adapter.dropThinking!(onlyThinking)).toBe(onlyThinking);
  });

  it.each(samples)("mapToolArguments rewrites only the argument strings of %s, the message unchanged", (_label, make) => {
    const message = make();
    const copy = snapshot(message);
    const before = adapter.readFacts(message);
    const mapped = adapter.mapToolArguments!(message, (text) => `<${text}>`);
    const after = adapter.readFacts(mapped);
    expect(snapshot(message)).toEqual(copy);
    expect(mapped.constructor).toBe(message.constructor);
    expect({ ...after, toolCalls: [] }).toEqual({ ...before, toolCalls: [] });
    expect(after.toolCalls.map((call) => [call.id, call.name])).toEqual(before.toolCalls.map((call) => [call.id, call.name]));
    after.toolCalls.forEach((call, k) => expect(call.arguments).toEqual(bracketed(before.toolCalls[k]?.arguments)));
    if (before.toolCalls.length === 0) expect(mapped).toBe(message);
  });

  it("mapToolArguments rewrites every copy of a call alike: tool_use input, v1 tool_call block, additional_kwargs' JSON string, and the serialised form", () => {
    const cut = (text: string) => (text.length > 40 ? "[cut]" : text);
    const fromAnthropic = adapter.mapToolArguments!(anthropic(), cut) as AIMessage;
    expect(fromAnthropic.tool_calls?.[0]?.args).toEqual({ path: "src/a.ts", content: "[cut]" });
    expect((fromAnthropic.content as Array<Record<string, unknown>>)[3]).toEqual({ type: "tool_use", id: "toolu_1", name: "write", input: { path: "src/a.ts", content: "[cut]" } });
    const fromOpenAI = adapter.mapToolArguments!(openai(), cut) as AIMessage;
    expect(fromOpenAI.tool_calls?.[0]?.args).toEqual({ path: "src/b.ts", content: "[cut]", mode: 420 });
    const raw = fromOpenAI.additional_kwargs.tool_calls?.[0];
    expect(JSON.parse(raw?.function.arguments ?? "")).toEqual({ path: "src/b.ts", content: "[cut]", mode: 420 });
    expect(raw).toMatchObject({ id: "call_1", type: "function", function: { name: "write" } });
    const fromV1 = adapter.mapToolArguments!(v1(), cut) as AIMessage;
    expect(fromV1.contentBlocks.filter((block) => block.type === "tool_call")).toEqual([{ type: "tool_call", id: "call_2", name: "write", args: { path: "src/c.ts", content: "[cut]" } }]);
    expect(fromV1.tool_calls).toHaveLength(1);
    // What a checkpointer stores (lc_kwargs) says the same as the message.
    for (const mapped of [fromAnthropic, fromOpenAI, fromV1]) expect(JSON.stringify(mapped)).not.toContain(written.trim());
  });

  it("lets shrinkToBudget drop old thinking and cut a large written file to head and tail, the call's arguments still whole objects", () => {
    const file = written.repeat(300);
    const thought = "I should check how the module is imported before writing it.\n".repeat(50);
    const messages: BaseMessage[] = [
      new HumanMessage("Write the two files."),
      new AIMessage({
        content: [
          { type: "thinking", thinking: thought, signature: "sig1" },
          { type: "tool_use", id: "toolu_1", name: "write", input: { path: "src/a.ts", content: file } },
        ],
        tool_calls: [{ id: "toolu_1", name: "write", args: { path: "src/a.ts", content: file }, type: "tool_call" }],
      }),
      new ToolMessage({ content: "ok", tool_call_id: "toolu_1", name: "write" }),
      new AIMessage({
        content: [
          { type: "thinking", thinking: "Now the second one.", signature: "sig2" },
          { type: "tool_use", id: "toolu_2", name: "write", input: { path: "src/b.ts", content: "export {}\n" } },
        ],
        tool_calls: [{ id: "toolu_2", name: "write", args: { path: "src/b.ts", content: "export {}\n" }, type: "tool_call" }],
      }),
      new ToolMessage({ content: "ok", tool_call_id: "toolu_2", name: "write" }),
    ];
    const tokens = new MessageTokenCounter(new FactsCache(adapter), createEstimateCounter());
    expect(messages.reduce((sum, m) => sum + tokens.count(m), 0)).toBeGreaterThan(5000);
    const result = shrinkToBudget(messages, tokens, { budget: 1500 });
    expect(result.fits).toBe(true);
    expect(result.shrunk.map((s) => [s.index, s.what])).toEqual([[1, "tool-call arguments"]]);
    const shrunk = result.messages[1] as AIMessage;
    expect(shrunk).toBeInstanceOf(AIMessage);
    expect(adapter.readFacts(shrunk).thinking).toBe("");
    const args = shrunk.tool_calls?.[0]?.args as { path: string; content: string };
    expect(args.path).toBe("src/a.ts");
    expect(args.content.length).toBeLessThan(file.length / 2);
    expect(args.content).toMatch(SHRINK_MARKER_PATTERN);
    expect((shrunk.content as Array<Record<string, unknown>>)[0]).toEqual({ type: "tool_use", id: "toolu_1", name: "write", input: args });
    // The thinking of the call being answered is what the provider checks: it stays.
    expect(result.messages[3]).toBe(messages[3]);
    expect(adapter.readFacts(messages[1] as BaseMessage).thinking).toBe(thought);
  });
});
