/**
 * `mapText` on every built-in adapter: it rewrites the readable text and nothing else, so the
 * core can shorten any message without touching its tool calls, ids, thinking or images.
 */
import { describe, expect, it } from "vitest";
import type { MessageAdapter, MessageFacts } from "./adapter.js";
import { createAnthropicAdapter } from "./anthropic-adapter.js";
import { createOpenAIAdapter } from "./openai-adapter.js";
import { createPiAdapter } from "./pi-adapter.js";

const T = 1_760_000_000_000;
const anthropicImage = { type: "image", source: { type: "base64", media_type: "image/png", data: "aGk=" } };

const samples: Record<string, { adapter: MessageAdapter<any>; messages: unknown[] }> = {
  pi: {
    adapter: createPiAdapter(),
    messages: [
      { role: "user", content: "fix the build", timestamp: T, pinned: true },
      { role: "user", content: [{ type: "text", text: "see" }, { type: "image", data: "aGk=", mimeType: "image/png" }], timestamp: T },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "plan" },
          { type: "text", text: "running" },
          { type: "toolCall", id: "a", name: "bash", arguments: { command: "make" } },
        ],
        usage: { input: 1, output: 2, cacheRead: 3, cacheWrite: 4 },
        stopReason: "toolUse",
        timestamp: T,
      },
      { role: "toolResult", toolCallId: "a", toolName: "bash", content: [{ type: "text", text: "error: x" }], isError: true, timestamp: T },
      { role: "bashExecution", command: "ls", output: "a b c", cancelled: false, timestamp: T },
      { role: "custom", customType: "ext", content: "from an extension", display: true, timestamp: T },
    ],
  },
  openai: {
    adapter: createOpenAIAdapter(),
    messages: [
      { role: "system", content: "policy" },
      { role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "data:x" } }] },
      {
        role: "assistant",
        content: "running",
        reasoning_content: "plan",
        tool_calls: [{ id: "a", type: "function", function: { name: "bash", arguments: '{"command":"make"}' } }],
      },
      { role: "assistant", content: null, refusal: "no" },
      { role: "tool", tool_call_id: "a", content: "error: x", isError: true },
      { role: "tool", tool_call_id: "b", content: [{ type: "text", text: "one" }, { type: "text", text: "two" }] },
    ],
  },
  anthropic: {
    adapter: createAnthropicAdapter(),
    messages: [
      { role: "user", content: "fix the build" },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "plan", signature: "sig" },
          { type: "text", text: "running" },
          { type: "tool_use", id: "a", name: "bash", input: { command: "make" } },
          { type: "tool_use", id: "b", name: "read", input: { path: "x" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "a", content: "error: x", is_error: true },
          { type: "tool_result", tool_use_id: "b", content: [{ type: "text", text: "body" }, anthropicImage] },
          { type: "text", text: "also, hurry" },
        ],
      },
    ],
  },
};

function withoutText(facts: MessageFacts): Omit<MessageFacts, "text"> {
  const { text: _text, ...rest } = facts;
  return rest;
}

describe.each(Object.entries(samples))("mapText on the %s adapter", (_name, { adapter, messages }) => {
  it.each(messages.map((m, i) => [i, m] as const))("message %i: rewrites every text piece and keeps every other fact", (_i, message) => {
    const before = adapter.readFacts(message);
    const mapped = adapter.mapText(message, (text) => text.toUpperCase());
    const after = adapter.readFacts(mapped);
    // A shell command's text wraps its output (the piece) in the command line, which stays as it was.
    expect(after.text.toUpperCase()).toBe(before.text.toUpperCase());
    expect(after.text).not.toBe(before.text);
    expect(withoutText(after)).toEqual(withoutText(before));
  });

  it.each(messages.map((m, i) => [i, m] as const))("message %i: leaves the original unchanged", (_i, message) => {
    const copy = structuredClone(message);
    adapter.mapText(message, () => "");
    expect(message).toEqual(copy);
  });

  it.each(messages.map((m, i) => [i, m] as const))("message %i: calls rewrite once per piece, in order", (_i, message) => {
    const pieces: string[] = [];
    const same = adapter.mapText(message, (text) => (pieces.push(text), text));
    expect(adapter.readFacts(same)).toEqual(adapter.readFacts(message));
    const text = adapter.readFacts(message).text;
    let from = 0;
    for (const piece of pieces) {
      const at = text.indexOf(piece, from);
      expect(at).toBeGreaterThanOrEqual(0);
      from = at + piece.length;
    }
  });
});

describe.each(Object.entries(samples))("dropThinking and mapToolArguments on the %s adapter", (_name, { adapter, messages }) => {
  it.each(messages.map((m, i) => [i, m] as const))("message %i: dropThinking removes the thinking and keeps every other fact", (_i, message) => {
    const before = adapter.readFacts(message);
    const dropped = adapter.dropThinking?.(message) as unknown;
    const after = adapter.readFacts(dropped);
    expect(after.thinking).toBe("");
    expect({ ...after, thinking: "" }).toEqual({ ...before, thinking: "" });
    if (before.thinking === "") expect(dropped).toBe(message);
  });

  it.each(messages.map((m, i) => [i, m] as const))("message %i: mapToolArguments rewrites the argument strings only, the arguments stay valid", (_i, message) => {
    const copy = structuredClone(message);
    const before = adapter.readFacts(message);
    const after = adapter.readFacts(adapter.mapToolArguments?.(message, (text) => `<${text}>`) as unknown);
    expect(message).toEqual(copy);
    expect({ ...after, toolCalls: [] }).toEqual({ ...before, toolCalls: [] });
    expect(after.toolCalls.map((c) => [c.id, c.name])).toEqual(before.toolCalls.map((c) => [c.id, c.name]));
    after.toolCalls.forEach((call, k) => {
      const original = before.toolCalls[k]?.arguments as Record<string, string>;
      expect(call.arguments).toEqual(Object.fromEntries(Object.entries(original).map(([key, value]) => [key, `<${value}>`])));
    });
  });
});
