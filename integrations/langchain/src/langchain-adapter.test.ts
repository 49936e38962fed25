/**
 * The LangChain adapter on real @langchain/core message instances: the facts of each class, what
 * it builds (real BaseMessages of the same class), and that the core's cut rules see its tool pairs.
 */
import { FactsCache, type MessageFacts, toolPairs } from "@compaction/core";
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
