import {
  type CompactionPlugin,
  ErrorCodes,
  lastUserIndex,
  SPLIT_TURN_HEADING,
  STAGE_AUGMENT,
  type SummarizeRequest,
  type Summarizer,
} from "@compaction/core";
import { FORMATS, builders, words } from "@compaction/core/testing";
import { describe, expect, it } from "vitest";
import { compactorFor, tokensOf } from "./test-support/compactor.js";
import { conversation, plainTurns } from "./test-support/conversation.js";

const SYSTEM = "You are a careful coding agent.";

/** The smallest window whose share (`ratio` of it) holds `tokens`. */
const windowFor = (tokens: number, ratio = 0.4) => Math.ceil(tokens / ratio);

function recorder(reply = (req: SummarizeRequest) => `${req.kind} of ${req.messages.length}`) {
  const calls: SummarizeRequest[] = [];
  const summarizer: Summarizer = { name: "recorder", summarize: async (req) => (calls.push(req), reply(req)) };
  return { calls, summarizer };
}

describe.each(FORMATS)("sliding-window on the %s adapter", (format) => {
  const b = builders(format);
  const hasSystem = b.system(SYSTEM) !== undefined;
  const factsOf = (message: unknown) => b.adapter.readFacts(message);

  it("keeps the newest messages that fit 40% of the window and summarises the rest into one message", async () => {
    const messages = conversation(b, plainTurns(6), SYSTEM);
    const compactor = compactorFor(format);
    const newest = messages.slice(-4);
    const result = await compactor.compact({ messages, contextWindow: windowFor(tokensOf(compactor, newest)) });
    expect(result.status).toBe("compacted");
    const head = hasSystem ? [messages[0]] : [];
    expect(result.messages.slice(0, head.length)).toEqual(head);
    expect(factsOf(result.messages[head.length]).kind).toBe("summary");
    expect(result.messages.slice(head.length + 1)).toEqual(newest);
    expect(result.messages.filter((m) => factsOf(m).kind === "summary")).toHaveLength(1);
  });

  it("writes a summary message whose text begins with 'Previously:'", async () => {
    const messages = conversation(b, plainTurns(6), SYSTEM);
    const compactor = compactorFor(format);
    const result = await compactor.compact({ messages, contextWindow: windowFor(tokensOf(compactor, messages.slice(-2))) });
    const summary = result.messages.find((m) => factsOf(m).kind === "summary");
    expect(factsOf(summary).text).toMatch(/^Previously:\n\n## Goal\n/);
    expect(result.summary).toBe(factsOf(summary).text);
  });

  it("begins the summary with a configured summaryPrefix instead", async () => {
    const messages = conversation(b, plainTurns(6), SYSTEM);
    const compactor = compactorFor(format, { options: { summaryPrefix: "Earlier in this session:" } });
    const result = await compactor.compact({ messages, contextWindow: windowFor(tokensOf(compactor, messages.slice(-2))) });
    expect(result.summary).toMatch(/^Earlier in this session:\n\n## Goal/);
  });

  it("keeps the share set by keepRatio", async () => {
    const messages = conversation(b, plainTurns(6), SYSTEM);
    const compactor = compactorFor(format, { options: { keepRatio: 0.2 } });
    const newest = messages.slice(-6);
    const result = await compactor.compact({ messages, contextWindow: windowFor(tokensOf(compactor, newest), 0.2) });
    expect(result.messages.slice(-6)).toEqual(newest);
    expect(result.cut?.firstKeptIndex).toBe(messages.length - 6);
  });

  it("shrinks the share to fit the budget when the reserve leaves less than keepRatio of the window", async () => {
    const messages = conversation(b, plainTurns(8), SYSTEM);
    const compactor = compactorFor(format);
    const budget = tokensOf(compactor, [...(hasSystem ? [messages[0]] : []), ...messages.slice(-2)]);
    const contextWindow = budget * 10; // 40% of it would keep far more than the budget
    const result = await compactor.compact({ messages, contextWindow, reserveTokens: contextWindow - budget });
    expect(result.status).toBe("compacted");
    expect(result.cut?.firstKeptIndex).toBe(messages.length - 2);
    expect(result.cut?.keptTokens).toBe(budget);
  });

  it("keeps the newest turn whole from its user message when it alone needs more than 40%, and warns", async () => {
    const messages = conversation(b, [...plainTurns(4), { userWords: 5, steps: [{ words: 400, calls: 0, resultWords: 0 }] }], SYSTEM);
    const compactor = compactorFor(format);
    const lastTurn = messages.slice(-2);
    const contextWindow = Math.ceil(tokensOf(compactor, lastTurn) / 0.6); // share < last turn <= window
    const result = await compactor.compact({ messages, contextWindow });
    expect(result.status).toBe("compacted");
    expect(result.messages.slice(-2)).toEqual(lastTurn);
    expect(factsOf(result.messages.at(-3)).kind).toBe("summary");
    expect(result.warnings).toContainEqual(expect.stringMatching(/^\[sliding-window\] The newest turn needs \d+ tokens, more than the \d+ tokens kept verbatim \(keepRatio 0.4\)/));
  });

  it(`never leaves fewer than ${hasSystem ? "3 messages (system, summary, last user message)" : "2 messages (summary, last user message)"}`, async () => {
    const messages = conversation(b, [...plainTurns(3), { userWords: 400, steps: [] }], SYSTEM);
    const compactor = compactorFor(format);
    const lastUser = messages.at(-1);
    const result = await compactor.compact({ messages, contextWindow: Math.ceil(tokensOf(compactor, [lastUser]) / 0.6) });
    expect(result.status).toBe("compacted");
    expect(result.messages.map((m) => factsOf(m).kind)).toEqual([...(hasSystem ? ["system"] : []), "summary", "user"]);
    expect(result.messages.at(-1)).toBe(lastUser);
    expect(result.warnings).toContainEqual(expect.stringMatching(/^\[sliding-window\] The newest turn needs/));
  });

  it("preserves a pinned message ahead of the summary", async () => {
    const turns = plainTurns(6).map((t, i) => (i === 1 ? { ...t, pinned: true } : t));
    const messages = conversation(b, turns, SYSTEM);
    const pinned = messages.find((m) => factsOf(m).pinned);
    const compactor = compactorFor(format);
    const result = await compactor.compact({ messages, contextWindow: windowFor(tokensOf(compactor, messages.slice(-2))) });
    const at = result.messages.indexOf(pinned);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(factsOf(result.messages[at + 1]).kind).toBe("summary");
  });

  it("never separates a tool call from its result, for any window", async () => {
    const turns = Array.from({ length: 5 }, () => ({
      userWords: 10,
      steps: [
        { words: 5, calls: 2, resultWords: 40 },
        { words: 5, calls: 1, resultWords: 10 },
        { words: 10, calls: 0, resultWords: 0 },
      ],
    }));
    const messages = conversation(b, turns, SYSTEM);
    const compactor = compactorFor(format);
    const total = tokensOf(compactor, messages);
    for (let contextWindow = 50; contextWindow <= total * 3; contextWindow += 17) {
      const result = await compactor.compact({ messages, contextWindow });
      const calls = new Set(result.messages.flatMap((m) => factsOf(m).toolCalls.map((c) => c.id)));
      const answered = new Set(result.messages.flatMap((m) => factsOf(m).toolResultIds));
      expect([...answered].filter((id) => !calls.has(id))).toEqual([]);
      expect([...calls].filter((id) => !answered.has(id))).toEqual([]);
    }
  });

  it("summarises the early part of an older turn separately when the share ends inside it", async () => {
    const steps = [1, 2, 3].map(() => ({ words: 30, calls: 0, resultWords: 0 }));
    const messages = conversation(b, [{ userWords: 10, steps }, { userWords: 10, steps }, { userWords: 10, steps }], SYSTEM);
    // keepRatio 0.01: the same newest six messages, in a window with room for both summaries in full
    const compactor = compactorFor(format, { options: { keepRatio: 0.01 } });
    const result = await compactor.compact({ messages, contextWindow: windowFor(tokensOf(compactor, messages.slice(-6)), 0.01) });
    expect(result.cut?.isSplitTurn).toBe(true);
    expect(result.warnings).toEqual([]);
    expect(result.summary).toMatch(/^Previously:\n\n## Goal\n- turn 0: ask/);
    expect(result.summary).toContain(`\n\n---\n\n${SPLIT_TURN_HEADING}\n\n## Original Request\nturn 1: ask`);
  });

  it("returns the input untouched when every message fits the share", async () => {
    const messages = conversation(b, plainTurns(3), SYSTEM);
    const compactor = compactorFor(format);
    const result = await compactor.compact({ messages, contextWindow: windowFor(tokensOf(compactor, messages)) });
    expect(result.status).toBe("noop");
    expect(result.messages).toBe(messages);
  });

  it("returns the input untouched when there is only one turn, however large", async () => {
    const messages = conversation(b, [{ userWords: 10, steps: [{ words: 300, calls: 1, resultWords: 300 }] }], SYSTEM);
    const compactor = compactorFor(format);
    const result = await compactor.compact({ messages, contextWindow: tokensOf(compactor, messages) + 10 });
    expect(result.status).toBe("noop");
    expect(result.messages).toBe(messages);
  });

  // Issue 10 changed these on purpose: the newest turn is never split; what it cannot keep whole is shrunk to head and tail.
  it("splits a newest turn that alone exceeds the budget: its request ahead of the summary, its early part summarised, its newest messages kept", async () => {
    const messages = conversation(b, [...plainTurns(3), { userWords: 10, steps: [{ words: 400, calls: 1, resultWords: 400 }, { words: 30, calls: 0, resultWords: 0 }] }], SYSTEM);
    const compactor = compactorFor(format);
    const lastUser = lastUserIndex(messages.map((m) => factsOf(m)));
    const contextWindow = tokensOf(compactor, messages.slice(lastUser)) - 1;
    const result = await compactor.compact({ messages, contextWindow });
    expect(result.status).toBe("compacted");
    expect(result.cut?.firstKeptIndex).toBe(messages.length - 1);
    expect(result.cut?.isSplitTurn).toBe(true);
    expect(result.cut?.turnStartIndex).toBe(lastUser);
    expect(result.cut?.preservedIndices).toContain(lastUser);
    expect(result.messages).toContain(messages[lastUser]);
    expect(result.messages.at(-1)).toBe(messages.at(-1));
    expect(result.shrunk ?? []).toEqual([]);
    expect(result.warnings.some((w) => /^\[sliding-window\] The newest turn needs \d+ tokens, more than the \d+ tokens the budget \(\d+\) leaves beside the summary; it is kept from its user message, and the core fits it/.test(w))).toBe(true);
    expect(result.warnings.some((w) => /^\[core\] The cut chosen by 'sliding-window' keeps \d+ tokens, more than the budget of \d+; it was moved from message \d+ to \d+ \(inside the newest turn, its request kept ahead of the summary\)/.test(w))).toBe(true);
    expect(tokensOf(compactor, result.messages)).toBeLessThanOrEqual(contextWindow);
  });

  it("splits such a turn for a host that records only summary + suffix too, its request carried in the summary", async () => {
    const messages = conversation(b, [...plainTurns(3), { userWords: 10, steps: [{ words: 400, calls: 1, resultWords: 400 }, { words: 30, calls: 0, resultWords: 0 }] }], SYSTEM);
    const compactor = compactorFor(format);
    const lastUser = lastUserIndex(messages.map((m) => factsOf(m)));
    const contextWindow = tokensOf(compactor, messages.slice(lastUser)) - 1;
    const result = await compactor.compact({ messages, contextWindow, suffixOnly: true });
    expect(result.status).toBe("compacted");
    expect(result.cut?.firstKeptIndex).toBe(messages.length - 1);
    expect(result.cut?.compactedIndices).toContain(lastUser);
    expect(result.summary).toContain(factsOf(messages[lastUser]).text.trim());
    // Summary + an unchanged suffix, as a pi session file records it.
    expect(result.messages.slice(-1)).toEqual(messages.slice(-1));
    expect(result.warnings.some((w) => w.includes("(inside the newest turn, its request carried in the summary)"))).toBe(true);
  });

  it("keeps the newest turn whole when it fits the budget alone but not beside the earlier summary", async () => {
    const first = conversation(b, plainTurns(6), SYSTEM);
    const compactor = compactorFor(format, { options: { keepRatio: 0.05 } });
    const once = await compactor.compact({ messages: first, contextWindow: windowFor(tokensOf(compactor, first.slice(-2)), 0.05) });
    expect(once.status).toBe("compacted");
    const turn = conversation(b, [{ userWords: 10, steps: [{ words: 300, calls: 1, resultWords: 300 }, { words: 300, calls: 1, resultWords: 300 }, { words: 20, calls: 0, resultWords: 0 }] }]);
    const messages = [...once.messages, ...turn];
    const summaryTokens = tokensOf(compactor, once.messages.filter((m) => factsOf(m).kind === "summary"));
    const contextWindow = tokensOf(compactor, turn) + Math.floor(summaryTokens / 2);
    const again = await compactor.compact({ messages, contextWindow });
    expect(again.status).toBe("compacted");
    expect(again.cut?.isSplitTurn).toBe(false);
    expect(again.messages).toContain(turn[0]);
    expect(tokensOf(compactor, again.messages)).toBeLessThanOrEqual(contextWindow);
  });

  it("shrinks the newest message to head and tail when even it alone exceeds the budget", async () => {
    const messages = conversation(b, [...plainTurns(3), { userWords: 10, steps: [{ words: 400, calls: 0, resultWords: 0 }] }], SYSTEM);
    const compactor = compactorFor(format);
    const contextWindow = tokensOf(compactor, messages.slice(-1)) - 1;
    const result = await compactor.compact({ messages, contextWindow });
    expect(result.status).toBe("compacted");
    expect(result.shrunk?.map((x) => x.what)).toContain("message");
    expect(tokensOf(compactor, result.messages)).toBeLessThanOrEqual(contextWindow);
  });

  it("updates the earlier summary on the next compaction, with the prefix once", async () => {
    // A small keepRatio keeps the same two messages in a window large enough that the budget
    // never limits the summary (the compactor's 4,000 tokens) beside them.
    const compactor = compactorFor(format, { options: { keepRatio: 0.005 } });
    const first = conversation(b, plainTurns(6), SYSTEM);
    const contextWindow = windowFor(tokensOf(compactor, first.slice(-2)), 0.005);
    const once = await compactor.compact({ messages: first, contextWindow });
    const more = [b.user("deploy to staging"), b.assistant("deployed"), b.user("check the logs"), b.assistant(words(30, "clean"))];
    const twice = await compactor.compact({ messages: [...once.messages, ...more], contextWindow });
    expect(twice.status).toBe("compacted");
    expect([...once.warnings, ...twice.warnings]).toEqual([]); // no summary was limited by the budget
    expect(twice.summary?.match(/Previously:/g)).toHaveLength(1);
    expect(once.messages.slice(-2)).toEqual(first.slice(-2));
    expect(twice.messages.slice(-2)).toEqual(more.slice(-2));
    expect(twice.summary).toContain("turn 0: ask"); // the first summary's goal survives the update
    expect(twice.summary).toContain("deploy to staging"); // and the newly compacted turn is added
    expect(twice.messages.filter((m) => factsOf(m).kind === "summary")).toHaveLength(1);
  });

  it("keeps the prefix's cost inside the budget when the summary uses all its room", async () => {
    // A summarizer that writes exactly as many tokens (chars/4) as it is allowed.
    const greedy = { name: "greedy", summarize: async (req: { maxTokens: number }) => "a".repeat(req.maxTokens * 4) };
    const messages = conversation(b, plainTurns(6), SYSTEM);
    const compactor = compactorFor(format, { summarizer: greedy as never, summaryMaxTokens: 100_000, options: { keepRatio: 0.1 } });
    const contextWindow = tokensOf(compactor, messages);
    const result = await compactor.compact({ messages, contextWindow });
    expect(result.status).toBe("compacted");
    expect(result.summary?.startsWith("Previously:")).toBe(true);
    expect(result.tokensAfter).toBeLessThanOrEqual(contextWindow);
    expect(result.warnings.filter((w) => w.includes("still over the budget"))).toEqual([]);
  });

  it("asks for summaryMaxTokens tokens, else for the compactor's summary length", async () => {
    const messages = conversation(b, plainTurns(6), SYSTEM);
    for (const [options, expected] of [[{ summaryMaxTokens: 123 }, 123], [{}, 777]] as const) {
      const { calls, summarizer } = recorder();
      // keepRatio 0.01: the newest two messages again, in a window with room for a 777-token summary
      const compactor = compactorFor(format, { options: { ...options, keepRatio: 0.01 }, summarizer, summaryMaxTokens: 777 });
      const result = await compactor.compact({ messages, contextWindow: windowFor(tokensOf(compactor, messages.slice(-2)), 0.01) });
      expect(result.cut?.firstKeptIndex).toBe(messages.length - 2);
      expect(calls.map((c) => c.maxTokens)).toEqual([expected]);
    }
  });

  it("summarises a long history in chunks of chunkTokens, each updating the summary before", async () => {
    const messages = conversation(b, plainTurns(6), SYSTEM);
    const { calls, summarizer } = recorder((req) => `part ${req.previousSummary ?? "none"}`);
    const compactor = compactorFor(format, { options: { chunkTokens: 1 }, summarizer });
    const result = await compactor.compact({ messages, contextWindow: windowFor(tokensOf(compactor, messages.slice(-2))) });
    expect(calls).toHaveLength(10); // one message per chunk: the 10 compacted messages
    expect(result.summary).toBe(`Previously: ${"part ".repeat(10)}none`);
  });

  it("fails with the input untouched instead of writing a bare prefix when the summarizer returns nothing", async () => {
    const messages = conversation(b, plainTurns(6), SYSTEM);
    const { summarizer } = recorder(() => "");
    const compactor = compactorFor(format, { summarizer });
    const result = await compactor.compact({ messages, contextWindow: windowFor(tokensOf(compactor, messages.slice(-2))) });
    expect(result.status).toBe("failed");
    expect(result.error?.code).toBe(ErrorCodes.SUMMARIZER_FAILED);
    expect(result.messages).toBe(messages);
  });

  /** A plugin whose cut comes first; it writes `summary` before the strategies when given, and always tags the draft afterwards. */
  function otherPlugin(summary?: string): CompactionPlugin {
    return {
      name: "other",
      apply(c) {
        c.hooks.selectCut.tap({ name: "other", stage: -1 }, () => ({ firstKeptIndex: hasSystem ? 5 : 4 }));
        if (summary !== undefined) c.hooks.summarize.tap({ name: "other", stage: -1 }, () => ({ text: summary, kind: "summary" as const }));
        c.hooks.summarize.tap({ name: "other", stage: STAGE_AUGMENT }, (draft) => ({ ...draft, text: `${draft.text}[other]` }));
      },
    };
  }

  it("leaves another plugin's cut alone when that plugin already wrote its summary", async () => {
    const messages = conversation(b, plainTurns(6), SYSTEM);
    const { calls, summarizer } = recorder();
    const compactor = compactorFor(format, { plugins: [otherPlugin("other summary")], summarizer });
    const result = await compactor.compact({ messages, contextWindow: 100_000 });
    expect(result.summary).toBe("other summary[other]");
    expect(result.event?.strategy).toBe("other");
    expect(calls).toHaveLength(0);
  });

  it("writes the summary of another plugin's cut when no plugin has written one", async () => {
    const messages = conversation(b, plainTurns(6), SYSTEM);
    const { calls, summarizer } = recorder();
    const compactor = compactorFor(format, { plugins: [otherPlugin()], summarizer });
    const result = await compactor.compact({ messages, contextWindow: 100_000 });
    expect(result.status).toBe("compacted");
    expect(result.event?.strategy).toBe("other");
    expect(calls.map((c) => [c.kind, c.messages.length])).toEqual([["history", 4]]);
    expect(result.summary).toBe("Previously: history of 4[other]");
  });

  it("reports itself as the strategy, with layer 'summarize' and a reason", async () => {
    const messages = conversation(b, plainTurns(6), SYSTEM);
    const compactor = compactorFor(format);
    const contextWindow = windowFor(tokensOf(compactor, messages.slice(-2)));
    const result = await compactor.compact({ messages, contextWindow });
    expect(result.event?.strategy).toBe("sliding-window");
    expect(result.event?.layer).toBe("summarize");
    expect(result.cut?.reason).toBe(`kept the newest messages within ${Math.floor(contextWindow * 0.4)} tokens (0.4 of the window)`);
  });
});

describe("sliding-window with an OpenAI system prompt", () => {
  const b = builders("openai");

  it("keeps the system prompt first, ahead of the summary", async () => {
    const messages = conversation(b, plainTurns(6), SYSTEM);
    const compactor = compactorFor("openai");
    const result = await compactor.compact({ messages, contextWindow: windowFor(tokensOf(compactor, messages.slice(-2))) });
    expect(result.messages[0]).toBe(messages[0]);
    expect(b.adapter.readFacts(result.messages[0]).text).toBe(SYSTEM);
    expect(b.adapter.readFacts(result.messages[1]).kind).toBe("summary");
  });

  it("does not count the system prompt against the share", async () => {
    const messages = [b.system(words(200)), ...conversation(b, plainTurns(6))];
    const compactor = compactorFor("openai", { options: { keepRatio: 0.1 } });
    const newest = messages.slice(-4);
    const contextWindow = windowFor(tokensOf(compactor, newest), 0.1);
    expect(tokensOf(compactor, [messages[0]])).toBeGreaterThan(contextWindow * 0.1);
    const result = await compactor.compact({ messages, contextWindow });
    expect(result.messages).toEqual([messages[0], expect.anything(), ...newest]);
  });
});
