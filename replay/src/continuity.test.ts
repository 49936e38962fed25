import { createPiAdapter, createTiktokenCounter, FactsCache, MessageTokenCounter, type PiMessage } from "@compaction/core";
import { ALL_FIXTURES, loadFixtureAsPi, loadPiMessages } from "@compaction/fixtures";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { chooseCutPoints, ContinuityProbe, neededFromMemory, scoreContext } from "./continuity.js";
import { commandsOf, contextText, identifiersOf } from "./continuity-identifiers.js";

const tokens = new MessageTokenCounter(new FactsCache(createPiAdapter()), createTiktokenCounter());
afterAll(() => tokens.counter.dispose?.());
const factsOf = (m: PiMessage) => tokens.facts.of(m);
const tokensOf = (m: PiMessage) => tokens.count(m);

let clock = 0;
const user = (text: string): PiMessage => ({ role: "user", content: text, timestamp: ++clock }) as PiMessage;
const assistant = (text: string, call?: { name: string; arguments: Record<string, unknown> }): PiMessage =>
  ({
    role: "assistant",
    content: [{ type: "text", text }, ...(call === undefined ? [] : [{ type: "toolCall", id: `c${clock}`, name: call.name, arguments: call.arguments }])],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "m",
    stopReason: call === undefined ? "stop" : "toolUse",
    timestamp: ++clock,
  }) as unknown as PiMessage;
const toolResult = (text: string): PiMessage =>
  ({ role: "toolResult", toolCallId: `c${clock}`, toolName: "bash", content: [{ type: "text", text }], isError: false, timestamp: ++clock }) as PiMessage;

describe("identifiersOf", () => {
  it.each([
    ["a path with a file name", "edit src/compactor/result.ts now", "src/compactor/result.ts"],
    ["an absolute path", "see /home/me/project/README for it", "/home/me/project/README"],
    ["a bare file name", "update package.json please", "package.json"],
    ["a camelCase name", "rename tokensBefore first", "tokensBefore"],
    ["a PascalCase name", "the MessageFacts type", "MessageFacts"],
    ["a snake_case name", "set keep_recent_tokens", "keep_recent_tokens"],
    ["an error code name", "throws COMPACTION_CONFIG_INVALID", "COMPACTION_CONFIG_INVALID"],
    ["a long flag", "run it with --dry-run", "--dry-run"],
    ["a commit hash", "reverted 64f203a yesterday", "64f203a"],
    ["an errno name", "failed with ENOENT", "ENOENT"],
    ["a compiler code", "error TS2345: argument", "TS2345"],
    ["a one-word code span", "the `compact` method", "compact"],
  ])("finds %s", (_name, text, identifier) => {
    expect(identifiersOf(text)).toContain(identifier);
  });

  it.each([
    ["plain words", "please keep going with the plan"],
    ["a slash between two words", "input/output and and/or"],
    ["a version number", "version 1.2.3 was fine"],
    ["a hex-looking word without digits", "the facade is deadbeef"],
    ["prose in backticks", "the `inline code` style"],
    ["a sentence end glued to the next word", "it is done.Then we go"],
  ])("finds nothing in %s", (_name, text) => {
    expect(identifiersOf(text)).toEqual([]);
  });
});

describe("commandsOf", () => {
  it("takes each command's program and subcommand, past prefixes, and the script after `run`", () => {
    expect(commandsOf("cd core && FOO=1 npm run build 2>&1 | tail -5; git diff --stat")).toEqual(["npm run build", "git diff"]);
  });
  it("ignores a second word that is a flag or a path", () => {
    expect(commandsOf("ls -la; cat ./a.txt")).toEqual([]);
  });
});

describe("neededFromMemory", () => {
  const history = [
    user("Fix the budget check in core/src/fit-budget.ts, it fails with COMPACTION_BUDGET_UNMET."),
    assistant("Reading it.", { name: "read", arguments: { path: "core/src/fit-budget.ts" } }),
    toolResult("export function fitBudget(messages) { return countedBudget(messages) }"),
  ];

  it("counts what the agent uses next that occurs before the cut and nothing after the cut showed", () => {
    const next = [assistant("The fitBudget function calls countedBudget; I will change fitBudget.", { name: "edit", arguments: { path: "core/src/fit-budget.ts" } })];
    expect(neededFromMemory([...history, ...next], history.length, { factsOf }).sort()).toEqual(["core/src/fit-budget.ts", "countedBudget", "fit-budget.ts", "fitBudget"].sort());
  });

  it("does not count what a tool result or user message after the cut shows again before the agent uses it", () => {
    const next = [user("Also check countedBudget."), assistant("Looking at countedBudget and fitBudget.")];
    expect(neededFromMemory([...history, ...next], history.length, { factsOf })).toEqual(["fitBudget"]);
  });

  it("does not count what never occurred before the cut", () => {
    const next = [assistant("I will add shrinkToBudget in core/src/shrink.ts.")];
    expect(neededFromMemory([...history, ...next], history.length, { factsOf })).toEqual([]);
  });

  it("reads only `lookahead` messages after the cut", () => {
    const next = [assistant("Thinking."), assistant("Now fitBudget.")];
    expect(neededFromMemory([...history, ...next], history.length, { factsOf, lookahead: 1 })).toEqual([]);
    expect(neededFromMemory([...history, ...next], history.length, { factsOf, lookahead: 2 })).toEqual(["fitBudget"]);
  });

  it("refuses a cut outside the messages, saying what it expected", () => {
    expect(() => neededFromMemory(history, 0, { factsOf })).toThrow(/expected a cut index from 1 to 3/);
  });
});

describe("scores (generated sessions)", () => {
  const names = ["fitBudget", "countedBudget", "src/a/b.ts", "MessageFacts", "--dry-run", "64f203a", "keep_recent", "ENOENT"];
  const message = fc.tuple(fc.constantFrom("user", "assistant", "tool"), fc.subarray(names)).map(([role, used]) => {
    const text = `words ${used.join(" and ")}`;
    return role === "user" ? user(text) : role === "assistant" ? assistant(text) : toolResult(text);
  });
  const session = fc.array(message, { minLength: 2, maxLength: 30 }).chain((messages) => fc.tuple(fc.constant(messages), fc.integer({ min: 1, max: messages.length })));

  it("the whole history before the cut holds everything needed, and nothing holds nothing", () => {
    fc.assert(
      fc.property(session, ([messages, cut]) => {
        const needed = neededFromMemory(messages, cut, { factsOf });
        const point = { index: cut, historyTokens: 0, needed, longMemory: [] };
        const before = contextText(messages.slice(0, cut).map(factsOf));
        expect(scoreContext(point, before).kept).toBe(needed.length);
        expect(scoreContext(point, "").kept).toBe(0);
        for (const identifier of needed) expect(before).toContain(identifier);
      }),
    );
  });

  it("adding messages to a context never lowers its score", () => {
    fc.assert(
      fc.property(session, fc.integer({ min: 0, max: 30 }), ([messages, cut], from) => {
        const needed = neededFromMemory(messages, cut, { factsOf });
        const point = { index: cut, historyTokens: 0, needed, longMemory: [] };
        const start = Math.min(from, cut);
        const smaller = scoreContext(point, contextText(messages.slice(start, cut).map(factsOf)));
        const larger = scoreContext(point, contextText(messages.slice(Math.max(0, start - 3), cut).map(factsOf)));
        expect(larger.kept).toBeGreaterThanOrEqual(smaller.kept);
      }),
    );
  });
});

describe("ContinuityProbe on the real transcripts", () => {
  const messages = loadPiMessages("pi-large-session.jsonl");
  const window = 64_000;
  const probe = ContinuityProbe.of(messages, { factsOf, tokensOf, window });

  it("chooses the same cut points every time, each past the window and needing something", () => {
    expect(chooseCutPoints(messages, { factsOf, tokensOf, window })).toEqual(probe.cuts.map((cut) => cut.index));
    expect(probe.cuts.length).toBeGreaterThanOrEqual(4);
    for (const cut of probe.cuts) {
      expect(cut.historyTokens).toBeGreaterThan(window);
      expect(cut.needed.length).toBeGreaterThan(0);
      expect(messages[cut.index]?.role).toBe("assistant");
    }
  });

  it("chooses the cut points past pastTokens when given, below the window where a host compacts at its threshold", () => {
    const pastTokens = 40_000;
    const early = ContinuityProbe.of(messages, { factsOf, tokensOf, window, pastTokens, cutPoints: 24 }).cuts;
    expect(early.length).toBeGreaterThan(probe.cuts.length);
    for (const cut of early) expect(cut.historyTokens).toBeGreaterThan(pastTokens);
    // Some lie between the threshold and the window, which the window's own cut points never reach.
    expect(early.some((cut) => cut.historyTokens <= window)).toBe(true);
    expect(Math.min(...early.map((cut) => cut.index))).toBeLessThan(Math.min(...probe.cuts.map((cut) => cut.index)));
    expect(() => ContinuityProbe.of(messages, { factsOf, tokensOf, window, pastTokens: -1 })).toThrow(/pastTokens of at least 0/);
  });

  it("scores the whole history at 100% and the newest quarter of the window at exactly the short-memory part", () => {
    for (const cut of probe.cuts) {
      expect(probe.score(cut, messages.slice(0, cut.index)).kept).toBe(cut.needed.length);
      let start = cut.index;
      let held = 0;
      while (start > 0 && held + tokensOf(messages[start - 1] as PiMessage) <= window / 4) held += tokensOf(messages[--start] as PiMessage);
      const tail = probe.score(cut, messages.slice(start, cut.index));
      expect(tail.kept).toBe(cut.needed.length - cut.longMemory.length);
      expect(tail.longMemoryKept).toBe(0);
    }
  });

  it("records, during a replay, the request sent at each cut point and nothing else", () => {
    const recorder = probe.recorder();
    const first = probe.cuts[0]!;
    recorder.onCall({ index: first.index - 1, request: [], cost: { messages: 0, tokens: 0, cachedMessages: 0, cachedTokens: 0, firstChanged: null }, compactions: 0 });
    recorder.onCall({ index: first.index, request: messages.slice(0, first.index), cost: { messages: 0, tokens: 0, cachedMessages: 0, cachedTokens: 0, firstChanged: null }, compactions: 0 });
    expect(recorder.scores()).toHaveLength(1);
    expect(recorder.totals().share).toBe(1);
  });

  it("finds cut points with needs on every real transcript (as pi messages)", () => {
    for (const file of ALL_FIXTURES) {
      const cuts = ContinuityProbe.of(loadFixtureAsPi(file, { usage: false }), { factsOf, tokensOf, window }).cuts;
      expect(cuts.length, file).toBeGreaterThan(0);
    }
  });

  it("refuses a window that is not positive and a cut that is not one of its cut points", () => {
    expect(() => ContinuityProbe.of(messages, { factsOf, tokensOf, window: 0 })).toThrow(/positive context window/);
    expect(() => probe.score(1, [])).toThrow(/not one of the probe's cut points/);
  });
});
