import { describe, expect, it } from "vitest";
import { CompactionError, ErrorCodes } from "../errors.js";
import type { MessageKind } from "./adapter.js";
import {
  createOpenAIAdapter,
  OPENAI_NOTE_NAME,
  OPENAI_SUMMARY_NAME,
  type OpenAIChatMessage,
  type OpenAIToolMessage,
} from "./openai-adapter.js";

const adapter = createOpenAIAdapter();

const system: OpenAIChatMessage = { role: "system", content: "You are helpful." };
const developer: OpenAIChatMessage = { role: "developer", content: [{ type: "text", text: "Be brief." }] };
const userText: OpenAIChatMessage = { role: "user", content: "hello" };
const userParts: OpenAIChatMessage = {
  role: "user",
  content: [
    { type: "text", text: "what is" },
    { type: "image_url", image_url: { url: "data:image/png;base64,aGk=" } },
    { type: "image_url", image_url: { url: "https://example.com/a.png", detail: "low" } },
    { type: "text", text: "in these?" },
  ],
};
const assistantCalls: OpenAIChatMessage = {
  role: "assistant",
  content: null,
  tool_calls: [
    { id: "call_a", type: "function", function: { name: "read", arguments: '{"path":"a.ts"}' } },
    { id: "call_b", type: "function", function: { name: "bash", arguments: "{not json" } },
  ],
};
const assistantText: OpenAIChatMessage = { role: "assistant", content: "Done.", reasoning_content: "checked twice" };
const assistantRefusal: OpenAIChatMessage = {
  role: "assistant",
  content: [{ type: "refusal", refusal: "I can't help with that." }],
};
const toolMessage: OpenAIChatMessage = { role: "tool", tool_call_id: "call_a", content: "file body" };
const toolParts: OpenAIChatMessage = {
  role: "tool",
  tool_call_id: "call_b",
  content: [{ type: "text", text: "line 1" }, { type: "text", text: "line 2" }],
};
const legacyFunction: OpenAIChatMessage = { role: "function", name: "get_weather", content: "sunny" };

describe("openai adapter: kinds and text", () => {
  const cases: Array<[string, OpenAIChatMessage, MessageKind, string]> = [
    ["system", system, "system", "You are helpful."],
    ["developer with text parts", developer, "system", "Be brief."],
    ["user with string content", userText, "user", "hello"],
    ["user with text and image parts", userParts, "user", "what is\nin these?"],
    ["assistant with null content and tool calls", assistantCalls, "assistant", ""],
    ["assistant with string content", assistantText, "assistant", "Done."],
    ["assistant refusal part", assistantRefusal, "assistant", "I can't help with that."],
    ["tool with string content", toolMessage, "toolResult", "file body"],
    ["tool with text parts", toolParts, "toolResult", "line 1\nline 2"],
    ["legacy function result", legacyFunction, "toolResult", "sunny"],
    ["unknown role", { role: "critic", content: "x" } as unknown as OpenAIChatMessage, "other", ""],
  ];
  it.each(cases)("%s reads as kind and text", (_name, message, kind, text) => {
    const facts = adapter.readFacts(message);
    expect(facts.kind).toBe(kind);
    expect(facts.text).toBe(text);
  });
});

describe("openai adapter: tool links, reasoning, images, timestamps", () => {
  it("parses JSON arguments and keeps an unparsable arguments string as it is", () => {
    expect(adapter.readFacts(assistantCalls).toolCalls).toEqual([
      { id: "call_a", name: "read", arguments: { path: "a.ts" } },
      { id: "call_b", name: "bash", arguments: "{not json" },
    ]);
  });

  it("reads a custom tool call's name and raw input", () => {
    const message = {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_c", type: "custom", custom: { name: "grep", input: "TODO" } }],
    } as unknown as OpenAIChatMessage;
    expect(adapter.readFacts(message).toolCalls).toEqual([{ id: "call_c", name: "grep", arguments: "TODO" }]);
  });

  it("gives a tool message the id it answers", () => {
    expect(adapter.readFacts(toolMessage).toolResultIds).toEqual(["call_a"]);
  });

  it("gives a legacy function result no ids and the function's name", () => {
    const facts = adapter.readFacts(legacyFunction);
    expect(facts.toolResultIds).toEqual([]);
    expect(facts.toolName).toBe("get_weather");
  });

  it("does not report a legacy function_call (it has no id) as a tool call", () => {
    const message: OpenAIChatMessage = {
      role: "assistant",
      content: null,
      function_call: { name: "get_weather", arguments: "{}" },
    };
    expect(adapter.readFacts(message).toolCalls).toEqual([]);
  });

  it("reads reasoning_content as thinking", () => {
    expect(adapter.readFacts(assistantText).thinking).toBe("checked twice");
  });

  it("reports tool results as not failed (the format has no error flag)", () => {
    expect(adapter.readFacts(toolMessage).isError).toBe(false);
  });

  it("counts image_url parts", () => {
    expect(adapter.readFacts(userParts).imageCount).toBe(2);
  });

  it.each([
    ["a number", 1_760_000_000_000, 1_760_000_000_000],
    ["an ISO string", "2025-10-09T08:53:20.000Z", Date.parse("2025-10-09T08:53:20.000Z")],
    ["an unparsable string", "yesterday", undefined],
  ] as const)("reads an optional timestamp given as %s", (_name, timestamp, expected) => {
    expect(adapter.readFacts({ ...userText, timestamp } as OpenAIChatMessage).timestamp).toBe(expected);
  });

  it("has no timestamp when the message carries none", () => {
    expect(adapter.readFacts(userText).timestamp).toBeUndefined();
  });
});

describe("openai adapter: usage", () => {
  const cases: Array<[string, OpenAIChatMessage, number | undefined]> = [
    ["total_tokens when stored", { ...assistantText, usage: { prompt_tokens: 90, completion_tokens: 10, total_tokens: 100 } }, 100],
    ["prompt plus completion without a total", { ...assistantText, usage: { prompt_tokens: 90, completion_tokens: 10 } }, 100],
    [
      "prompt plus completion, their cached and reasoning parts not added again",
      { ...assistantText, usage: { prompt_tokens: 90, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 80 }, completion_tokens_details: { reasoning_tokens: 6 } } },
      100,
    ],
    ["nothing for zero usage", { ...assistantText, usage: { total_tokens: 0 } }, undefined],
    ["nothing without usage", assistantText, undefined],
  ];
  it.each(cases)("usageContextTokens is %s", (_name, message, expected) => {
    expect(adapter.readFacts(message).usageContextTokens).toBe(expected);
  });
});

describe("openai adapter: pinned", () => {
  it.each([
    ["pinned: true", { ...userText, pinned: true }, true],
    ["no flag", userText, false],
  ] as const)("default rule: %s", (_name, message, pinned) => {
    expect(adapter.readFacts(message).pinned).toBe(pinned);
  });

  it("uses a custom isPinned instead of the default rule", () => {
    const custom = createOpenAIAdapter({ isPinned: (m) => m.role === "system" });
    expect(custom.readFacts(system).pinned).toBe(true);
    expect(custom.readFacts({ ...userText, pinned: true }).pinned).toBe(false);
  });
});

describe("openai adapter: created messages", () => {
  it("createSummary builds a named user message that reads back as the summary text", () => {
    const summary = adapter.createSummary("what happened", { timestamp: 5 });
    expect(summary).toMatchObject({ role: "user", name: OPENAI_SUMMARY_NAME, timestamp: 5 });
    expect((summary as { content: string }).content).toContain("what happened");
    const facts = adapter.readFacts(summary);
    expect(facts.kind).toBe("summary");
    expect(facts.text).toBe("what happened");
  });

  it("createSummary adds no timestamp field when none is given", () => {
    expect("timestamp" in adapter.createSummary("s")).toBe(false);
  });

  it("reads a hand-written summary message without the wrapper as its whole content", () => {
    const facts = adapter.readFacts({ role: "user", name: OPENAI_SUMMARY_NAME, content: "plain summary" });
    expect(facts).toMatchObject({ kind: "summary", text: "plain summary" });
  });

  it("createNote builds a named user message that reads back as kind other with its text", () => {
    const note = adapter.createNote("12 messages were evicted");
    expect(note).toEqual({ role: "user", name: OPENAI_NOTE_NAME, content: "12 messages were evicted" });
    expect(adapter.readFacts(note)).toMatchObject({ kind: "other", text: "12 messages were evicted" });
  });

  it.each([
    ["tool", toolParts, ["call_b"]],
    ["function", legacyFunction, []],
  ] as const)("replaceToolOutput on a %s message keeps its ids and replaces the content", (_name, message, ids) => {
    const replaced = adapter.replaceToolOutput(message, "[pruned]");
    expect((replaced as OpenAIToolMessage).content).toBe("[pruned]");
    const facts = adapter.readFacts(replaced);
    expect(facts.toolResultIds).toEqual(ids);
    expect(facts.text).toBe("[pruned]");
    expect(facts.kind).toBe("toolResult");
  });

  it("replaceToolOutput refuses a message that is not a tool result", () => {
    expect(() => adapter.replaceToolOutput(assistantCalls, "x")).toThrow(
      expect.objectContaining({ code: ErrorCodes.INPUT_INVALID }),
    );
  });
});

describe("openai adapter: robustness", () => {
  it("does not mutate the message it reads", () => {
    const copy = structuredClone(assistantCalls);
    adapter.readFacts(assistantCalls);
    expect(assistantCalls).toEqual(copy);
  });

  it("throws MESSAGE_UNREADABLE for a non-object message", () => {
    expect(() => adapter.readFacts(undefined as unknown as OpenAIChatMessage)).toThrow(CompactionError);
    expect(() => adapter.readFacts(undefined as unknown as OpenAIChatMessage)).toThrow("found undefined");
  });

  it("skips tool calls without an id and reads malformed content as empty text", () => {
    const message = { role: "assistant", content: 12, tool_calls: [{ type: "function" }, "x"] } as unknown as OpenAIChatMessage;
    expect(adapter.readFacts(message)).toMatchObject({ kind: "assistant", text: "", toolCalls: [] });
  });
});
