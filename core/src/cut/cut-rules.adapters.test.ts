/**
 * The cut rules on every built-in adapter: the same conversation written in pi, OpenAI and
 * Anthropic formats must give the same checked cuts.
 */
import { describe, expect, it } from "vitest";
import { FactsCache, type MessageAdapter } from "../messages/adapter.js";
import { createAnthropicAdapter } from "../messages/anthropic-adapter.js";
import { createOpenAIAdapter } from "../messages/openai-adapter.js";
import { createPiAdapter } from "../messages/pi-adapter.js";
import { checkCut } from "./check-cut.js";
import { findCutPoint } from "./find-cut-point.js";
import type { MessageView } from "./message-view.js";

// system, user, assistant(calls a,b), result a, result b, assistant, user(pinned), assistant(call c), result c, assistant
const pi = [
  { role: "custom", customType: "system-note", content: "policy", display: false, timestamp: 1, pinned: true },
  { role: "user", content: [{ type: "text", text: "fix the build" }], timestamp: 2 },
  {
    role: "assistant",
    content: [
      { type: "text", text: "running" },
      { type: "toolCall", id: "a", name: "bash", arguments: { command: "make" } },
      { type: "toolCall", id: "b", name: "read", arguments: { path: "Makefile" } },
    ],
    timestamp: 3,
  },
  { role: "toolResult", toolCallId: "a", toolName: "bash", content: [{ type: "text", text: "error" }], isError: true, timestamp: 4 },
  { role: "toolResult", toolCallId: "b", toolName: "read", content: [{ type: "text", text: "all:" }], isError: false, timestamp: 5 },
  { role: "assistant", content: [{ type: "text", text: "fixed" }], timestamp: 6 },
  { role: "user", content: [{ type: "text", text: "now test" }], timestamp: 7, pinned: true },
  { role: "assistant", content: [{ type: "toolCall", id: "c", name: "bash", arguments: { command: "make test" } }], timestamp: 8 },
  { role: "toolResult", toolCallId: "c", toolName: "bash", content: [{ type: "text", text: "ok" }], isError: false, timestamp: 9 },
  { role: "assistant", content: [{ type: "text", text: "tests pass" }], timestamp: 10 },
];

const openai = [
  { role: "system", content: "policy" },
  { role: "user", content: "fix the build" },
  {
    role: "assistant",
    content: "running",
    tool_calls: [
      { id: "a", type: "function", function: { name: "bash", arguments: '{"command":"make"}' } },
      { id: "b", type: "function", function: { name: "read", arguments: '{"path":"Makefile"}' } },
    ],
  },
  { role: "tool", tool_call_id: "a", content: "error" },
  { role: "tool", tool_call_id: "b", content: "all:" },
  { role: "assistant", content: "fixed" },
  { role: "user", content: "now test", pinned: true },
  { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "bash", arguments: '{"command":"make test"}' } }] },
  { role: "tool", tool_call_id: "c", content: "ok" },
  { role: "assistant", content: "tests pass" },
];

// Anthropic keeps the system prompt outside messages and puts both results of a step in one user message.
const anthropic = [
  { role: "user", content: "policy", pinned: true },
  { role: "user", content: "fix the build" },
  {
    role: "assistant",
    content: [
      { type: "text", text: "running" },
      { type: "tool_use", id: "a", name: "bash", input: { command: "make" } },
      { type: "tool_use", id: "b", name: "read", input: { path: "Makefile" } },
    ],
  },
  {
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: "a", content: "error", is_error: true },
      { type: "tool_result", tool_use_id: "b", content: "all:" },
    ],
  },
  { role: "assistant", content: [{ type: "text", text: "fixed" }] },
  { role: "user", content: "now test", pinned: true },
  { role: "assistant", content: [{ type: "tool_use", id: "c", name: "bash", input: { command: "make test" } }] },
  { role: "user", content: [{ type: "tool_result", tool_use_id: "c", content: "ok" }] },
  { role: "assistant", content: [{ type: "text", text: "tests pass" }] },
];

function viewOf<T>(adapter: MessageAdapter<T>, messages: readonly T[]): MessageView {
  const cache = new FactsCache(adapter);
  const facts = messages.map((m) => cache.of(m));
  return { facts, tokens: facts.map(() => 10) };
}

interface Row {
  readonly proposed: number;
  readonly kept: number;
  readonly preserved: readonly number[];
  readonly split: boolean;
}

const cases: ReadonlyArray<{ name: string; view: () => MessageView; rows: readonly Row[] }> = [
  {
    name: "pi",
    view: () => viewOf(createPiAdapter(), pi as never[]),
    rows: [
      { proposed: 3, kept: 2, preserved: [0], split: true },
      { proposed: 4, kept: 2, preserved: [0], split: true },
      { proposed: 5, kept: 5, preserved: [0], split: true },
      { proposed: 7, kept: 7, preserved: [0, 6], split: false },
      { proposed: 8, kept: 7, preserved: [0, 6], split: false },
    ],
  },
  {
    name: "openai",
    view: () => viewOf(createOpenAIAdapter(), openai as never[]),
    rows: [
      { proposed: 3, kept: 2, preserved: [0], split: true },
      { proposed: 4, kept: 2, preserved: [0], split: true },
      { proposed: 5, kept: 5, preserved: [0], split: true },
      { proposed: 7, kept: 7, preserved: [0, 6], split: false },
      { proposed: 8, kept: 7, preserved: [0, 6], split: false },
    ],
  },
  {
    name: "anthropic",
    view: () => viewOf(createAnthropicAdapter(), anthropic as never[]),
    rows: [
      { proposed: 3, kept: 2, preserved: [0], split: true },
      { proposed: 4, kept: 4, preserved: [0], split: true },
      { proposed: 6, kept: 6, preserved: [0, 5], split: false },
      { proposed: 7, kept: 6, preserved: [0, 5], split: false },
    ],
  },
];

describe.each(cases)("cut rules on the $name adapter", ({ view, rows }) => {
  it.each(rows)("a cut proposed at $proposed keeps from $kept, preserving $preserved", ({ proposed, kept, preserved, split }) => {
    const cut = checkCut(view(), { firstKeptIndex: proposed }, { plugin: "table", budget: Number.POSITIVE_INFINITY });
    expect(cut.firstKeptIndex).toBe(kept);
    expect(cut.preservedIndices).toEqual(preserved);
    expect(cut.isSplitTurn).toBe(split);
  });

  it("never chooses a tool result as the first kept message", () => {
    const v = view();
    for (let keep = 0; keep <= 100; keep += 5) {
      const { firstKeptIndex } = findCutPoint(v, { keepRecentTokens: keep });
      expect(v.facts[firstKeptIndex]?.kind ?? "end").not.toBe("toolResult");
    }
  });
});
