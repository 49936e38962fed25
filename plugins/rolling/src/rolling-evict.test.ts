import { createEstimateCounter, ErrorCodes, FactsCache, MessageTokenCounter } from "@compaction/core";
import { builders, FORMATS, words } from "@compaction/core/testing";
import { describe, expect, it } from "vitest";
import { rollingEvict } from "./rolling-evict.js";
import { invariantProblems } from "./test-support/conversations.js";

const pi = builders("pi");
const openai = builders("openai");
const ten = () => 10;

/** `n` messages alternating user/assistant, no tools. */
function chat(n: number, b = pi): unknown[] {
  return Array.from({ length: n }, (_, i) => (i % 2 === 0 ? b.user(`u${i}`) : b.assistant(`a${i}`)));
}

const textOf = (m: unknown, b = pi) => b.adapter.readFacts(m).text;

describe("rollingEvict: the target", () => {
  it("evicts the oldest messages until the kept tokens are at or under the target", () => {
    const messages = chat(10);
    const result = rollingEvict({ messages, maxContextTokens: 100, targetUtilization: 0.5, minKeepMessages: 0, adapter: pi.adapter, countTokens: ten });
    expect(result.evicted).toEqual(messages.slice(0, 5));
    expect(result.kept).toEqual(messages.slice(5));
    expect(result).toMatchObject({ evictedCount: 5, evictedTokens: 50, keptTokens: 50, targetTokens: 50, targetMet: true, firstKeptIndex: 5 });
  });

  it("sets the target to floor(maxContextTokens * targetUtilization)", () => {
    const result = rollingEvict({ messages: chat(10), maxContextTokens: 99, targetUtilization: 0.5, minKeepMessages: 0, adapter: pi.adapter, countTokens: ten });
    expect(result.targetTokens).toBe(49);
    expect(result.keptTokens).toBe(40);
    expect(result.evictedCount).toBe(6);
  });

  it("evicts nothing when the messages already fit the target", () => {
    const messages = chat(6);
    const result = rollingEvict({ messages, maxContextTokens: 100, adapter: pi.adapter, countTokens: ten });
    expect(result).toMatchObject({ kept: messages, evicted: [], evictedCount: 0, evictedTokens: 0, keptTokens: 60, targetMet: true, firstKeptIndex: 0 });
    expect(result.firstEvictedTimestamp).toBeNull();
    expect(result.lastEvictedTimestamp).toBeNull();
  });

  it("returns empty lists for an empty conversation", () => {
    const result = rollingEvict({ messages: [], maxContextTokens: 100, adapter: pi.adapter });
    expect(result).toMatchObject({ kept: [], evicted: [], evictedCount: 0, keptTokens: 0, targetMet: true });
  });

  it("defaults to targetUtilization 0.8 and minKeepMessages 10", () => {
    // 20 x 10 tokens in a 100-token window: the target (80) would keep 8, the minimum keeps 10
    const result = rollingEvict({ messages: chat(20), maxContextTokens: 100, adapter: pi.adapter, countTokens: ten });
    expect(result.targetTokens).toBe(80);
    expect(result.kept).toHaveLength(10);
    expect(result.targetMet).toBe(false);
  });

  it("counts tokens with the chars/4 estimate when no countTokens is given", () => {
    const messages = [pi.user(words(40)), pi.assistant(words(30)), pi.user(words(20))];
    const counter = new MessageTokenCounter(new FactsCache(pi.adapter), createEstimateCounter());
    const result = rollingEvict({ messages, maxContextTokens: 1000, minKeepMessages: 0, adapter: pi.adapter });
    expect(result.keptTokens).toBe(counter.total(messages));
    expect(result.keptTokens).toBe(Math.ceil(words(40).length / 4) + Math.ceil(words(30).length / 4) + Math.ceil(words(20).length / 4));
  });

  it("counts noteTokens against the target when it evicts, and evicts nothing when evicting cannot pay for the note", () => {
    const withNote = rollingEvict({ messages: chat(10), maxContextTokens: 100, targetUtilization: 0.5, minKeepMessages: 0, adapter: pi.adapter, countTokens: ten, noteTokens: 15 });
    expect(withNote.keptTokens).toBe(30); // 30 + 15 <= 50; 40 + 15 is not
    const pointless = rollingEvict({ messages: chat(3), maxContextTokens: 40, targetUtilization: 0.5, minKeepMessages: 2, adapter: pi.adapter, countTokens: ten, noteTokens: 10 });
    expect(pointless.evictedCount).toBe(0);
    expect(pointless.targetMet).toBe(false);
  });
});

describe("rollingEvict: minKeepMessages", () => {
  it.each([
    // [minKeepMessages, kept]
    [0, 2],
    [3, 3],
    [7, 7],
    [10, 10],
    [25, 10],
  ])("with minKeepMessages %i of 10 messages and room for 2, keeps %i", (minKeepMessages, kept) => {
    const result = rollingEvict({ messages: chat(10), maxContextTokens: 20, targetUtilization: 1, minKeepMessages, adapter: pi.adapter, countTokens: ten });
    expect(result.kept).toHaveLength(kept);
    expect(result.targetMet).toBe(kept === 2);
  });

  it.each(FORMATS)("never evicts the newest user message, whatever minKeepMessages is (%s)", (format) => {
    const b = builders(format);
    // The newest turn: a request, then tool results that alone fill the target.
    const messages = [...chat(4, b), b.user("the request"), b.assistant("on it", [{ id: "c1" }, { id: "c2" }]), ...b.toolResults([{ id: "c1", text: "x" }, { id: "c2", text: "y" }])];
    for (const minKeepMessages of [0, 1, 2]) {
      const result = rollingEvict({ messages, maxContextTokens: 20, targetUtilization: 1, minKeepMessages, adapter: b.adapter, countTokens: ten });
      expect(result.kept.map((m) => textOf(m, b))).toContain("the request");
      expect(result.targetMet).toBe(false);
    }
  });

  it("counts the newest messages toward the minimum, with pinned older ones kept on top", () => {
    const messages = chat(10);
    messages[0] = pi.pin(messages[0]);
    const result = rollingEvict({ messages, maxContextTokens: 40, targetUtilization: 1, minKeepMessages: 3, adapter: pi.adapter, countTokens: ten });
    expect(result.kept).toEqual([messages[0], ...messages.slice(7)]);
    expect(result.targetMet).toBe(true);
  });
});

describe("rollingEvict: what is never evicted", () => {
  it("keeps the system prompt and pinned messages, in their original order ahead of the rest", () => {
    const messages = [openai.system("policy"), ...chat(4, openai), openai.pin(openai.user("remember")), ...chat(6, openai)];
    const result = rollingEvict({ messages, maxContextTokens: 50, targetUtilization: 1, minKeepMessages: 0, adapter: openai.adapter, countTokens: ten });
    expect(result.kept.map((m) => textOf(m, openai))).toEqual(["policy", "remember", "a3", "u4", "a5"]);
    expect(result.evictedCount).toBe(7);
    expect(result.keptTokens).toBe(50);
  });

  it("keeps the call and the other results of a pinned tool result", () => {
    const messages = [
      pi.user("u0"),
      pi.assistant("", [{ id: "x" }, { id: "y" }]),
      pi.pin(pi.toolResults([{ id: "x", text: "rx" }])[0]),
      ...pi.toolResults([{ id: "y", text: "ry" }]),
      ...chat(6),
    ];
    const result = rollingEvict({ messages, maxContextTokens: 60, targetUtilization: 1, minKeepMessages: 0, adapter: pi.adapter, countTokens: ten });
    expect(result.kept.slice(0, 3)).toEqual(messages.slice(1, 4));
    expect(result.evicted.map((m) => textOf(m))).toEqual(["u0", "u0", "a1", "u2"]);
    expect(result.targetMet).toBe(true);
  });

  it("evicts nothing when every message is pinned, and says the target is not met", () => {
    const messages = chat(6).map((m) => pi.pin(m));
    const result = rollingEvict({ messages, maxContextTokens: 30, minKeepMessages: 0, adapter: pi.adapter, countTokens: ten });
    expect(result).toMatchObject({ kept: messages, evictedCount: 0, targetMet: false });
  });
});

describe("rollingEvict: tool calls and their results", () => {
  // user, call(a,b,c), result a, result b, result c, assistant, then six chat messages
  const conversation = () => [
    pi.user("u0"),
    pi.assistant("", [{ id: "a" }, { id: "b" }, { id: "c" }]),
    ...pi.toolResults([{ id: "a", text: "ra" }, { id: "b", text: "rb" }, { id: "c", text: "rc" }]),
    pi.assistant("done"),
    ...chat(6),
  ];

  it.each([
    // [target, firstKeptIndex]: a cut inside 1..4 would split the call from its results
    [120, 0],
    [110, 1],
    [100, 5],
    [70, 5],
    [60, 6],
  ])("with a target of %i tokens keeps from message %i", (target, firstKeptIndex) => {
    const result = rollingEvict({ messages: conversation(), maxContextTokens: target, targetUtilization: 1, minKeepMessages: 0, adapter: pi.adapter, countTokens: ten });
    expect(result.firstKeptIndex).toBe(firstKeptIndex);
  });

  it("keeps the call with all its results when the minimum forbids evicting them together", () => {
    const messages = conversation();
    const result = rollingEvict({ messages, maxContextTokens: 30, targetUtilization: 1, minKeepMessages: 9, adapter: pi.adapter, countTokens: ten });
    expect(result.firstKeptIndex).toBe(1);
    expect(result.kept).toEqual(messages.slice(1));
    expect(result.targetMet).toBe(false);
  });

  it("keeps an unanswered call like any message", () => {
    const messages = [pi.user("u0"), pi.assistant("", [{ id: "lost" }]), ...chat(4)];
    const result = rollingEvict({ messages, maxContextTokens: 40, targetUtilization: 1, minKeepMessages: 0, adapter: pi.adapter, countTokens: ten });
    expect(result.firstKeptIndex).toBe(2);
  });
});

describe("rollingEvict: timestamps", () => {
  const at = (m: unknown, ms: number | undefined) => {
    const { timestamp: _t, ...rest } = m as Record<string, unknown>;
    return ms === undefined ? rest : { ...rest, timestamp: ms };
  };

  it("reports the first and last evicted timestamps as ISO strings", () => {
    const messages = chat(6).map((m, i) => at(m, Date.UTC(2026, 0, 2, 10, i)));
    const result = rollingEvict({ messages, maxContextTokens: 30, targetUtilization: 1, minKeepMessages: 0, adapter: pi.adapter, countTokens: ten });
    expect(result.firstEvictedTimestamp).toBe("2026-01-02T10:00:00.000Z");
    expect(result.lastEvictedTimestamp).toBe("2026-01-02T10:02:00.000Z");
  });

  it("skips evicted messages without a timestamp, and reports null when none has one", () => {
    const stamps = [undefined, Date.UTC(2026, 0, 2), Date.UTC(2026, 0, 3), undefined, undefined, undefined];
    const messages = chat(6).map((m, i) => at(m, stamps[i]));
    const result = rollingEvict({ messages, maxContextTokens: 20, targetUtilization: 1, minKeepMessages: 0, adapter: pi.adapter, countTokens: ten });
    expect(result.firstEvictedTimestamp).toBe("2026-01-02T00:00:00.000Z");
    expect(result.lastEvictedTimestamp).toBe("2026-01-03T00:00:00.000Z");
    const none = rollingEvict({ messages: chat(6, openai), maxContextTokens: 20, targetUtilization: 1, minKeepMessages: 0, adapter: openai.adapter, countTokens: ten });
    expect(none.evictedCount).toBe(4);
    expect(none.firstEvictedTimestamp).toBeNull();
    expect(none.lastEvictedTimestamp).toBeNull();
  });
});

describe("rollingEvict: input checks", () => {
  const base = { messages: chat(2), maxContextTokens: 100, adapter: pi.adapter };
  it.each([
    ["messages that are not an array", { ...base, messages: "hi" }, /needs \{ messages/],
    ["no adapter", { ...base, adapter: undefined }, /needs an `adapter`/],
    ["a zero maxContextTokens", { ...base, maxContextTokens: 0 }, /positive maxContextTokens; found 0/],
    ["a NaN maxContextTokens", { ...base, maxContextTokens: Number.NaN }, /positive maxContextTokens; found NaN/],
    ["targetUtilization 0", { ...base, targetUtilization: 0 }, /targetUtilization above 0 and at most 1; found 0/],
    ["targetUtilization 1.5", { ...base, targetUtilization: 1.5 }, /found 1.5/],
    ["a fractional minKeepMessages", { ...base, minKeepMessages: 2.5 }, /minKeepMessages .* found 2.5/],
    ["a negative noteTokens", { ...base, noteTokens: -1 }, /noteTokens of at least 0; found -1/],
    ["countTokens returning NaN", { ...base, countTokens: () => Number.NaN }, /countTokens returned NaN for message 0/],
  ])("rejects %s with COMPACTION_INPUT_INVALID", (_name, input, message) => {
    expect(() => rollingEvict(input as never)).toThrow(expect.objectContaining({ code: ErrorCodes.INPUT_INVALID, message: expect.stringMatching(message) }));
  });
});

describe.each(FORMATS)("rollingEvict on the %s adapter", (format) => {
  const b = builders(format);
  // user, call(c1,c2), results, assistant, user u2, assistant, user u3, assistant
  const conversation = () => [
    b.user("u1"),
    b.assistant("", [{ id: "c1" }, { id: "c2" }]),
    ...b.toolResults([{ id: "c1", text: "r1" }, { id: "c2", text: "r2" }]),
    b.assistant("done"),
    b.user("u2"),
    b.assistant("a2"),
    b.user("u3"),
    b.assistant("a3"),
  ];

  it("evicts the whole oldest turn, tool results with their call", () => {
    const messages = conversation();
    const result = rollingEvict({ messages, maxContextTokens: 40, targetUtilization: 1, minKeepMessages: 2, adapter: b.adapter, countTokens: ten });
    expect(result.kept.map((m) => b.adapter.readFacts(m).text)).toEqual(["u2", "a2", "u3", "a3"]);
    expect(result.evicted).toEqual(messages.slice(0, messages.length - 4));
  });

  it("never separates a call from its results, whatever the target", () => {
    const messages = conversation();
    for (let target = 0; target <= 100; target += 5) {
      const result = rollingEvict({ messages, maxContextTokens: Math.max(1, target), targetUtilization: 1, minKeepMessages: 0, adapter: b.adapter, countTokens: ten });
      expect(invariantProblems(b.adapter, messages, result.kept)).toEqual([]);
    }
  });

  it("keeps a pinned message however small the target", () => {
    const messages = conversation();
    messages[0] = b.pin(messages[0]);
    const result = rollingEvict({ messages, maxContextTokens: 1, minKeepMessages: 0, adapter: b.adapter, countTokens: ten });
    // ... and the newest user message with what follows it: the request is never evicted.
    const request = messages.findLastIndex((m) => b.adapter.readFacts(m).kind === "user");
    expect(result.kept).toEqual([messages[0], ...messages.slice(request)]);
    expect(result.targetMet).toBe(false);
  });
});
