import { describe, it, expect, afterAll } from "vitest";
import { get_encoding } from "tiktoken";
import { FactsCache, type MessageAdapter, type MessageFacts, type ToolCallInfo } from "../messages/adapter.js";
import { createPiAdapter, type PiMessage, type PiUsage } from "../messages/pi-adapter.js";
import { createEstimateCounter } from "./estimate-counter.js";
import { MessageTokenCounter, messageTokenText } from "./message-tokens.js";
import { NO_CALIBRATION } from "./calibration.js";
import { createTiktokenCounter } from "./tiktoken-counter.js";
import { IMAGE_TOKENS, type TokenCounter } from "./token-counter.js";

/** A minimal host format: the test's own message shape, read by a fake adapter. */
interface FakeMessage {
  readonly text?: string;
  readonly thinking?: string;
  readonly toolCalls?: readonly ToolCallInfo[];
  readonly images?: number;
  readonly usage?: number;
}

const fakeAdapter: MessageAdapter<FakeMessage> = {
  name: "fake",
  readFacts: (message): MessageFacts => ({
    kind: message.toolCalls !== undefined || message.usage !== undefined ? "assistant" : "user",
    text: message.text ?? "",
    thinking: message.thinking ?? "",
    toolCalls: message.toolCalls ?? [],
    toolResultIds: [],
    isError: false,
    imageCount: message.images ?? 0,
    pinned: false,
    ...(message.usage === undefined ? {} : { usageContextTokens: message.usage }),
  }),
  createSummary: (text) => ({ text }),
  createNote: (text) => ({ text }),
  replaceToolOutput: (_message, replacement) => ({ text: replacement }),
  mapText: (message, rewrite) => ({ ...message, text: rewrite(message.text ?? "") }),
};

/** A counter that records every string it is asked to count: one token per character. */
function spyCounter(): TokenCounter & { readonly calls: string[] } {
  const calls: string[] = [];
  return { name: "spy", calls, count: (text) => (calls.push(text), text.length), dispose: () => undefined };
}

/** A facts cache that records how often facts are asked for. */
class CountingFactsCache extends FactsCache<FakeMessage> {
  reads = 0;
  override of(message: FakeMessage): MessageFacts {
    this.reads += 1;
    return super.of(message);
  }
}

const counterFor = (counter: TokenCounter): MessageTokenCounter<FakeMessage> =>
  new MessageTokenCounter(new FactsCache(fakeAdapter), counter);

describe("messageTokenText", () => {
  it("joins text, thinking and each tool call's name + JSON arguments with newlines", () => {
    const facts = fakeAdapter.readFacts({
      text: "Reading it.",
      thinking: "I should read.",
      toolCalls: [
        { id: "c1", name: "read", arguments: { path: "a.ts" } },
        { id: "c2", name: "bash", arguments: "ls -la" },
      ],
    });
    expect(messageTokenText(facts)).toBe('Reading it.\nI should read.\nread{"path":"a.ts"}\nbashls -la');
  });

  it("leaves out empty pieces, so a text-only message is its text", () => {
    expect(messageTokenText(fakeAdapter.readFacts({ text: "just text" }))).toBe("just text");
  });

  it("treats undefined tool-call arguments as no arguments", () => {
    const facts = fakeAdapter.readFacts({ toolCalls: [{ id: "c1", name: "now", arguments: undefined }] });
    expect(messageTokenText(facts)).toBe("now");
  });
});

describe("MessageTokenCounter.count", () => {
  it("counts the message's token text with the given counter", () => {
    const spy = spyCounter();
    const message: FakeMessage = { text: "abc", toolCalls: [{ id: "1", name: "ls", arguments: {} }] };
    expect(counterFor(spy).count(message)).toBe("abc\nls{}".length);
    expect(spy.calls).toEqual(["abc\nls{}"]);
  });

  it("adds IMAGE_TOKENS per image", () => {
    const tokens = counterFor(spyCounter()).count({ text: "see", images: 2 });
    expect(tokens).toBe(3 + 2 * IMAGE_TOKENS);
  });

  it("counts a message once: a second call reads neither its facts nor its text again", () => {
    const spy = spyCounter();
    const facts = new CountingFactsCache(fakeAdapter);
    const counter = new MessageTokenCounter(facts, spy);
    const message: FakeMessage = { text: "hello there" };
    const first = counter.count(message);
    const second = counter.count(message);
    expect(second).toBe(first);
    expect(spy.calls).toHaveLength(1);
    expect(facts.reads).toBe(1);
  });

  it("encodes the same text once across message objects (a new request's copies of the same messages)", () => {
    const spy = spyCounter();
    const facts = new CountingFactsCache(fakeAdapter);
    const counter = new MessageTokenCounter(facts, spy);
    expect(counter.count({ text: "same" })).toBe(4);
    expect(counter.count({ text: "same" })).toBe(4);
    expect(counter.count({ text: "same", images: 1 })).toBe(4 + IMAGE_TOKENS);
    expect(spy.calls).toEqual(["same"]);
    expect(facts.reads).toBe(3); // each object's facts are still read: images and kind may differ
  });

  it("keeps counts of at most textCacheChars characters of text, forgetting the oldest first", () => {
    const spy = spyCounter();
    const counter = new MessageTokenCounter(new FactsCache(fakeAdapter), spy, { textCacheChars: 10 });
    counter.count({ text: "aaaa" });
    counter.count({ text: "bbbb" });
    counter.count({ text: "cccc" }); // 12 characters: "aaaa" goes
    counter.count({ text: "bbbb" });
    counter.count({ text: "cccc" });
    counter.count({ text: "aaaa" });
    counter.count({ text: "x".repeat(11) }); // longer than the whole cache: counted, not kept
    counter.count({ text: "x".repeat(11) });
    expect(spy.calls).toEqual(["aaaa", "bbbb", "cccc", "aaaa", "x".repeat(11), "x".repeat(11)]);
  });

  it("exposes its TokenCounter through the counter getter, with counts kept by text", () => {
    const spy = spyCounter();
    const counter = counterFor(spy);
    expect(counter.counter.name).toBe("spy");
    expect(counter.counter.count("a summary line")).toBe(14);
    expect(counter.count({ text: "a summary line" })).toBe(14);
    expect(counter.counter.count("a summary line")).toBe(14);
    expect(spy.calls).toEqual(["a summary line"]);
  });
});

describe("MessageTokenCounter with a counter that adds up at line starts", () => {
  /** A spy counter that declares its counts add up at line starts (one token per character does). */
  function additiveSpy(): TokenCounter & { readonly calls: string[] } {
    return { ...spyCounter(), additiveAtLineStarts: true };
  }
  const summaryAdapter: MessageAdapter<FakeMessage & { readonly summary?: boolean }> = {
    ...fakeAdapter,
    readFacts: (message) => ({ ...fakeAdapter.readFacts(message), ...(message.summary === true ? { kind: "summary" as const } : {}) }),
  };

  it("counts text through `counter` line by line: a line counted before is not encoded again", () => {
    const spy = additiveSpy();
    const counter = counterFor(spy);
    expect(counter.counter.additiveAtLineStarts).toBe(true);
    expect(counter.counter.count("## Done\n- a\n- b")).toBe(15);
    expect(counter.counter.count("## Done\n- a\n- b\n- c")).toBe(19);
    expect(spy.calls).toEqual(["## Done\n", "- a\n", "- b", "- b\n", "- c"]);
  });

  it("counts a summary message line by line, reusing the lines its summary was fitted with", () => {
    const spy = additiveSpy();
    const counter = new MessageTokenCounter(new FactsCache(summaryAdapter), spy);
    counter.counter.count("## Goal\n- ship it\n");
    expect(counter.count({ text: "Summary:\n## Goal\n- ship it\n", summary: true })).toBe(27);
    expect(spy.calls).toEqual(["## Goal\n", "- ship it\n", "Summary:\n"]);
  });

  it("counts a conversation message whole, in one call", () => {
    const spy = additiveSpy();
    expect(counterFor(spy).count({ text: "line one\nline two\nline three" })).toBe(28);
    expect(spy.calls).toEqual(["line one\nline two\nline three"]);
  });

  it("counts whole texts when the counter does not declare it (chars/4 does not add up)", () => {
    const spy = spyCounter();
    const counter = new MessageTokenCounter(new FactsCache(summaryAdapter), spy);
    expect(counter.counter.additiveAtLineStarts).toBeUndefined();
    counter.counter.count("- a\n- b");
    counter.count({ text: "- a\n- b\n- c", summary: true });
    expect(spy.calls).toEqual(["- a\n- b", "- a\n- b\n- c"]);
  });
});

describe("MessageTokenCounter with tiktoken", () => {
  const tiktoken = createTiktokenCounter();
  afterAll(() => tiktoken.dispose());

  it("matches tiktoken's own o200k_base count of the message's token text", () => {
    const message: FakeMessage = {
      text: "Here is the diff <|endoftext|>",
      thinking: "The user wants a diff.",
      toolCalls: [{ id: "t", name: "edit", arguments: { path: "src/x.ts", oldText: "a", newText: "b" } }],
    };
    const encoder = get_encoding("o200k_base");
    const expected = encoder.encode_ordinary(messageTokenText(fakeAdapter.readFacts(message))).length;
    encoder.free();
    expect(counterFor(tiktoken).count(message)).toBe(expected);
  });

  it("counts a text line by line exactly as tiktoken counts it whole", () => {
    const text = "## Done\n- Edited `src/a.ts`.\n/usr/bin/env node\n  indented\n\n## Next \nIt's 3.14 \u00e9t\u00e9 \ud83d\ude00\n- [ ] ship";
    const encoder = get_encoding("o200k_base");
    const expected = encoder.encode_ordinary(text).length;
    encoder.free();
    const counter = counterFor(tiktoken);
    expect(counter.counter.count(text)).toBe(expected);
    expect(counter.counter.count(text)).toBe(expected);
  });
});

describe("MessageTokenCounter.total", () => {
  it("sums the counts of the messages", () => {
    const counter = counterFor(spyCounter());
    expect(counter.total([{ text: "ab" }, { text: "cde" }, { images: 1 }])).toBe(5 + IMAGE_TOKENS);
  });

  it("is 0 for no messages", () => {
    expect(counterFor(spyCounter()).total([])).toBe(0);
  });
});

describe("MessageTokenCounter.contextTokens", () => {
  it("counts every message when none carries usage (lastUsageIndex null)", () => {
    const counter = counterFor(spyCounter());
    const result = counter.contextTokens([{ text: "aaaa" }, { text: "bb" }]);
    expect(result).toEqual({ tokens: 6, usageTokens: 0, trailingTokens: 6, lastUsageIndex: null, base: "count", calibration: NO_CALIBRATION });
  });

  it("uses the newest usage figure plus counts of the messages after it", () => {
    const counter = counterFor(spyCounter());
    const messages: FakeMessage[] = [
      { text: "first question" },
      { text: "old answer", usage: 500 },
      { text: "second question" },
      { text: "new answer", usage: 900 },
      { text: "tool output" },
      { text: "next" },
    ];
    expect(counter.contextTokens(messages)).toEqual({
      tokens: 900 + "tool output".length + "next".length,
      usageTokens: 900,
      trailingTokens: "tool output".length + "next".length,
      lastUsageIndex: 3,
      base: "usage",
      calibration: NO_CALIBRATION,
    });
  });

  it("has no trailing tokens when the newest message carries the usage", () => {
    const counter = counterFor(spyCounter());
    const result = counter.contextTokens([{ text: "q" }, { text: "a", usage: 1234 }]);
    expect(result).toEqual({ tokens: 1234, usageTokens: 1234, trailingTokens: 0, lastUsageIndex: 1, base: "usage", calibration: NO_CALIBRATION });
  });

  it("accepts a usage figure of 0 as a provider figure", () => {
    const counter = counterFor(spyCounter());
    const result = counter.contextTokens([{ text: "q", usage: 0 }, { text: "abc" }]);
    expect(result).toEqual({ tokens: 3, usageTokens: 0, trailingTokens: 3, lastUsageIndex: 0, base: "usage", calibration: NO_CALIBRATION });
  });

  it("does not count messages before the usage message", () => {
    const spy = spyCounter();
    counterFor(spy).contextTokens([{ text: "before" }, { text: "a", usage: 10 }, { text: "after" }]);
    expect(spy.calls).toEqual(["after"]);
  });
});

describe("MessageTokenCounter.contextTokens with the pi adapter", () => {
  const usage = (totalTokens: number): PiUsage => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens });
  const messages: PiMessage[] = [
    { role: "user", content: "fix the bug", timestamp: 1 },
    { role: "assistant", content: [{ type: "text", text: "done" }], usage: usage(4000), stopReason: "stop", timestamp: 2 },
    { role: "user", content: "and the other one", timestamp: 3 },
    { role: "assistant", content: [], usage: usage(9999), stopReason: "aborted", timestamp: 4 },
    { role: "user", content: "please", timestamp: 5 },
  ];

  it("skips an aborted assistant's usage and counts from the last completed one, as pi does", () => {
    const spy = spyCounter();
    const counter = new MessageTokenCounter(new FactsCache(createPiAdapter()), spy);
    const trailing = "and the other one".length + 0 + "please".length;
    expect(counter.contextTokens(messages)).toEqual({
      tokens: 4000 + trailing,
      usageTokens: 4000,
      trailingTokens: trailing,
      lastUsageIndex: 1,
      base: "usage",
      calibration: NO_CALIBRATION,
    });
  });

  it("ignores usage stored before the newest summary: kept messages describe the old, larger context", () => {
    const counter = new MessageTokenCounter(new FactsCache(createPiAdapter()), spyCounter());
    const compacted: PiMessage[] = [
      { role: "compactionSummary", summary: "earlier", tokensBefore: 9000, timestamp: 10 },
      { role: "assistant", content: [{ type: "text", text: "kept" }], usage: usage(8000), stopReason: "stop", timestamp: 2 },
      { role: "user", content: "next", timestamp: 11 },
    ];
    expect(counter.contextTokens(compacted)).toMatchObject({ usageTokens: 0, lastUsageIndex: null, calibration: NO_CALIBRATION });
  });

  it("trusts usage on messages newer than the newest summary", () => {
    const counter = new MessageTokenCounter(new FactsCache(createPiAdapter()), spyCounter());
    const compacted: PiMessage[] = [
      { role: "compactionSummary", summary: "earlier", tokensBefore: 9000, timestamp: 10 },
      { role: "user", content: "next", timestamp: 11 },
      { role: "assistant", content: [{ type: "text", text: "fresh" }], usage: usage(1200), stopReason: "stop", timestamp: 12 },
    ];
    expect(counter.contextTokens(compacted)).toMatchObject({ tokens: 1200, usageTokens: 1200, lastUsageIndex: 2, calibration: NO_CALIBRATION });
  });
});

describe("MessageTokenCounter.calibration for OpenAI's models", () => {
  // Usage figures of a provider counting 1.3x what chars/4 counts, from openai/gpt-4o.
  const conversation = (counter: TokenCounter): PiMessage[] => {
    const messages: PiMessage[] = [];
    let counted = 0;
    for (let i = 0; i < 6; i++) {
      const user: PiMessage = { role: "user", content: `step ${i}: ${"check the parser. ".repeat(20 + i * 7)}`, timestamp: 2 * i };
      counted += counter.count(messageTokenText(createPiAdapter().readFacts(user)));
      const text = `done ${i}: ${"fixed it. ".repeat(15 + i * 5)}`;
      counted += counter.count(text);
      const total = Math.round(1.3 * counted);
      messages.push(user, { role: "assistant", content: [{ type: "text", text }], provider: "openai", model: "gpt-4o", usage: { input: total, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: total }, stopReason: "stop", timestamp: 2 * i + 1 } as PiMessage);
    }
    return messages;
  };

  it("is exact with o200k, the model's encoding, and learned with chars/4", () => {
    const tiktoken = createTiktokenCounter();
    try {
      const exact = new MessageTokenCounter(new FactsCache(createPiAdapter()), tiktoken).calibration(conversation(tiktoken));
      expect(exact).toMatchObject({ source: "exact", ratio: 1, model: "openai/gpt-4o" });
    } finally {
      tiktoken.dispose();
    }
    const estimate = createEstimateCounter();
    const learned = new MessageTokenCounter(new FactsCache(createPiAdapter()), estimate).calibration(conversation(estimate));
    expect(learned.source).toBe("usage");
    expect(learned.ratio).toBeCloseTo(1.3, 1);
  });
});

describe("MessageTokenCounter.contextTokens with an anchor (a compaction's recorded After)", () => {
  const usage = (totalTokens: number): PiUsage => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens });
  const compacted: PiMessage[] = [
    { role: "compactionSummary", summary: "earlier work", tokensBefore: 9000, timestamp: 10 },
    { role: "assistant", content: [{ type: "text", text: "kept" }], usage: usage(8000), stopReason: "stop", timestamp: 2 },
    { role: "user", content: "next question", timestamp: 11 },
  ];

  it("is the anchor itself when no message follows the ones it covers", () => {
    const counter = new MessageTokenCounter(new FactsCache(createPiAdapter()), spyCounter());
    const size = counter.contextTokens(compacted, { tokens: 5000, lastIndex: 2 });
    expect(size).toEqual({ tokens: 5000, usageTokens: 5000, trailingTokens: 0, lastUsageIndex: 2, base: "anchor", calibration: NO_CALIBRATION });
  });

  it("adds the calibrated count of the messages after the ones it covers, counting only those", () => {
    const spy = spyCounter();
    const counter = new MessageTokenCounter(new FactsCache(createPiAdapter()), spy, { tokenRatio: 1.5 });
    const size = counter.contextTokens(compacted, { tokens: 5000, lastIndex: 1 });
    const trailing = "next question".length;
    expect(size).toMatchObject({ tokens: 5000 + Math.round(trailing * 1.5), usageTokens: 5000, trailingTokens: trailing, lastUsageIndex: 1, base: "anchor" });
    expect(spy.calls).toEqual(["next question"]);
  });

  it("gives way to a usage figure newer than the summary after the anchor", () => {
    const counter = new MessageTokenCounter(new FactsCache(createPiAdapter()), spyCounter());
    const fresh: PiMessage[] = [
      ...compacted,
      { role: "assistant", content: [{ type: "text", text: "fresh" }], usage: usage(6100), stopReason: "stop", timestamp: 12 },
      { role: "user", content: "more", timestamp: 13 },
    ];
    expect(counter.contextTokens(fresh, { tokens: 5000, lastIndex: 2 })).toMatchObject({ tokens: 6100 + 4, usageTokens: 6100, lastUsageIndex: 3, base: "usage" });
  });

  it("ignores a usage figure on a message the anchor covers", () => {
    const counter = counterFor(spyCounter());
    const messages: FakeMessage[] = [{ text: "summary" }, { text: "answer", usage: 900 }, { text: "after" }];
    expect(counter.contextTokens(messages, { tokens: 300, lastIndex: 1 })).toMatchObject({ tokens: 300 + 5, base: "anchor", lastUsageIndex: 1 });
    expect(counter.contextTokens(messages)).toMatchObject({ tokens: 900 + 5, base: "usage" });
  });

  it("is stale once a summary follows the messages it covers (a newer compaction)", () => {
    const counter = new MessageTokenCounter(new FactsCache(createPiAdapter()), spyCounter());
    const recompacted: PiMessage[] = [...compacted, { role: "compactionSummary", summary: "newer", tokensBefore: 7000, timestamp: 20 }, { role: "user", content: "go", timestamp: 21 }];
    expect(counter.contextTokens(recompacted, { tokens: 5000, lastIndex: 2 })).toEqual(counter.contextTokens(recompacted));
    expect(counter.contextTokens(recompacted, { tokens: 5000, lastIndex: 2 }).base).toBe("count");
  });

  it("covers no message with lastIndex -1: the figure is added to the count of all", () => {
    const counter = counterFor(spyCounter());
    expect(counter.contextTokens([{ text: "ab" }], { tokens: 10, lastIndex: -1 })).toMatchObject({ tokens: 12, usageTokens: 10, lastUsageIndex: null, base: "anchor" });
  });

  it("rejects an anchor that does not fit the context, naming the value", () => {
    const counter = counterFor(spyCounter());
    expect(() => counter.contextTokens([{ text: "a" }], { tokens: 10, lastIndex: 1 })).toThrow(/lastIndex must be an integer from -1 to 0 .*found 1/);
    expect(() => counter.contextTokens([{ text: "a" }], { tokens: Number.NaN, lastIndex: 0 })).toThrow(/tokens must be a number at least 0; found NaN/);
    expect(() => counter.contextTokens([{ text: "a" }], { tokens: 5, lastIndex: 0.5 })).toThrow(/found 0\.5/);
  });

  it("puts providerTokensAfter in the anchored measure", () => {
    const counter = counterFor(spyCounter());
    const input: FakeMessage[] = [{ text: "aaaaaaaaaa" }, { text: "bbbbbbbbbb" }];
    // Anchored at 40 for our 20: ratio 2, so the 10 kept count 20.
    expect(counter.providerTokensAfter(input, [{ text: "bbbbbbbbbb" }], { tokens: 40, lastIndex: 1 })).toBe(20);
    expect(counter.providerTokensAfter(input, [{ text: "bbbbbbbbbb" }])).toBe(10);
  });
});

describe("MessageTokenCounter.contextBase", () => {
  const usage = (totalTokens: number): PiUsage => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens });
  const contexts: ReadonlyArray<readonly [string, PiMessage[], { tokens: number; lastIndex: number } | undefined]> = [
    ["no usage", [{ role: "user", content: "hi", timestamp: 1 }], undefined],
    [
      "usage on the newest message",
      [
        { role: "user", content: "q", timestamp: 1 },
        { role: "assistant", content: [{ type: "text", text: "a" }], usage: usage(700), stopReason: "stop", timestamp: 2 },
      ],
      undefined,
    ],
    [
      "usage, then a message",
      [
        { role: "assistant", content: [{ type: "text", text: "a" }], usage: usage(700), stopReason: "stop", timestamp: 2 },
        { role: "user", content: "next", timestamp: 3 },
      ],
      undefined,
    ],
    [
      "an anchor covering every message",
      [
        { role: "compactionSummary", summary: "s", tokensBefore: 9000, timestamp: 10 },
        { role: "user", content: "q", timestamp: 11 },
      ],
      { tokens: 5000, lastIndex: 1 },
    ],
    ["an anchor covering none", [{ role: "user", content: "q", timestamp: 11 }], { tokens: 40, lastIndex: -1 }],
  ];

  it.each(contexts)("%s: the base contextTokens starts from, found without counting", (_name, messages, anchor) => {
    const spy = spyCounter();
    const base = new MessageTokenCounter(new FactsCache(createPiAdapter()), spy).contextBase(messages, anchor);
    expect(spy.calls).toEqual([]);
    const { usageTokens, lastUsageIndex, base: from } = new MessageTokenCounter(new FactsCache(createPiAdapter()), spyCounter()).contextTokens(messages, anchor);
    expect(base).toEqual({ usageTokens, lastUsageIndex, base: from });
  });

  it("rejects an anchor that does not fit the context, as contextTokens does", () => {
    expect(() => counterFor(spyCounter()).contextBase([{ text: "a" }], { tokens: 10, lastIndex: 1 })).toThrow(/lastIndex must be an integer from -1 to 0 .*found 1/);
  });
});
