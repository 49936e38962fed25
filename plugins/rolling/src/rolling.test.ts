import { type CompactionPlugin, ErrorCodes, STAGE_STRATEGY } from "@compaction/core";
import { builders, FORMATS, words } from "@compaction/core/testing";
import { describe, expect, it } from "vitest";
import rollingDefault, { PLUGIN_NAME, ROLLING_OPTIONS_SCHEMA, rolling } from "./index.js";
import { invariantProblems } from "./test-support/conversations.js";
import { compactorFor, estimateTokens, fakeRecall, turns, turnTime } from "./test-support/setup.js";

const FALLBACK_WARNING = /^\[rolling\] no recall\/memory search is configured for this agent \(no plugin provides 'memory_search'\): rolling fell back to a safeguard summary/;

describe.each(FORMATS)("rolling on the %s adapter", (format) => {
  const b = builders(format);

  it("evicts the oldest messages and puts the eviction note, word for word, in their place", async () => {
    const messages = turns(format, 10);
    const result = await compactorFor(format, [rolling(), fakeRecall()]).compact({ messages });
    const evicted = messages.filter((m) => !result.messages.includes(m));
    expect(result.status).toBe("compacted");
    expect(evicted.length).toBeGreaterThan(0);
    expect(evicted).toEqual(messages.slice(0, evicted.length));
    const note = `[Context rolled: ${evicted.length} messages evicted (${estimateTokens(b.adapter)(evicted)} tokens). Full transcript available via memory_search. Evicted range: ${turnTime(0)} to ${turnTime(evicted.length - 1)}. ran: ls]`;
    expect(result.summary).toBe(note);
    expect(messages).not.toContain(result.messages[0]);
    expect(b.adapter.readFacts(result.messages[0]).text).toBe(note);
    expect(result.messages.slice(1)).toEqual(messages.slice(evicted.length));
  });

  it("brings the context, note included, to the target share of the window", async () => {
    const messages = turns(format, 10);
    for (const targetUtilization of [0.3, 0.5, 0.8, 0.9]) {
      const result = await compactorFor(format, [rolling({ targetUtilization, minKeepMessages: 2 }), fakeRecall()]).compact({ messages });
      expect(result.status).toBe("compacted");
      expect(result.tokensAfter).toBeLessThanOrEqual(Math.floor(1000 * targetUtilization));
      expect(result.warnings).toEqual([]);
    }
  });

  it("keeps the system prompt and pinned messages ahead of the note, and never separates a call from its result", async () => {
    const messages = turns(format, 10);
    messages[2] = b.pin(messages[2]); // the first tool result: its call stays too
    const system = b.system("policy");
    const input = system === undefined ? messages : [system, ...messages];
    const result = await compactorFor(format, [rolling({ minKeepMessages: 2, targetUtilization: 0.5 }), fakeRecall()]).compact({ messages: input });
    const offset = system === undefined ? 0 : 1;
    expect(result.status).toBe("compacted");
    expect(result.messages.slice(0, offset + 2)).toEqual(input.slice(0, offset).concat([messages[1], messages[2]]));
    expect(b.adapter.readFacts(result.messages[offset + 2]).text).toMatch(/^\[Context rolled: /);
    expect(invariantProblems(b.adapter, input, result.messages)).toEqual([]);
  });

  it("falls back to a safeguard summary, with a warning on the result, when no plugin provides recall", async () => {
    const messages = turns(format, 10);
    const result = await compactorFor(format, [rolling()]).compact({ messages });
    expect(result.status).toBe("compacted");
    expect(result.warnings.some((w) => FALLBACK_WARNING.test(w))).toBe(true);
    expect(result.event?.layer).toBe("summarize");
    expect(result.summary).toMatch(/^summary of \d+ messages/);
    const summary = result.messages.find((m) => !messages.includes(m));
    expect(b.adapter.readFacts(summary).kind).toBe("summary");
  });
});

describe("rolling: the eviction note", () => {
  it("names the recallTool option, and detects a plugin that provides that tool", async () => {
    const result = await compactorFor("pi", [rolling({ recallTool: "search_history" }), fakeRecall("search_history")]).compact({
      messages: turns("pi", 10),
    });
    expect(result.summary).toMatch(/Full transcript available via search_history\. /);
    expect(result.warnings).toEqual([]);
  });

  it("writes 'unknown' for the range when the evicted messages carry no timestamps", async () => {
    const messages = turns("openai", 10).map(({ timestamp: _t, ...rest }) => rest);
    const result = await compactorFor("openai", [rolling(), fakeRecall()]).compact({ messages });
    expect(result.summary).toMatch(/ Evicted range: unknown to unknown\. ran: ls\]$/);
  });

  it("drops the evicted messages with no trace when evictionNote is false", async () => {
    const messages = turns("pi", 10);
    const result = await compactorFor("pi", [rolling({ evictionNote: false }), fakeRecall()]).compact({ messages });
    expect(result.status).toBe("compacted");
    expect(result.summary).toBeNull();
    expect(result.messages.length).toBeLessThan(messages.length);
    expect(result.messages).toEqual(messages.slice(messages.length - result.messages.length));
    expect(result.tokensAfter).toBeLessThanOrEqual(800);
  });

  it("evicts fewer messages with the note off, since no room is kept for the note", async () => {
    const messages = turns("pi", 10);
    const withNote = await compactorFor("pi", [rolling({ minKeepMessages: 0 }), fakeRecall()]).compact({ messages });
    const without = await compactorFor("pi", [rolling({ minKeepMessages: 0, evictionNote: false }), fakeRecall()]).compact({ messages });
    expect(without.event?.messagesCompacted).toBeLessThan(withNote.event?.messagesCompacted as number);
  });

  it("reports layer 'evict', the rolling strategy and the evicted count in the event", async () => {
    const result = await compactorFor("pi", [rolling(), fakeRecall()]).compact({ messages: turns("pi", 10) });
    const evicted = turns("pi", 10).length - (result.messages.length - 1);
    expect(result.event).toMatchObject({ layer: "evict", strategy: "rolling", messagesCompacted: evicted });
  });
});

describe("rolling: target, minimum and budget", () => {
  it("stays within the budget when the reserve leaves less room than the target", async () => {
    // Half the window, the most a reserve may take.
    const result = await compactorFor("pi", [rolling({ minKeepMessages: 2 }), fakeRecall()], { reserveTokens: 500 }).compact({
      messages: turns("pi", 10),
    });
    expect(result.status).toBe("compacted");
    expect(result.tokensAfter).toBeLessThanOrEqual(500);
  });

  it("does nothing when the context is already under the target", async () => {
    const messages = turns("pi", 10);
    const result = await compactorFor("pi", [rolling(), fakeRecall()], { contextWindow: 100_000 }).compact({ messages });
    expect(result.status).toBe("noop");
    expect(result.messages).toBe(messages);
    expect(result.warnings).toEqual([]);
    expect(result.reason).toMatch(/^No plugin selected a cut \(rolling: the context holds about \d+ tokens, already within its target of 80000 \(80% of the 100000-token window\), so nothing is evicted\)\.$/);
  });

  it("keeps minKeepMessages even past the target, evicting what it may and warning that the target is missed", async () => {
    const messages = turns("pi", 10);
    const result = await compactorFor("pi", [rolling({ minKeepMessages: 33 }), fakeRecall()]).compact({ messages });
    expect(result.status).toBe("compacted");
    expect(result.messages.slice(1)).toEqual(messages.slice(7));
    expect(result.warnings).toEqual([expect.stringMatching(/^\[rolling\] Evicted as much as allowed, but about \d+ tokens remain \(note included\), over the target of 800/)]);
  });

  it("warns and changes nothing when every message must stay", async () => {
    const messages = turns("pi", 10);
    const result = await compactorFor("pi", [rolling({ minKeepMessages: 40 }), fakeRecall()]).compact({ messages });
    expect(result.status).toBe("noop");
    expect(result.messages).toBe(messages);
    expect(result.warnings).toEqual([expect.stringMatching(/over the target of 800, but nothing can be evicted/)]);
  });

  it("warns and changes nothing when the messages that must stay exceed the budget, so a later plugin may try", async () => {
    const pi = builders("pi");
    const messages = turns("pi", 10).map((m, i) => (i < 30 ? pi.pin(m) : m));
    const result = await compactorFor("pi", [rolling({ minKeepMessages: 2 }), fakeRecall()], { contextWindow: 500 }).compact({ messages });
    // Nobody can: the pinned messages alone are over the budget, so the core fails with the numbers (issue 10).
    expect(result.status).toBe("failed");
    expect(result.error?.code).toBe("COMPACTION_CONTEXT_OVERFLOW");
    expect(result.messages).toBe(messages);
    expect(result.warnings).toContainEqual(expect.stringMatching(/cannot bring the context within the budget of 500 tokens/));
  });
});

describe("rolling: recall detection and the safeguard fallback", () => {
  it("detects a recall plugin applied after rolling (checked at compaction time)", async () => {
    const result = await compactorFor("pi", [rolling(), fakeRecall()]).compact({ messages: turns("pi", 10) });
    const resultAfter = await compactorFor("pi", [fakeRecall(), rolling()]).compact({ messages: turns("pi", 10) });
    expect(result.event?.layer).toBe("evict");
    expect(resultAfter.event?.layer).toBe("evict");
  });

  it("sees a recall plugin added with use() after the compactor was built", async () => {
    const compactor = compactorFor("pi", [rolling()]);
    compactor.use(fakeRecall());
    const result = await compactor.compact({ messages: turns("pi", 10) });
    expect(result.event?.layer).toBe("evict");
    expect(result.warnings).toEqual([]);
  });

  it("evicts with recall: true though no plugin provides recall (the host offers it)", async () => {
    const result = await compactorFor("pi", [rolling({ recall: true })]).compact({ messages: turns("pi", 10) });
    expect(result.event?.layer).toBe("evict");
    expect(result.warnings).toEqual([]);
  });

  it("falls back with recall: false even when a recall plugin is applied, saying recall is off", async () => {
    const result = await compactorFor("pi", [rolling({ recall: false }), fakeRecall()]).compact({ messages: turns("pi", 10) });
    expect(result.event?.layer).toBe("summarize");
    expect(result.warnings[0]).toMatch(/^\[rolling\] recall is turned off \(recall: false\): rolling fell back to a safeguard summary/);
  });

  it("falls back when the recall plugin provides another tool than recallTool", async () => {
    const result = await compactorFor("pi", [rolling({ recallTool: "search_history" }), fakeRecall("memory_search")]).compact({
      messages: turns("pi", 10),
    });
    expect(result.event?.layer).toBe("summarize");
    expect(result.warnings[0]).toMatch(/no plugin provides 'search_history'/);
  });

  it("keeps at most keepRecentTokens of the newest messages in the fallback", async () => {
    const messages = turns("pi", 10);
    const count = estimateTokens(builders("pi").adapter);
    const result = await compactorFor("pi", [rolling({ keepRecentTokens: 200, minKeepMessages: 0 })]).compact({ messages });
    const kept = result.messages.filter((m) => messages.includes(m));
    expect(count(kept)).toBeLessThanOrEqual(200);
    expect(count(messages.slice(messages.length - kept.length - 1))).toBeGreaterThan(200);
  });

  it("caps the fallback's kept tokens at the rolling target", async () => {
    const messages = turns("pi", 10);
    const count = estimateTokens(builders("pi").adapter);
    const result = await compactorFor("pi", [rolling({ targetUtilization: 0.3, minKeepMessages: 0 })]).compact({ messages });
    expect(count(result.messages.filter((m) => messages.includes(m)))).toBeLessThanOrEqual(300);
  });

  it("keeps minKeepMessages in the fallback", async () => {
    const messages = turns("pi", 10);
    const result = await compactorFor("pi", [rolling({ keepRecentTokens: 0, minKeepMessages: 7 })]).compact({ messages });
    expect(result.messages.filter((m) => messages.includes(m)).length).toBeGreaterThanOrEqual(7);
  });
});

describe("rolling: composition", () => {
  /** A plugin whose cut (after the first two turns) wins over rolling's; it writes `summary` first when given. */
  function otherPlugin(summary?: string): CompactionPlugin {
    return {
      name: "other",
      apply(c) {
        c.hooks.selectCut.tap({ name: "other", stage: STAGE_STRATEGY }, () => ({ firstKeptIndex: 8 }));
        if (summary !== undefined) c.hooks.summarize.tap({ name: "other", stage: STAGE_STRATEGY }, () => ({ text: summary, kind: "summary" }));
      },
    };
  }

  it("leaves another plugin's cut alone when that plugin already wrote its summary", async () => {
    for (const plugins of [[otherPlugin("other summary"), rolling(), fakeRecall()], [otherPlugin("other summary"), rolling()]]) {
      const result = await compactorFor("pi", plugins).compact({ messages: turns("pi", 10) });
      expect(result.summary).toBe("other summary");
      expect(result.event?.strategy).toBe("other");
      expect(result.warnings).toEqual([]);
    }
  });

  it.each(FORMATS)("writes the eviction note for another plugin's cut when no plugin has written one and recall is there (%s)", async (format) => {
    const messages = turns(format, 10);
    const result = await compactorFor(format, [otherPlugin(), rolling(), fakeRecall()]).compact({ messages });
    const evicted = messages.slice(0, 8);
    expect(result.status).toBe("compacted");
    expect(result.event?.strategy).toBe("other");
    expect(result.summary).toBe(
      `[Context rolled: 8 messages evicted (${estimateTokens(builders(format).adapter)(evicted)} tokens). Full transcript available via memory_search. Evicted range: ${turnTime(0)} to ${turnTime(7)}. ran: ls]`,
    );
    expect(builders(format).adapter.readFacts(result.messages[0]).text).toBe(result.summary);
    expect(result.messages.slice(1)).toEqual(messages.slice(8));
    expect(result.warnings).toEqual([]);
  });

  it.each(FORMATS)("writes the fallback summary, with a warning, for another plugin's cut when no plugin has written one and recall is missing (%s)", async (format) => {
    const messages = turns(format, 10);
    // a window with room for the compactor's 4,000-token summary beside the kept messages
    const result = await compactorFor(format, [otherPlugin(), rolling()], { contextWindow: 10_000 }).compact({ messages });
    expect(result.status).toBe("compacted");
    expect(result.event?.strategy).toBe("other");
    expect(result.summary).toBe("summary of 8 messages");
    expect(builders(format).adapter.readFacts(result.messages[0]).kind).toBe("summary");
    expect(result.messages.slice(1)).toEqual(messages.slice(8));
    expect(result.warnings).toEqual(["[rolling] no plugin provides 'memory_search', so the messages cut by 'other' were summarised, not evicted."]);
  });

  it("drops another plugin's cut with no trace when no plugin has written its summary, recall is there and evictionNote is false", async () => {
    const messages = turns("pi", 10);
    const result = await compactorFor("pi", [otherPlugin(), rolling({ evictionNote: false }), fakeRecall()]).compact({ messages });
    expect(result.status).toBe("compacted");
    expect(result.summary).toBeNull();
    expect(result.messages).toEqual(messages.slice(8));
  });

  it("taps selectCut and summarize at the strategy stage with its name", () => {
    const compactor = compactorFor("pi", [rolling()]);
    for (const hook of [compactor.hooks.selectCut, compactor.hooks.summarize]) {
      expect(hook.taps.map((t) => [t.name, t.stage])).toEqual([[PLUGIN_NAME, STAGE_STRATEGY]]);
    }
  });

  it("does nothing with an empty conversation, with or without recall", async () => {
    for (const plugins of [[rolling(), fakeRecall()], [rolling()]]) {
      const result = await compactorFor("pi", plugins).compact({ messages: [] });
      expect(result.status).toBe("noop");
    }
  });

  it("evicts the previous eviction note first on the next roll, leaving a single note", async () => {
    const pi = builders("pi");
    const compactor = compactorFor("pi", [rolling({ minKeepMessages: 2 }), fakeRecall()]);
    const first = await compactor.compact({ messages: turns("pi", 10) });
    const grown = [...first.messages, ...turns("pi", 4, "later")];
    const second = await compactor.compact({ messages: grown });
    expect(second.status).toBe("compacted");
    expect(second.messages).not.toContain(first.messages[0]);
    const notes = second.messages.filter((m) => pi.adapter.readFacts(m).text.startsWith("[Context rolled: "));
    expect(notes).toHaveLength(1);
    expect(second.tokensAfter).toBeLessThanOrEqual(800);
  });

  it("names the files the evicted messages read or edited, and carries them into the next roll's note", async () => {
    const pi = builders("pi");
    /** Turns whose tool call reads or edits `files[t]`, with the read's output. */
    const fileTurns = (files: readonly string[], prefix: string) =>
      files.flatMap((path, t) => [
        pi.user(words(20, "ask")),
        pi.assistant("", [{ id: `${prefix}_${t}`, name: t % 2 === 0 ? "read" : "edit", args: t % 2 === 0 ? { path } : { path, edits: [{ oldText: "a", newText: "function nextStep() {}" }] } }]),
        ...pi.toolResults([{ id: `${prefix}_${t}`, text: words(40, "out") }]),
        pi.assistant(words(20, "reply")),
      ]);
    const compactor = compactorFor("pi", [rolling({ minKeepMessages: 2 }), fakeRecall()]);
    const firstFiles = Array.from({ length: 10 }, (_, i) => `src/first-${i}.ts`);
    const first = await compactor.compact({ messages: fileTurns(firstFiles, "a") });
    expect(first.status).toBe("compacted");
    const named = (summary: string | null | undefined) => firstFiles.concat(["src/later-0.ts", "src/later-1.ts"]).filter((f) => summary?.includes(f));
    const evictedFirst = named(first.summary);
    expect(evictedFirst.length).toBeGreaterThan(0);
    expect(first.summary).toMatch(/\. Files: src\/first-0\.ts, src\/first-1\.ts[^\]]*; declared: nextStep\]$/);

    const second = await compactor.compact({ messages: [...first.messages, ...fileTurns(["src/later-0.ts", "src/later-1.ts"], "b")] });
    expect(second.status).toBe("compacted");
    // The first note's files come first, in its order, then the newly evicted ones.
    expect(named(second.summary).slice(0, evictedFirst.length)).toEqual(evictedFirst);
    expect(named(second.summary).length).toBeGreaterThan(evictedFirst.length);
  });

  it("never mutates the input messages", async () => {
    const messages = turns("pi", 10);
    const copy = structuredClone(messages);
    await compactorFor("pi", [rolling(), fakeRecall()]).compact({ messages });
    expect(messages).toEqual(copy);
  });
});

describe("rolling: options", () => {
  it("exports the factory as default and named, making a plugin called 'rolling'", () => {
    expect(rollingDefault).toBe(rolling);
    expect(PLUGIN_NAME).toBe("rolling");
    expect(rolling().name).toBe("rolling");
  });

  it("rejects a misspelled option with COMPACTION_PLUGIN_OPTIONS_INVALID and a did-you-mean", () => {
    expect(() => rolling({ minKeepMesages: 3 } as never)).toThrow(
      expect.objectContaining({
        code: ErrorCodes.PLUGIN_OPTIONS_INVALID,
        plugin: "rolling",
        message: expect.stringMatching(/Did you mean 'minKeepMessages'\?/),
      }),
    );
  });

  it.each([
    ["targetUtilization", 0],
    ["targetUtilization", 1.5],
    ["targetUtilization", "0.8"],
    ["minKeepMessages", -1],
    ["minKeepMessages", 2.5],
    ["evictionNote", "yes"],
    ["recallTool", ""],
    ["recall", "maybe"],
    ["keepRecentTokens", -5],
  ])("rejects %s = %j, naming the option", (name, value) => {
    expect(() => rolling({ [name]: value } as never)).toThrow(
      expect.objectContaining({ code: ErrorCodes.PLUGIN_OPTIONS_INVALID, path: `/${name}` }),
    );
  });

  it("documents every option in the schema with a description and its default", () => {
    const properties = ROLLING_OPTIONS_SCHEMA.properties as Record<string, { description?: string; default?: unknown }>;
    expect(ROLLING_OPTIONS_SCHEMA.additionalProperties).toBe(false);
    for (const [name, property] of Object.entries(properties)) {
      expect(name).toMatch(/^[a-z][a-zA-Z]*$/);
      expect(property.description?.length).toBeGreaterThan(20);
    }
    expect(Object.fromEntries(Object.entries(properties).map(([k, p]) => [k, p.default]))).toEqual({
      targetUtilization: 0.8,
      minKeepMessages: 10,
      evictionNote: true,
      recallTool: "memory_search",
      recall: "auto",
      keepRecentTokens: 20000,
    });
  });

  it("keeps the schema plain JSON, so it can be copied into the core config schema", () => {
    expect(JSON.parse(JSON.stringify(ROLLING_OPTIONS_SCHEMA))).toEqual(ROLLING_OPTIONS_SCHEMA);
  });

  it("applies the documented defaults: 10 messages kept at least, 80% of the window", async () => {
    // 16 messages, 380 tokens in a 300-token window: the target is 240, and the newest 10 stay
    const messages = turns("pi", 4);
    const compactor = compactorFor("pi", [rolling(), fakeRecall()], { contextWindow: 300 });
    const result = await compactor.compact({ messages });
    const stamps = (list: readonly unknown[]) => list.map((m) => (m as { timestamp: number }).timestamp);
    expect(stamps(result.messages.slice(1))).toEqual(stamps(messages.slice(5)));
    expect(result.warnings[0]).toMatch(/over the target of 240/);
    // With the eviction note the ten are over the window: the core shrinks one of them to fit it.
    expect(compactor.tokens.total(result.messages)).toBeLessThanOrEqual(300);
    expect(result.shrunk ?? []).not.toEqual([]);
  });
});

it("works on long messages: a single huge old message is evicted first", async () => {
  const pi = builders("pi");
  const messages = [pi.user(words(2000)), ...turns("pi", 4)];
  const result = await compactorFor("pi", [rolling({ minKeepMessages: 4 }), fakeRecall()]).compact({ messages });
  expect(result.messages.slice(1)).toEqual(messages.slice(1));
});

describe("rolling against the provider's count of the context (pi usage)", () => {
  /** pi messages whose last assistant message carries the provider's usage figure `usage`. */
  function conversationWithUsage(usage: number) {
    const b = builders("pi");
    const messages: any[] = [];
    for (let i = 0; i < 12; i++) messages.push(b.user(`step ${i}: ${words(40)}`), b.assistant(`done ${i}: ${words(40)}`));
    const last = messages[messages.length - 1];
    messages[messages.length - 1] = { ...last, usage: { input: usage, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: usage } };
    return messages;
  }

  it("evicts when the provider counts the context over the target though our count of the messages is under it", async () => {
    const compactor = compactorFor("pi", [rolling({ minKeepMessages: 2 }), fakeRecall()]);
    const probe = conversationWithUsage(1);
    const counted = compactor.tokens.total(probe);
    // Window: our count alone is 70% of it (under the 80% target); the provider says 120%.
    const contextWindow = Math.ceil(counted / 0.7);
    const messages = conversationWithUsage(Math.ceil(contextWindow * 1.2));
    const result = await compactor.compact({ messages, contextWindow });
    expect(result.status).toBe("compacted");
    expect(result.cut?.layer).toBe("evict");
    // Kept messages, scaled as the provider counts them, meet the target.
    const scale = result.tokensBefore / counted;
    expect(compactor.tokens.total(result.messages) * scale).toBeLessThanOrEqual(Math.floor(contextWindow * 0.8) * 1.01);
  });
});
