import { AsyncSeriesBailHook, AsyncSeriesHook, AsyncSeriesWaterfallHook, SyncWaterfallHook } from "tapable";
import { describe, expect, it } from "vitest";
import { ErrorCodes } from "../errors.js";
import { SHRINK_MARKER_PATTERN } from "../shrink/head-and-tail.js";
import { createPiAdapter, type PiMessage } from "../messages/pi-adapter.js";
import { summaryHasContent } from "../summarizer/has-content.js";
import type { Summarizer } from "../summarizer/summarizer.js";
import { assistant, summaryMessage, toolResult, user, words } from "../testing/pi-messages.js";
import { createEstimateCounter } from "../tokens/estimate-counter.js";
import { Compactor } from "./compactor.js";
import { CARRIED_REQUEST_HEADING } from "./carry-request.js";
import { MIN_SUMMARY_ROOM } from "./fit-budget.js";
import { MIN_KEPT_SHARE } from "./usable-window.js";
import { SPLIT_TURN_SEPARATOR, summarizeCut } from "./summarize-cut.js";
import type { CompactionPlugin } from "./plugin.js";
import { STAGE_AUGMENT, STAGE_PRUNE, STAGE_STRATEGY } from "./stages.js";

const fixedSummarizer: Summarizer = {
  name: "fixed",
  summarize: async (req) => `summary of ${req.messages.length} messages`,
};

/**
 * A summarizer that uses the length it is asked for and keeps to it, as a real one does: the
 * messages' words, eight to a line, as many lines as fit (nothing when not even one does).
 */
const budgetedSummarizer: Summarizer = {
  name: "budgeted",
  summarize: async (req) => {
    const words = req.messages.flatMap((m) => m.text.split(/\s+/).filter(Boolean));
    const lines: string[] = [];
    for (let i = 0; i < words.length; i += 8) {
      const next = [...lines, `- ${words.slice(i, i + 8).join(" ")}`];
      if (req.counter.count(next.join("\n")) > req.maxTokens) break;
      lines.push(next[next.length - 1] as string);
    }
    return lines.join("\n");
  },
};

function compactor(plugins: CompactionPlugin[], summarizer: Summarizer = fixedSummarizer) {
  return new Compactor<PiMessage>({
    adapter: createPiAdapter(),
    tokenCounter: createEstimateCounter(),
    summarizer,
    plugins,
    contextWindow: 100_000,
    // The budgets these tests state are the whole window.
    reserveTokens: 0,
  });
}

/** A plugin that cuts at a fixed index and summarises with the run's summarizer. */
function cutAt(index: number, name = "cut-at"): CompactionPlugin {
  return {
    name,
    apply(c) {
      c.hooks.selectCut.tapPromise(name, async () => ({ firstKeptIndex: index }));
      c.hooks.summarize.tapPromise(name, async (draft, run) => ({
        ...draft,
        text: await run.summarize(run.historyMessages(), { maxTokens: 500 }),
      }));
    },
  };
}

/** A plugin that cuts at a fixed index and writes the summary as pi does (summarizeCut, within the room left). */
function summarizingAt(index: number): CompactionPlugin {
  return {
    name: "summarizing",
    apply(c) {
      c.hooks.selectCut.tap("summarizing", () => ({ firstKeptIndex: index }));
      c.hooks.summarize.tapPromise("summarizing", async (draft, run) => ({ ...draft, text: await summarizeCut(run) }));
    },
  };
}

/** A plugin that records how many history and turn-prefix messages the run gives its summarize tap. */
function inspectSplit(): CompactionPlugin & { prefix: number; history: number } {
  const plugin = {
    name: "inspect",
    prefix: -1,
    history: -1,
    apply: (c: Compactor<PiMessage>) =>
      c.hooks.summarize.tap({ name: "inspect", stage: STAGE_AUGMENT }, (draft, run) => {
        plugin.prefix = run.turnPrefixMessages().length;
        plugin.history = run.historyMessages().length;
        return draft;
      }),
  };
  return plugin as CompactionPlugin & { prefix: number; history: number };
}

/**
 * A request long enough that a summary of it alone is shorter: the core refuses a compaction that
 * would not make the context smaller, so a test that compacts only the first request uses this.
 */
const LONG_REQUEST = `first request: ${words(60)}`;

function conversation(firstRequest = "first request"): PiMessage[] {
  return [
    user(firstRequest),
    assistant("working", [{ id: "c1" }]),
    toolResult("c1", "output one"),
    assistant("done with first"),
    user("second request"),
    assistant("on it", [{ id: "c2" }]),
    toolResult("c2", "output two"),
    assistant("done with second"),
  ];
}

describe("Compactor hooks", () => {
  it("declares the four run hooks and the send-time hook with their contract kinds in a frozen object", () => {
    // tapable builds hooks with factory functions that set `constructor`, so instanceof does not apply
    const c = compactor([]);
    expect(Object.isFrozen(c.hooks)).toBe(true);
    expect(Object.keys(c.hooks)).toEqual(["beforeCompact", "selectCut", "summarize", "afterCompact", "shapeRequest"]);
    expect(c.hooks.beforeCompact.constructor).toBe(AsyncSeriesHook);
    expect(c.hooks.selectCut.constructor).toBe(AsyncSeriesBailHook);
    expect(c.hooks.summarize.constructor).toBe(AsyncSeriesWaterfallHook);
    expect(c.hooks.afterCompact.constructor).toBe(AsyncSeriesHook);
    expect(c.hooks.shapeRequest.constructor).toBe(SyncWaterfallHook);
  });

  it("runs taps by stage, not by the order plugins were applied", async () => {
    const order: string[] = [];
    const late: CompactionPlugin = {
      name: "late",
      apply: (c) => c.hooks.beforeCompact.tap({ name: "late", stage: STAGE_AUGMENT }, () => void order.push("late")),
    };
    const early: CompactionPlugin = {
      name: "early",
      apply: (c) => c.hooks.beforeCompact.tap({ name: "early", stage: STAGE_PRUNE }, () => void order.push("early")),
    };
    const middle: CompactionPlugin = {
      name: "middle",
      apply: (c) => c.hooks.beforeCompact.tap({ name: "middle", stage: STAGE_STRATEGY }, () => void order.push("middle")),
    };
    await compactor([late, middle, early]).compact({ messages: conversation() });
    expect(order).toEqual(["early", "middle", "late"]);
  });

  it("lets the first plugin that returns a cut win selectCut and skips the rest", async () => {
    let secondRan = false;
    const second: CompactionPlugin = {
      name: "second",
      apply: (c) =>
        c.hooks.selectCut.tap("second", () => {
          secondRan = true;
          return { firstKeptIndex: 1 };
        }),
    };
    const result = await compactor([cutAt(4, "first"), second]).compact({ messages: conversation() });
    expect(result.status).toBe("compacted");
    expect(secondRan).toBe(false);
    expect(result.cut?.firstKeptIndex).toBe(4);
    expect(result.cut?.selectedBy).toBe("first");
    expect(result.event?.strategy).toBe("first");
  });

  it("passes a plugin that returns no cut over to the next one", async () => {
    const abstain: CompactionPlugin = { name: "abstain", apply: (c) => c.hooks.selectCut.tap("abstain", () => undefined) };
    const result = await compactor([abstain, cutAt(4, "decider")]).compact({ messages: conversation() });
    expect(result.cut?.selectedBy).toBe("decider");
  });

  it("passes the summary draft down the waterfall, each plugin seeing the previous one's text", async () => {
    const seen: string[] = [];
    const append = (name: string, stage: number): CompactionPlugin => ({
      name,
      apply: (c) =>
        c.hooks.summarize.tap({ name, stage }, (draft) => {
          seen.push(draft.text);
          return { ...draft, text: `${draft.text}[${name}]` };
        }),
    });
    const result = await compactor([append("b", STAGE_AUGMENT), cutAt(4), append("a", STAGE_AUGMENT)]).compact({
      messages: conversation(),
    });
    expect(seen).toEqual(["summary of 4 messages", "summary of 4 messages[b]"]);
    expect(result.summary).toBe("summary of 4 messages[b][a]");
  });

  it("returns the input untouched and names the plugin when beforeCompact cancels", async () => {
    const input = conversation();
    const veto: CompactionPlugin = { name: "veto", apply: (c) => c.hooks.beforeCompact.tap("veto", (run) => run.cancel("not now")) };
    const result = await compactor([veto, cutAt(4)]).compact({ messages: input });
    expect(result.status).toBe("cancelled");
    expect(result.messages).toBe(input);
    expect(result.reason).toContain("veto");
    expect(result.reason).toContain("not now");
    expect(result.error?.code).toBe(ErrorCodes.CANCELLED);
  });

  it("returns the input untouched when the AbortSignal is aborted", async () => {
    const input = conversation();
    const controller = new AbortController();
    const aborter: CompactionPlugin = {
      name: "aborter",
      apply: (c) => c.hooks.selectCut.tap({ name: "aborter", stage: -1 }, () => void controller.abort()),
    };
    const result = await compactor([aborter, cutAt(4)]).compact({ messages: input, signal: controller.signal });
    expect(result.status).toBe("cancelled");
    expect(result.messages).toBe(input);
  });

  it("returns the input untouched with a PLUGIN_FAILED error naming the plugin when a tap throws", async () => {
    const input = conversation();
    const broken: CompactionPlugin = {
      name: "broken",
      apply: (c) =>
        c.hooks.summarize.tapPromise({ name: "broken", stage: STAGE_AUGMENT }, async () => {
          throw new Error("disk full");
        }),
    };
    const result = await compactor([cutAt(4), broken]).compact({ messages: input });
    expect(result.status).toBe("failed");
    expect(result.messages).toBe(input);
    expect(result.error?.code).toBe(ErrorCodes.PLUGIN_FAILED);
    expect(result.error?.plugin).toBe("broken");
    expect(result.reason).toContain("Plugin 'broken' failed in summarize: disk full");
  });

  it.each([
    ["beforeCompact", (c: Compactor<PiMessage>, fail: () => never) => c.hooks.beforeCompact.tap("broken", fail)],
    ["selectCut", (c: Compactor<PiMessage>, fail: () => never) => c.hooks.selectCut.tap({ name: "broken", stage: -1 }, fail)],
    ["summarize", (c: Compactor<PiMessage>, fail: () => never) => c.hooks.summarize.tap({ name: "broken", stage: STAGE_AUGMENT }, fail)],
  ] as const)("names the hook a throwing tap was in (%s), and keeps what it threw as the cause", async (hook, tap) => {
    const thrown = new Error("boom");
    const broken: CompactionPlugin = { name: "broken", apply: (c) => void tap(c as Compactor<PiMessage>, () => { throw thrown; }) };
    const result = await compactor([cutAt(4), broken]).compact({ messages: conversation() });
    expect(result.error?.code).toBe(ErrorCodes.PLUGIN_FAILED);
    expect(result.error?.plugin).toBe("broken");
    expect(result.error?.hook).toBe(hook);
    expect(result.error?.cause).toBe(thrown);
    expect(result.reason).toBe(`Plugin 'broken' failed in ${hook}: boom`);
  });

  it("names apply as the hook of a plugin that throws while it is applied", () => {
    const broken: CompactionPlugin = { name: "broken", apply: () => { throw new Error("boom"); } };
    expect(() => compactor([broken])).toThrow(expect.objectContaining({ code: ErrorCodes.PLUGIN_FAILED, plugin: "broken", hook: "apply" }));
  });

  it("keeps the history when the summarizer rejects", async () => {
    const input = conversation();
    const failing: Summarizer = { name: "failing", summarize: async () => Promise.reject(new Error("model timeout")) };
    const result = await compactor([cutAt(4)], failing).compact({ messages: input });
    expect(result.status).toBe("failed");
    expect(result.messages).toBe(input);
    expect(result.error?.code).toBe(ErrorCodes.SUMMARIZER_FAILED);
    expect(result.reason).toBe("Summarizer 'failing' failed (asked by plugin 'cut-at'): model timeout");
  });

  it("refuses to drop messages when no plugin wrote a summary", async () => {
    const input = conversation();
    const cutOnly: CompactionPlugin = { name: "cut-only", apply: (c) => c.hooks.selectCut.tap("cut-only", () => ({ firstKeptIndex: 4 })) };
    const result = await compactor([cutOnly]).compact({ messages: input });
    expect(result.status).toBe("failed");
    expect(result.error?.code).toBe(ErrorCodes.SUMMARIZER_FAILED);
    expect(result.messages).toBe(input);
  });

  it("drops the compacted messages without a trace only when a plugin chooses kind 'none'", async () => {
    const dropper: CompactionPlugin = {
      name: "dropper",
      apply: (c) => {
        c.hooks.selectCut.tap("dropper", () => ({ firstKeptIndex: 4 }));
        c.hooks.summarize.tap("dropper", () => ({ text: "", kind: "none" }));
      },
    };
    const input = conversation();
    const result = await compactor([dropper]).compact({ messages: input });
    expect(result.status).toBe("compacted");
    expect(result.messages).toEqual(input.slice(4));
    expect(result.summary).toBeNull();
  });

  it("builds a note message when the draft kind is 'note'", async () => {
    const noter: CompactionPlugin = {
      name: "noter",
      apply: (c) => {
        c.hooks.selectCut.tap("noter", () => ({ firstKeptIndex: 4 }));
        c.hooks.summarize.tap("noter", () => ({ text: "[Context rolled: 4 messages evicted]", kind: "note" }));
      },
    };
    const result = await compactor([noter]).compact({ messages: conversation() });
    const first = result.messages[0] as unknown as Record<string, unknown>;
    expect(first.role).toBe("custom");
    expect(first.content).toBe("[Context rolled: 4 messages evicted]");
  });

  it("is a noop that names the reason when no plugin selects a cut", async () => {
    const input = conversation();
    const result = await compactor([]).compact({ messages: input });
    expect(result.status).toBe("noop");
    expect(result.messages).toBe(input);
    expect(result.reason).toBe("No plugin selected a cut.");
  });

  it("is a noop when the cut would only summarise the previous summary again", async () => {
    const input = [summaryMessage("## Goal\n- ship it"), user("q1"), assistant("a1")];
    const result = await compactor([cutAt(1)]).compact({ messages: input });
    expect(result.status).toBe("noop");
    expect(result.reason).toContain("Nothing new to compact");
    expect(result.messages).toBe(input);
  });

  it("is a noop when the cut compacts nothing", async () => {
    const result = await compactor([cutAt(0)]).compact({ messages: conversation() });
    expect(result.status).toBe("noop");
  });

  it("accepts a working set replaced in beforeCompact even without a cut", async () => {
    const pruner: CompactionPlugin = {
      name: "pruner",
      apply: (c) =>
        c.hooks.beforeCompact.tap({ name: "pruner", stage: STAGE_PRUNE }, (run) => {
          run.setLayer("prune");
          run.replaceMessages(run.messages.map((m) => (run.factsOf(m).kind === "toolResult" ? c.adapter.replaceToolOutput(m, "[pruned]") : m)));
        }),
    };
    const input = conversation();
    const result = await compactor([pruner]).compact({ messages: input });
    expect(result.status).toBe("compacted");
    expect(result.event?.layer).toBe("prune");
    expect(result.event?.strategy).toBe("pruner");
    expect(result.messages).toHaveLength(input.length);
    expect(JSON.stringify(result.messages[2])).toContain("[pruned]");
    expect(JSON.stringify(input[2])).toContain("output one");
  });

  it("keeps a working set pruned in beforeCompact when the cut then compacts nothing", async () => {
    const pruneAndKeepAll: CompactionPlugin = {
      name: "prune-keep-all",
      apply: (c) => {
        c.hooks.beforeCompact.tap("prune-keep-all", (run) =>
          run.replaceMessages(run.messages.map((m) => (run.factsOf(m).kind === "toolResult" ? c.adapter.replaceToolOutput(m, "[pruned]") : m))),
        );
        c.hooks.selectCut.tap("prune-keep-all", () => ({ firstKeptIndex: 0 }));
      },
    };
    const result = await compactor([pruneAndKeepAll]).compact({ messages: conversation() });
    expect(result.status).toBe("compacted");
    expect(result.cut).toBeNull();
    expect(JSON.stringify(result.messages[2])).toContain("[pruned]");
  });

  it.each([
    ["a string", "just text", "returned a string"],
    ["a misspelt kind", { text: "x", kind: "sumary" }, 'kind: a string ("sumary")'],
  ])("fails naming the plugin when summarize returns %s", async (_name, value, found) => {
    const bad: CompactionPlugin = {
      name: "bad-draft",
      apply: (c) => c.hooks.summarize.tap({ name: "bad-draft", stage: STAGE_AUGMENT }, () => value as never),
    };
    const input = conversation();
    const result = await compactor([cutAt(4), bad]).compact({ messages: input });
    expect(result.status).toBe("failed");
    expect(result.messages).toBe(input);
    expect(result.error?.plugin).toBe("bad-draft");
    expect(result.reason).toContain(`Plugin 'bad-draft' returned`);
    expect(result.reason).toContain(found);
  });

  it("gives afterCompact the result, and turns its failure into a warning", async () => {
    let seen: string | undefined;
    const after: CompactionPlugin = {
      name: "persist",
      apply: (c) => {
        c.hooks.afterCompact.tap("persist", (result) => {
          seen = result.event?.id;
        });
        c.hooks.afterCompact.tap("explode", () => {
          throw new Error("index locked");
        });
      },
    };
    const result = await compactor([cutAt(4), after]).compact({ messages: conversation() });
    expect(result.status).toBe("compacted");
    expect(seen).toBe(result.event?.id);
    expect(result.warnings.some((w) => w.includes("[explode]") && w.includes("index locked"))).toBe(true);
  });
});

describe("Compactor.compact", () => {
  it("puts the summary between the preserved messages and the kept suffix", async () => {
    const input = conversation();
    const result = await compactor([cutAt(4)]).compact({ messages: input });
    expect(result.messages).toHaveLength(5);
    const first = result.messages[0] as unknown as Record<string, unknown>;
    expect(first.role).toBe("compactionSummary");
    expect(first.summary).toBe("summary of 4 messages");
    expect(result.messages.slice(1)).toEqual(input.slice(4));
  });

  it("fills the event with the seed's fields and the strategy", async () => {
    const input = conversation();
    const result = await compactor([cutAt(4, "strategy-x")]).compact({ messages: input, trigger: "auto", focus: "the parser" });
    const event = result.event;
    expect(event).toMatchObject({
      type: "compaction",
      summary: "summary of 4 messages",
      messagesCompacted: 4,
      tokensBeforeCompaction: result.tokensBefore,
      tokensAfterCompaction: result.tokensAfter, // no usage, no calibration: the two measures agree
      trigger: "auto",
      customInstruction: "the parser",
      strategy: "strategy-x",
    });
    expect(event?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number.isNaN(Date.parse(event?.timestamp ?? ""))).toBe(false);
  });

  // Issue 31: tokensAfter used to be our count beside a usage-based tokensBefore (177,657 -> 16,776 where the event said 21,676).
  it("takes tokensBefore from the provider's usage and gives tokensAfter in the same measure, with our counts named as such", async () => {
    const input = conversation();
    const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 5000 };
    input[7] = { ...(input[7] as object), usage, stopReason: "stop" } as PiMessage;
    const c = compactor([cutAt(4)]);
    const result = await c.compact({ messages: input });
    expect(result.tokensBefore).toBe(5000);
    expect(result.countedTokensBefore).toBe(c.tokens.total(input));
    expect(result.countedTokensAfter).toBe(c.tokens.total(result.messages));
    // After in Before's measure, the run's: our count at the usage figure's ratio to our count of the input.
    expect(result.tokensAfter).toBe(Math.round(((result.countedTokensAfter ?? 0) * 5000) / c.tokens.total(input)));
    expect(result.tokensAfter).toBeGreaterThan(result.countedTokensAfter ?? 0);
    expect(result.tokensAfter).toBe(c.tokens.providerTokensAfter(input, result.messages));
    expect(result.event?.tokensAfterCompaction).toBe(result.tokensAfter);
    expect(result.event?.tokensBeforeCompaction).toBe(result.tokensBefore);
  });

  it("gives Before and After of a run that compacts nothing in one measure, equal", async () => {
    const input = conversation();
    const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 5000 };
    input[7] = { ...(input[7] as object), usage, stopReason: "stop" } as PiMessage;
    const c = compactor([]);
    const result = await c.compact({ messages: input });
    expect(result.status).toBe("noop");
    expect(result.tokensAfter).toBe(result.tokensBefore);
    expect(result.countedTokensAfter).toBe(result.countedTokensBefore);
    expect(result.countedTokensBefore).toBe(c.tokens.total(input));
  });

  it("starts tokensBefore from the input's anchor (the last compaction's After) when no usage figure is newer", async () => {
    const input = conversation();
    const c = compactor([cutAt(4)]);
    const covered = c.tokens.total(input.slice(0, 6));
    const anchor = { tokens: 3000, lastIndex: 5 };
    const result = await c.compact({ messages: input, anchor });
    const trailing = c.tokens.total(input.slice(6));
    expect(result.tokensBefore).toBe(3000 + trailing);
    expect(result.tokensBefore).toBe(c.tokens.contextTokens(input, anchor).tokens);
    expect(result.tokensBefore).not.toBe(covered + trailing);
    // After in Before's measure, anchored too: the event and providerTokensAfter agree.
    expect(result.event?.tokensAfterCompaction).toBe(c.tokens.providerTokensAfter(input, result.messages, anchor));
    expect(result.tokensAfter).toBe(Math.round(((result.countedTokensAfter ?? 0) * result.tokensBefore) / c.tokens.total(input)));
    expect(result.event?.tokensAfterCompaction).toBe(result.tokensAfter);
  });

  it("lets a usage figure after the anchored messages win over the anchor", async () => {
    const input = conversation();
    const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 5000 };
    input[7] = { ...(input[7] as object), usage, stopReason: "stop" } as PiMessage;
    const result = await compactor([cutAt(4)]).compact({ messages: input, anchor: { tokens: 3000, lastIndex: 5 } });
    expect(result.tokensBefore).toBe(5000);
  });

  it("refuses an anchor that does not fit the messages with INPUT_INVALID, naming it", async () => {
    const run = compactor([cutAt(4)]).compact({ messages: conversation(), anchor: { tokens: 3000, lastIndex: 8 } });
    await expect(run).rejects.toMatchObject({ code: ErrorCodes.INPUT_INVALID, message: expect.stringMatching(/bad anchor.*lastIndex.*found 8/) });
  });

  it("never mutates the input messages", async () => {
    const input = conversation();
    const snapshot = structuredClone(input);
    await compactor([cutAt(4)]).compact({ messages: input });
    expect(input).toEqual(snapshot);
  });

  it("moves a cut that separates a tool result from its call back to the call, with a warning naming the plugin", async () => {
    const result = await compactor([cutAt(2, "sloppy")]).compact({ messages: conversation(LONG_REQUEST) });
    expect(result.status).toBe("compacted");
    expect(result.cut?.firstKeptIndex).toBe(1);
    expect(result.warnings.join("\n")).toContain("Plugin 'sloppy' cut at message 2");
  });

  it("fails with CUT_REFUSED naming the plugin for an index out of range", async () => {
    const result = await compactor([cutAt(99, "wild")]).compact({ messages: conversation() });
    expect(result.status).toBe("failed");
    expect(result.error?.code).toBe(ErrorCodes.CUT_REFUSED);
    expect(result.reason).toContain("'wild'");
  });

  // Issue 10 changed this on purpose: a kept part over the budget used to fail with CUT_REFUSED.
  it("shrinks a kept part over the budget to head and tail instead of failing", async () => {
    const input = [user("old"), assistant("ok"), user(words(400)), assistant(words(400))];
    const c = compactor([cutAt(2, "greedy")]);
    const result = await c.compact({ messages: input, contextWindow: 300 });
    expect(result.status).toBe("compacted");
    expect(c.tokens.total(result.messages)).toBeLessThanOrEqual(300);
    expect((result.shrunk ?? []).map((s) => s.index)).toContain(3);
    expect(result.warnings.join("\n")).toContain("'greedy'");
  });

  it("shrinks the kept part when the note a plugin writes leaves the context over the budget, to the token", async () => {
    const input = [user("old"), assistant("ok"), user(words(400)), assistant(words(400))];
    const note = `[Context rolled: ${words(40)}]`;
    const noter: CompactionPlugin = {
      name: "noter",
      apply: (c) => {
        c.hooks.selectCut.tap("noter", () => ({ firstKeptIndex: 2 }));
        c.hooks.summarize.tap("noter", () => ({ text: note, kind: "note" }));
      },
    };
    const c = compactor([noter]);
    // The kept part fits with 5 tokens to spare; the note takes more than that.
    const contextWindow = c.tokens.total(input.slice(2)) + 5;
    const result = await c.compact({ messages: input, contextWindow });
    expect(result.status).toBe("compacted");
    expect(result.tokensAfter).toBe(c.tokens.total(result.messages));
    expect(result.tokensAfter).toBeLessThanOrEqual(contextWindow);
    expect((result.messages[0] as unknown as { content: string }).content).toBe(note); // the note is never shortened
    expect((result.shrunk ?? []).map((s) => s.index)).toEqual([3]); // in the input's indices
    expect(result.shrunk?.[0]?.tokensBefore).toBe(c.tokens.count(input[3] as PiMessage));
    expect(result.cut?.keptTokens).toBe(result.tokensAfter - c.tokens.count(result.messages[0] as PiMessage));
    expect(result.warnings.join("\n")).toMatch(/With its note, the compacted context was \d+ tokens over the budget/);
    expect(result.warnings.join("\n")).not.toContain("still over the budget");
  });

  it("gives a summary MIN_SUMMARY_ROOM when the kept request leaves it less: the request is shrunk first, the summary says something", async () => {
    // The case a generated session found: the cut at the newest user message kept all but 14 tokens of
    // the budget, the extractive summary squeezed into them was headings alone, and the run failed.
    const input = [user(`step 0: ${words(300)}`), assistant(`done 0: ${words(300)}`), user(`step 1: ${words(300)}`), assistant(`done 1: ${words(300)}`), user(`last: ${words(900)}`)];
    const c = compactor([summarizingAt(4)], budgetedSummarizer);
    const overhead = c.tokens.count(createPiAdapter().createSummary(""));
    for (const left of [-overhead, 0, 1, 14, MIN_SUMMARY_ROOM - 1]) {
      const contextWindow = c.tokens.count(input[4] as PiMessage) + overhead + left;
      const result = await c.compact({ messages: input, contextWindow });
      expect(result.status, `${left}: ${result.reason}`).toBe("compacted");
      expect(summaryHasContent(result.summary ?? "")).toBe(true);
      expect(result.tokensAfter).toBe(c.tokens.total(result.messages));
      expect(result.tokensAfter).toBeLessThanOrEqual(contextWindow);
      expect(result.shrunk?.map((s) => s.index)).toEqual([4]);
      expect(result.warnings.join("\n")).toContain(`which leaves the summary ${Math.max(0, left)}; to give it at least ${MIN_SUMMARY_ROOM}, shrunk to head and tail: message 4 (request`);
    }
  });

  it("with suffixOnly, keeps the request whole in the result and tells the host to shrink it when it sends, as it makes the summary room", async () => {
    const input = [user(`step 0: ${words(300)}`), assistant(`done 0: ${words(300)}`), user(`last: ${words(900)}`)];
    const c = compactor([summarizingAt(2)], budgetedSummarizer);
    const overhead = c.tokens.count(createPiAdapter().createSummary(""));
    const contextWindow = c.tokens.count(input[2] as PiMessage) + overhead + 10;
    const result = await c.compact({ messages: input, contextWindow, suffixOnly: true });
    expect(result.status, result.reason ?? "").toBe("compacted");
    expect(summaryHasContent(result.summary ?? "")).toBe(true);
    expect(result.messages[1]).toBe(input[2]);
    expect(result.shrunk?.map((s) => s.index)).toEqual([2]);
    expect(result.warnings.join("\n")).toContain("must shrink them when it sends the request");
    // What the host sends, shrunk as the result says, fits.
    const sent = c.shapeRequest(result.messages, { contextWindow });
    expect(sent.fits).toBe(true);
  });

  it("makes no room once the result is assembled: a summaryRoomLeft in afterCompact only reads", async () => {
    const input = [user(`step 0: ${words(300)}`), assistant(`done 0: ${words(300)}`), user(`last: ${words(900)}`)];
    const late: CompactionPlugin = {
      name: "late",
      apply: (c) => {
        c.hooks.selectCut.tap("late", () => ({ firstKeptIndex: 2 }));
        c.hooks.summarize.tap("late", (draft) => ({ ...draft, text: "- the parser was fixed" }));
        c.hooks.afterCompact.tap("late", (_result, run) => {
          rooms.push(run.summaryRoomLeft());
        });
      },
    };
    const rooms: number[] = [];
    const c = compactor([late]);
    const overhead = c.tokens.count(createPiAdapter().createSummary(""));
    const contextWindow = c.tokens.count(input[2] as PiMessage) + overhead + 10;
    const result = await c.compact({ messages: input, contextWindow });
    expect(result.status).toBe("compacted");
    expect(rooms).toEqual([10]);
    expect(result.warnings.join("\n")).not.toContain("to give it at least");
  });

  it("leaves the kept messages whole when they leave the summary MIN_SUMMARY_ROOM or more", async () => {
    const input = [user(`step 0: ${words(300)}`), assistant(`done 0: ${words(300)}`), user(`last: ${words(900)}`)];
    const c = compactor([summarizingAt(2)], budgetedSummarizer);
    const overhead = c.tokens.count(createPiAdapter().createSummary(""));
    for (const left of [MIN_SUMMARY_ROOM, MIN_SUMMARY_ROOM + 40]) {
      const contextWindow = c.tokens.count(input[2] as PiMessage) + overhead + left;
      const result = await c.compact({ messages: input, contextWindow });
      expect(result.status).toBe("compacted");
      expect(result.shrunk ?? []).toEqual([]);
      expect(result.messages[1]).toEqual(input[2]);
      expect(result.tokensAfter).toBeLessThanOrEqual(contextWindow);
    }
  });

  it("keeps a context whose summary outgrows its room within the budget, already shrunk parts counted from their original size", async () => {
    const input = [user("old"), assistant("ok"), user(words(560)), assistant("looking", [{ id: "t1" }]), toolResult("t1", words(3000)), assistant(words(400))];
    // A plugin that writes its summary without asking how much room is left.
    const verbose: CompactionPlugin = {
      name: "verbose",
      apply: (c) => {
        c.hooks.selectCut.tap("verbose", () => ({ firstKeptIndex: 2 }));
        c.hooks.summarize.tap("verbose", (draft) => ({ ...draft, text: words(300) }));
      },
    };
    const copy = structuredClone(input);
    const c = compactor([verbose]);
    const contextWindow = 1_500;
    const result = await c.compact({ messages: input, contextWindow });
    expect(result.status).toBe("compacted");
    expect(c.tokens.total(result.messages)).toBeLessThanOrEqual(contextWindow);
    expect(result.summary).toBe(words(300));
    // The newest turn (its 3,000-word tool output) is over the run's target, so the cut moved into
    // it, to its last step, the request kept ahead of the summary; the request and that step leave
    // the summary less than half its room, so that step was shrunk by the cut's fit and again for
    // the summary: reported once, from its original size.
    expect(result.cut?.firstKeptIndex).toBe(5);
    expect(result.cut?.preservedIndices).toEqual([2]);
    const output = (result.shrunk ?? []).filter((s) => s.index === 5);
    expect(output).toHaveLength(1);
    expect(output[0]?.tokensBefore).toBe(c.tokens.count(input[5] as PiMessage));
    expect(result.warnings.join("\n")).toContain("cutting alone could not bring the context under the budget");
    expect(result.warnings.join("\n")).toMatch(/With its summary, the compacted context was \d+ tokens over the budget/);
    // Each shrunk message has one marker, and it says all that was cut from the original, not only
    // the second cut (the assistant message was shrunk by the cut's fit and again for the summary).
    const textOf = (m: PiMessage) => ((m as { content: { type: string; text?: string }[] }).content.find((part) => part.type === "text")?.text ?? "");
    expect((result.shrunk ?? []).map((s) => s.index)).toEqual([5]);
    for (const { index } of result.shrunk ?? []) {
      const text = textOf(result.messages[2 + index - 5] as PiMessage); // the request, the summary, then 5 on
      const markers = text.match(new RegExp(SHRINK_MARKER_PATTERN.source, "g")) ?? [];
      expect(markers).toHaveLength(1);
      const removed = Number(/\[compaction: ([\d,]+) characters/.exec(markers[0]!)?.[1]?.replaceAll(",", ""));
      expect(removed, `message ${index}`).toBeGreaterThan(0.95 * (textOf(input[index] as PiMessage).length - (text.length - markers[0]!.length)));
    }
    expect(input).toEqual(copy); // the input is untouched
  });

  it("leaves the kept messages whole when the summary alone is over the budget, and says the context is over", async () => {
    // The summary (1,500 tokens) still replaces more than itself (3,000), so the context shrinks.
    const input = [user(words(2000)), assistant("ok"), user(words(100)), assistant(words(50))];
    const verbose: CompactionPlugin = {
      name: "verbose",
      apply: (c) => {
        c.hooks.selectCut.tap("verbose", () => ({ firstKeptIndex: 2 }));
        c.hooks.summarize.tap("verbose", (draft) => ({ ...draft, text: words(1000) }));
      },
    };
    const result = await compactor([verbose]).compact({ messages: input, contextWindow: 400 });
    expect(result.status).toBe("compacted");
    expect(result.messages.slice(1)).toEqual(input.slice(2)); // the request is not cut for nothing
    expect(result.shrunk ?? []).toEqual([]);
    expect(result.warnings.join("\n")).toContain("still over the budget");
  });

  it("pulls a cut past the newest user message back to it", async () => {
    const result = await compactor([cutAt(7, "eager")]).compact({ messages: conversation() });
    expect(result.cut?.firstKeptIndex).toBe(4);
    expect(result.warnings.join("\n")).toContain("the request being worked on stays in the context");
  });

  /** One request and a long autonomous run after it: `steps` tool calls, each with a large output. */
  const oneLongTurn = (steps: number) => [
    user("old question"),
    assistant(`old answer: ${words(200)}`),
    user("implement the plan: step by step"),
    ...Array.from({ length: steps }, (_, i) => [assistant(`step ${i}`, [{ id: `c${i}` }]), toolResult(`c${i}`, `output ${i}: ${words(300)}`)]).flat(),
    assistant("all steps done"),
  ];

  it("splits a newest turn larger than the run's target, the request kept verbatim ahead of the summary", async () => {
    const input = oneLongTurn(12);
    const copy = structuredClone(input);
    const inspect = inspectSplit();
    const c = compactor([summarizingAt(2), inspect], budgetedSummarizer);
    const contextWindow = Math.floor(c.tokens.total(input) / 2);
    const result = await c.compact({ messages: input, contextWindow });
    expect(result.status).toBe("compacted");
    // The cut was moved later, into the newest turn, not shrunk: nothing kept is cut to head and tail.
    expect(result.shrunk ?? []).toEqual([]);
    expect(result.cut!.firstKeptIndex).toBeGreaterThan(3);
    expect(result.cut!.preservedIndices).toEqual([2]);
    expect(result.cut!.isSplitTurn).toBe(true);
    expect(result.cut!.turnStartIndex).toBe(2);
    expect(inspect.history).toBe(2);
    // The turn's summary sees its request (kept ahead of the summary too) and its early part.
    expect(inspect.prefix).toBe(result.cut!.firstKeptIndex - 2);
    expect(result.messages[0]).toEqual(input[2]);
    expect((result.messages[1] as unknown as Record<string, unknown>).role).toBe("compactionSummary");
    expect(result.messages.slice(2)).toEqual(input.slice(result.cut!.firstKeptIndex));
    expect(result.warnings.join("\n")).toContain("inside the newest turn, its request kept ahead of the summary");
    expect(c.tokens.total(result.messages)).toBeLessThanOrEqual(contextWindow);
    expect(input).toEqual(copy);
  });

  it("moves a cut later for the run's target no further than the newest messages in an eighth of the window", async () => {
    // A long request kept ahead of the summary takes most of the run's target: moving the cut
    // until the rest fits it would keep one step of the turn. The cut stops where the newest
    // messages hold an eighth of the window (MIN_KEPT_SHARE), the summary written in what is left.
    const input = [user("old question"), assistant(`old answer: ${words(200)}`), user(`the plan: ${words(900)}`), ...Array.from({ length: 24 }, (_, i) => [assistant(`step ${i}`, [{ id: `c${i}` }]), toolResult(`c${i}`, `output ${i}: ${words(60)}`)]).flat(), assistant("all steps done")];
    const c = compactor([summarizingAt(2)], budgetedSummarizer);
    const contextWindow = Math.floor(c.tokens.total(input) * 0.9);
    const result = await c.compact({ messages: input, contextWindow });
    expect(result.status).toBe("compacted");
    expect(result.shrunk ?? []).toEqual([]);
    expect(result.cut!.preservedIndices).toEqual([2]);
    const tokens = input.map((m) => c.tokens.count(m));
    const suffix = (from: number) => tokens.slice(from).reduce((sum, n) => sum + n, 0);
    const floor = Math.floor(contextWindow * MIN_KEPT_SHARE);
    const first = result.cut!.firstKeptIndex;
    // Every newest message that fits in the floor, from the cut point (an assistant message) that reaches it.
    expect(suffix(first)).toBeGreaterThanOrEqual(floor);
    expect(suffix(first + 2)).toBeLessThan(floor);
    expect(result.warnings.join("\n")).toContain("inside the newest turn, its request kept ahead of the summary");
    expect(c.tokens.total(result.messages)).toBeLessThanOrEqual(contextWindow);
  });

  it("gives up the least kept part when it would leave the summary less than half its room", async () => {
    // The request kept ahead of the summary nearly fills the budget: the newest messages in an
    // eighth of the window beside it would leave the summary less than half its room (a quarter of
    // the budget), and no cut before it fits the target, so the budget decides: the cut is at the
    // newest turn's last step and what it keeps is shrunk (rule 3), as without the floor.
    const input = [user("old question"), assistant(`old answer: ${words(200)}`), user(`the plan: ${words(2000)}`), ...Array.from({ length: 24 }, (_, i) => [assistant(`step ${i}`, [{ id: `c${i}` }]), toolResult(`c${i}`, `output ${i}: ${words(60)}`)]).flat(), assistant("all steps done")];
    const c = compactor([summarizingAt(2)], budgetedSummarizer);
    const contextWindow = 4_000;
    const result = await c.compact({ messages: input, contextWindow });
    expect(result.status).toBe("compacted");
    const floor = Math.floor(contextWindow * MIN_KEPT_SHARE);
    expect(c.tokens.count(input[2]!) + floor).toBeGreaterThan(contextWindow - Math.ceil(contextWindow / 8));
    expect(result.cut!.firstKeptIndex).toBe(input.length - 1);
    expect(result.cut!.preservedIndices).toEqual([2]);
    expect(result.warnings.join("\n")).toContain("the newest turn's last step");
    expect(c.tokens.total(result.messages)).toBeLessThanOrEqual(contextWindow);
  });

  it("splits the same newest turn again: the previous summary's split-turn part is updated, not summarised again", async () => {
    const keepLast = (n: number): CompactionPlugin => ({
      name: "keep-last",
      apply(c) {
        c.hooks.selectCut.tap("keep-last", (run) => ({ firstKeptIndex: run.messages.length - n }));
        c.hooks.summarize.tapPromise("keep-last", async (draft, run) => ({ ...draft, text: await summarizeCut(run, { maxTokens: 200 }) }));
      },
    });
    const prefixes: number[] = [];
    const previous: (string | undefined)[] = [];
    const spy: Summarizer = {
      name: "spy",
      summarize: async (req) => {
        if (req.kind === "turnPrefix") {
          prefixes.push(req.messages.length);
          previous.push(req.previousSummary);
        }
        return `${req.kind} of ${req.messages.length} messages`;
      },
    };
    const c = compactor([keepLast(3)], spy);
    const input = oneLongTurn(12);
    const window = Math.floor(c.tokens.total(input) / 2);
    const once = await c.compact({ messages: input, contextWindow: window });
    expect(once.status).toBe("compacted");
    expect(once.messages[0]).toEqual(input[2]);
    const more = Array.from({ length: 6 }, (_, i) => [assistant(`more ${i}`, [{ id: `m${i}` }]), toolResult(`m${i}`, `more output ${i}: ${words(300)}`)]).flat();
    const twice = await c.compact({ messages: [...once.messages, ...more], contextWindow: window });
    expect(twice.status).toBe("compacted");
    // The request stays first; the previous summary is not handed to the summarizer as a message.
    expect(twice.messages[0]).toEqual(input[2]);
    expect(twice.cut?.preservedIndices).toEqual([0]);
    expect(prefixes[1]).toBe(1 + twice.cut!.compactedIndices.length - 1);
    expect(previous).toEqual([undefined, once.summary!.split(SPLIT_TURN_SEPARATOR).at(-1)]);
    expect(twice.summary!.split(SPLIT_TURN_SEPARATOR)).toHaveLength(once.summary!.split(SPLIT_TURN_SEPARATOR).length);
  });

  it("honours a plugin's cut inside a newest turn larger than the run's target, and pulls back one inside a turn that fits", async () => {
    const input = oneLongTurn(12);
    const c = compactor([cutAt(input.length - 3)]);
    const small = await c.compact({ messages: input, contextWindow: Math.floor(c.tokens.total(input) / 2) });
    expect(small.cut?.firstKeptIndex).toBe(input.length - 3);
    expect(small.cut?.preservedIndices).toEqual([2]);
    expect(small.warnings.join("\n")).not.toContain("the request being worked on stays in the context");
    const large = await c.compact({ messages: input, contextWindow: 100_000 });
    expect(large.cut?.firstKeptIndex).toBe(2);
    expect(large.warnings.join("\n")).toContain("the request being worked on stays in the context");
  });

  it("for a host that records only summary + suffix (suffixOnly), splits such a turn with its request in the summary, verbatim", async () => {
    const input = oneLongTurn(12);
    const c = compactor([summarizingAt(input.length - 3)]);
    const result = await c.compact({ messages: input, contextWindow: Math.floor(c.tokens.total(input) / 2), suffixOnly: true });
    expect(result.status).toBe("compacted");
    expect(result.cut?.firstKeptIndex).toBe(input.length - 3);
    expect(result.cut?.preservedIndices).toEqual([]);
    expect(result.cut?.compactedIndices).toContain(2);
    expect(result.cut?.turnStartIndex).toBe(2);
    // Summary + an unchanged suffix, as pi records it; the request's text is carried in the summary.
    expect(result.messages.slice(1)).toEqual(input.slice(input.length - 3));
    expect(result.summary).toContain(`${CARRIED_REQUEST_HEADING}\n\nimplement the plan: step by step`);
  });

  it("never splits a newest turn that is its request alone, nor keeps nothing after the request", async () => {
    const input = [...oneLongTurn(2), user(`the plan: ${words(3000)}`)];
    const c = compactor([cutAt(input.length)]);
    const result = await c.compact({ messages: input, contextWindow: Math.floor(c.tokens.total(input) * 0.9), suffixOnly: true });
    expect(result.cut?.firstKeptIndex).toBe(input.length - 1);
    expect(result.warnings.join("\n")).toContain("the request being worked on stays in the context");
  });

  it("keeps the newest messages when the context holds no user message (a split turn going on) and a plugin cuts after all of them", async () => {
    // What a pi file holds after a split: the summary carrying the request, then the turn's newest steps, the last output larger than the budget.
    const input = [
      summaryMessage(`${CARRIED_REQUEST_HEADING}\n\nimplement the plan: step by step`),
      ...Array.from({ length: 3 }, (_, i) => [assistant(`step ${i}`, [{ id: `c${i}` }]), toolResult(`c${i}`, `output ${i}: ${words(300)}`)]).flat(),
      assistant("step 3", [{ id: "c3" }]),
      toolResult("c3", `output 3: ${words(3000)}`),
    ];
    const c = compactor([cutAt(input.length)]);
    const result = await c.compact({ messages: input, contextWindow: Math.floor(c.tokens.total(input) * 0.6), suffixOnly: true });
    expect(result.status).toBe("compacted");
    expect(result.cut?.firstKeptIndex).toBe(input.length - 2);
    expect(result.messages.slice(1)).toEqual(input.slice(-2));
    expect(result.warnings.join("\n")).toContain("so the newest messages stay in the context");
  });

  it("pulls a cut inside a newest turn that fits the run's target back to its request, also for suffixOnly", async () => {
    const input = oneLongTurn(2);
    const c = compactor([cutAt(input.length - 1)]);
    const result = await c.compact({ messages: input, contextWindow: 100_000, suffixOnly: true });
    expect(result.cut?.firstKeptIndex).toBe(2);
    expect(result.warnings.join("\n")).toContain("the request being worked on stays in the context");
  });

  it("preserves the pinned message and its tool partners ahead of the summary", async () => {
    const input = [
      user("remember: deploy only on fridays", { pinned: true }),
      assistant("noted", [{ id: "p1" }], { pinned: true }),
      toolResult("p1", "saved"),
      user(`old question: ${words(40)}`),
      assistant(`old answer: ${words(40)}`),
      user("new question"),
      assistant("new answer"),
    ];
    const result = await compactor([cutAt(5)]).compact({ messages: input });
    expect(result.cut?.preservedIndices).toEqual([0, 1, 2]);
    expect(result.cut?.compactedIndices).toEqual([3, 4]);
    expect(result.messages.slice(0, 3)).toEqual(input.slice(0, 3));
    expect((result.messages[3] as unknown as Record<string, unknown>).role).toBe("compactionSummary");
  });

  it("passes the previous summary to the summarizer instead of summarising it again", async () => {
    const requests: { count: number; previous?: string }[] = [];
    const spy: Summarizer = {
      name: "spy",
      summarize: async (req) => {
        requests.push({ count: req.messages.length, ...(req.previousSummary ? { previous: req.previousSummary } : {}) });
        return "updated summary";
      },
    };
    const input = [summaryMessage("## Goal\n- ship it"), user("q1"), assistant("a1"), user("q2"), assistant("a2")];
    const result = await compactor([cutAt(3)], spy).compact({ messages: input });
    expect(result.status).toBe("compacted");
    expect(requests).toEqual([{ count: 2, previous: "## Goal\n- ship it" }]);
  });

  it("reports a split turn and gives its early part separately", async () => {
    const inspect = inspectSplit();
    // An older turn split: its request is compacted with its early part (the newest one's is kept).
    const result = await compactor([cutAt(7), inspect]).compact({ messages: [...conversation(), user("third request")] });
    expect(result.cut?.isSplitTurn).toBe(true);
    expect(result.cut?.turnStartIndex).toBe(4);
    expect(inspect.history).toBe(4);
    expect(inspect.prefix).toBe(3);
  });

  it("with no summarizer, a run that asks for a summary fails with COMPACTION_SUMMARIZER_MISSING naming the plugin and the package to install, and changes nothing", async () => {
    const c = new Compactor<PiMessage>({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), plugins: [summarizingAt(2)], contextWindow: 100_000 });
    expect(c.hasSummarizer).toBe(false);
    const input = conversation();
    const result = await c.compact({ messages: input });
    expect(result.status).toBe("failed");
    expect(result.messages).toEqual(input);
    expect(result.error?.code).toBe(ErrorCodes.SUMMARIZER_MISSING);
    expect(result.error?.plugin).toBe("summarizing");
    expect(result.error?.message).toContain("Plugin 'summarizing' asked for a summary, but this compactor has no summarizer");
    expect(result.error?.hint).toContain("@compaction/plugin-summarizer-extractive");
  });

  it("needs no summarizer for a run that never asks for one", async () => {
    const note: CompactionPlugin = {
      name: "note",
      apply: (c) => {
        c.hooks.selectCut.tap("note", () => ({ firstKeptIndex: 2 }));
        c.hooks.summarize.tap("note", (draft) => ({ ...draft, text: "- dropped two messages" }));
      },
    };
    const c = new Compactor<PiMessage>({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), plugins: [note], contextWindow: 100_000 });
    const result = await c.compact({ messages: conversation(LONG_REQUEST) });
    expect(result.status).toBe("compacted");
    expect(c.summarizer.name).toBe("none");
  });

  it("takes a summarizer set by a plugin, and refuses one that is not a summarizer", () => {
    const installs: CompactionPlugin = { name: "installs", apply: (c) => void (c.summarizer = fixedSummarizer) };
    const c = new Compactor<PiMessage>({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), plugins: [installs] });
    expect(c.hasSummarizer).toBe(true);
    expect(c.summarizer).toBe(fixedSummarizer);
    expect(() => (c.summarizer = { name: "x" } as unknown as Summarizer)).toThrow(/Expected a summarizer \{ name, summarize\(request\) \}/);
    expect(c.summarizer).toBe(fixedSummarizer);
  });

  it("rejects a call with no context window", async () => {
    const c = new Compactor<PiMessage>({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter() });
    await expect(c.compact({ messages: [] })).rejects.toMatchObject({ code: ErrorCodes.INPUT_INVALID });
  });

  it("rejects a plugin that is a factory rather than a plugin", () => {
    const c = compactor([]);
    const factory = () => ({ name: "x", apply() {} });
    expect(() => c.use(factory as unknown as CompactionPlugin)).toThrow(/Expected a plugin/);
  });

  it("runs two compactors with different plugins side by side without sharing state", async () => {
    const a = compactor([cutAt(4, "a")]);
    const b = compactor([cutAt(1, "b")]);
    const [ra, rb] = await Promise.all([a.compact({ messages: conversation(LONG_REQUEST) }), b.compact({ messages: conversation(LONG_REQUEST) })]);
    expect(ra.event?.strategy).toBe("a");
    expect(rb.event?.strategy).toBe("b");
    expect(ra.cut?.firstKeptIndex).toBe(4);
    expect(rb.cut?.firstKeptIndex).toBe(1);
    expect(a.hooks.selectCut.taps.map((t) => t.name)).toEqual(["a"]);
  });
});
