import { describe, expect, it } from "vitest";
import { CompactionError, ErrorCodes } from "../errors.js";
import type { MessageKind } from "./adapter.js";
import { type AnthropicMessage, createAnthropicAdapter } from "./anthropic-adapter.js";

const adapter = createAnthropicAdapter();
const image = { type: "image", source: { type: "base64", media_type: "image/png", data: "aGk=" } } as const;

const userText: AnthropicMessage = { role: "user", content: "hello" };
const userBlocks: AnthropicMessage = {
  role: "user",
  content: [{ type: "text", text: "see" }, image, { type: "text", text: "this" }],
};
const assistantCalls: AnthropicMessage = {
  role: "assistant",
  id: "msg_01",
  content: [
    { type: "thinking", thinking: "plan first", signature: "sig" },
    { type: "redacted_thinking", data: "opaque" },
    { type: "text", text: "Reading both." },
    { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "/a.ts" } },
    { type: "tool_use", id: "toolu_2", name: "Bash", input: { command: "ls" } },
  ],
  usage: { input_tokens: 4, cache_creation_input_tokens: 100, cache_read_input_tokens: 2000, output_tokens: 50 },
};
const toolResults: AnthropicMessage = {
  role: "user",
  content: [
    { type: "tool_result", tool_use_id: "toolu_1", content: "file body" },
    { type: "tool_result", tool_use_id: "toolu_2", content: [{ type: "text", text: "a.ts" }, image], is_error: true },
    { type: "text", text: "also, hurry" },
  ],
};
const toolResultOk: AnthropicMessage = {
  role: "user",
  content: [{ type: "tool_result", tool_use_id: "toolu_3", content: "ok", is_error: false }],
};
const claudeCompactSummary: AnthropicMessage = {
  role: "user",
  content: "This session is being continued from a previous conversation.",
  isCompactSummary: true,
};

describe("anthropic adapter: kinds and text", () => {
  const cases: Array<[string, AnthropicMessage, MessageKind, string]> = [
    ["user with string content", userText, "user", "hello"],
    ["user with text and image blocks", userBlocks, "user", "see\nthis"],
    ["assistant (text only, no thinking or inputs)", assistantCalls, "assistant", "Reading both."],
    ["user with tool_result blocks (their content plus text blocks)", toolResults, "toolResult", "file body\na.ts\nalso, hurry"],
    ["Claude Code isCompactSummary message", claudeCompactSummary, "summary", "This session is being continued from a previous conversation."],
    ["unknown role", { role: "system", content: "x" } as unknown as AnthropicMessage, "other", ""],
  ];
  it.each(cases)("%s reads as kind and text", (_name, message, kind, text) => {
    const facts = adapter.readFacts(message);
    expect(facts.kind).toBe(kind);
    expect(facts.text).toBe(text);
  });
});

describe("anthropic adapter: tool links, thinking, images, ids", () => {
  it("lists tool_use blocks as tool calls with names and inputs", () => {
    expect(adapter.readFacts(assistantCalls).toolCalls).toEqual([
      { id: "toolu_1", name: "Read", arguments: { file_path: "/a.ts" } },
      { id: "toolu_2", name: "Bash", arguments: { command: "ls" } },
    ]);
  });

  it("answers every tool_use_id of a user message's tool_result blocks", () => {
    expect(adapter.readFacts(toolResults).toolResultIds).toEqual(["toolu_1", "toolu_2"]);
  });

  it.each([
    ["any tool_result is an error", toolResults, true],
    ["no tool_result is an error", toolResultOk, false],
  ] as const)("isError is %s -> %s", (_name, message, isError) => {
    expect(adapter.readFacts(message).isError).toBe(isError);
  });

  it("reads thinking blocks as thinking and skips redacted thinking", () => {
    expect(adapter.readFacts(assistantCalls).thinking).toBe("plan first");
  });

  it.each([
    ["user blocks", userBlocks, 1],
    ["images nested in tool_result content", toolResults, 1],
    ["string content", userText, 0],
  ] as const)("counts images in %s", (_name, message, count) => {
    expect(adapter.readFacts(message).imageCount).toBe(count);
  });

  it("reads the assistant message id", () => {
    expect(adapter.readFacts(assistantCalls).id).toBe("msg_01");
  });

  it("has no tool name for tool results (the format does not say)", () => {
    expect(adapter.readFacts(toolResults).toolName).toBeUndefined();
  });
});

describe("anthropic adapter: usage", () => {
  const cases: Array<[string, AnthropicMessage, number | undefined]> = [
    ["input + cache creation + cache read + output", assistantCalls, 2154],
    ["input + output when cache fields are null", { ...assistantCalls, usage: { input_tokens: 7, output_tokens: 3, cache_creation_input_tokens: null, cache_read_input_tokens: null } }, 10],
    ["nothing for zero usage", { ...assistantCalls, usage: { input_tokens: 0, output_tokens: 0 } }, undefined],
    ["nothing without usage", { role: "assistant", content: "hi" }, undefined],
    ["nothing on a user message", { ...userText, usage: { input_tokens: 5, output_tokens: 5 } }, undefined],
  ];
  it.each(cases)("usageContextTokens is %s", (_name, message, expected) => {
    expect(adapter.readFacts(message).usageContextTokens).toBe(expected);
  });
});

describe("anthropic adapter: pinned", () => {
  it.each([
    ["pinned: true", { ...userText, pinned: true }, true],
    ["no flag", userText, false],
  ] as const)("default rule: %s", (_name, message, pinned) => {
    expect(adapter.readFacts(message).pinned).toBe(pinned);
  });

  it("uses a custom isPinned instead of the default rule", () => {
    const custom = createAnthropicAdapter({ isPinned: (m) => typeof m.content === "string" });
    expect(custom.readFacts(userText).pinned).toBe(true);
    expect(custom.readFacts({ ...userBlocks, pinned: true }).pinned).toBe(false);
  });
});

describe("anthropic adapter: created messages", () => {
  it("createSummary builds a marked user message that reads back as the summary text", () => {
    const summary = adapter.createSummary("what happened", { timestamp: 9 });
    expect(summary).toMatchObject({ role: "user", compaction: "summary", timestamp: 9 });
    const facts = adapter.readFacts(summary);
    expect(facts.kind).toBe("summary");
    expect(facts.text).toBe("what happened");
  });

  it("createNote builds a marked user message that reads back as kind other with its text", () => {
    const note = adapter.createNote("12 messages were evicted");
    expect(note).toEqual({ role: "user", content: [{ type: "text", text: "12 messages were evicted" }], compaction: "note" });
    expect(adapter.readFacts(note)).toMatchObject({ kind: "other", text: "12 messages were evicted" });
  });

  it("replaceToolOutput replaces every tool_result's content and keeps ids, error flags and other blocks", () => {
    const replaced = adapter.replaceToolOutput(toolResults, "[pruned]");
    expect(replaced.content).toEqual([
      { type: "tool_result", tool_use_id: "toolu_1", content: "[pruned]" },
      { type: "tool_result", tool_use_id: "toolu_2", content: "[pruned]", is_error: true },
      { type: "text", text: "also, hurry" },
    ]);
    const facts = adapter.readFacts(replaced);
    expect(facts.toolResultIds).toEqual(["toolu_1", "toolu_2"]);
    expect(facts.isError).toBe(true);
    expect(facts.imageCount).toBe(0);
  });

  it("replaceToolOutput leaves the original message unchanged", () => {
    const original = structuredClone(toolResults);
    adapter.replaceToolOutput(toolResults, "x");
    expect(toolResults).toEqual(original);
  });

  it.each([
    ["an assistant message", assistantCalls],
    ["a user message without tool results", userBlocks],
  ])("replaceToolOutput refuses %s", (_name, message) => {
    expect(() => adapter.replaceToolOutput(message, "x")).toThrow(
      expect.objectContaining({ code: ErrorCodes.INPUT_INVALID }),
    );
  });
});

describe("anthropic adapter: robustness", () => {
  it("does not mutate the message it reads", () => {
    const copy = structuredClone(toolResults);
    adapter.readFacts(toolResults);
    expect(toolResults).toEqual(copy);
  });

  it("throws MESSAGE_UNREADABLE for a non-object message", () => {
    expect(() => adapter.readFacts(3 as unknown as AnthropicMessage)).toThrow(
      expect.objectContaining({ code: ErrorCodes.MESSAGE_UNREADABLE }),
    );
    expect(() => adapter.readFacts(3 as unknown as AnthropicMessage)).toThrow(CompactionError);
  });

  it("reads malformed blocks of a known role without throwing", () => {
    const message = { role: "user", content: [null, 5, { type: "text" }, { type: "tool_use" }] } as unknown as AnthropicMessage;
    expect(adapter.readFacts(message)).toMatchObject({ kind: "user", text: "", toolCalls: [] });
  });

  it("reads a user message with a tool_result block lacking its id as a tool result answering nothing", () => {
    const message = { role: "user", content: [{ type: "tool_result", content: "out" }] } as unknown as AnthropicMessage;
    expect(adapter.readFacts(message)).toMatchObject({ kind: "toolResult", text: "out", toolResultIds: [] });
  });
});
