import { type CompactionPlugin, ErrorCodes, MIN_KEPT_SHARE, SPLIT_TURN_HEADING, STAGE_FALLBACK, findCutPoint, readSummary } from "@compaction/core";
import { FORMATS, builders, words } from "@compaction/core/testing";
import { describe, expect, it } from "vitest";
import defaultExport, {
  PLUGIN_NAME,
  SAFEGUARD_LAYER,
  collectFailedCalls,
  collectFileLists,
  listsTokens,
  safeguard,
} from "./index.js";
import {
  chat,
  compactorFor,
  factsOf,
  orphanedResults,
  recordingSummarizer,
  suffixTokens,
  turn,
  turns,
} from "./test-support/conversation.js";

describe.each(FORMATS)("safeguard (%s)", (format) => {
  const b = builders(format);

  describe("choosing the cut", () => {
    it("does nothing when nothing is older than keepRecentTokens", async () => {
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 100_000 })] });
      const messages = turns(b, 0, 5);
      const result = await compactor.compact({ messages });
      expect(result.status).toBe("noop");
      expect(result.messages).toBe(messages);
    });

    it("keeps at most keepRecentTokens of the newest messages verbatim and summarises the rest", async () => {
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 300 })] });
      const messages = turns(b, 0, 20);
      const result = await compactor.compact({ messages });
      expect(result.status).toBe("compacted");
      const cut = result.cut!;
      expect(suffixTokens(compactor, messages, cut.firstKeptIndex)).toBeLessThanOrEqual(300);
      expect(result.messages.slice(1)).toEqual(messages.slice(cut.firstKeptIndex));
      expect(compactor.facts.of(result.messages[0]).kind).toBe("summary");
      expect(result.event?.layer).toBe(SAFEGUARD_LAYER);
      expect(result.event?.strategy).toBe(PLUGIN_NAME);
    });

    it("cuts at the start of a turn when the allowance ends inside an earlier turn", async () => {
      const messages = turns(b, 0, 10);
      const probe = compactorFor(format, { plugins: [] });
      const lastTurn = turn(b, 0).length;
      // Room for the last turn plus the previous turn's closing reply: the largest fitting suffix
      // starts at that reply, inside the previous turn.
      const keep = suffixTokens(probe, messages, messages.length - lastTurn - 1);
      const view = { facts: factsOf(probe, messages), tokens: messages.map((m) => probe.tokens.count(m)) };
      const plain = findCutPoint(view, { keepRecentTokens: keep }).firstKeptIndex;
      expect(view.facts[plain]?.kind).toBe("assistant");

      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: keep })] });
      const result = await compactor.compact({ messages });
      expect(result.cut!.firstKeptIndex).toBe(messages.length - lastTurn);
      expect(result.cut!.isSplitTurn).toBe(false);
    });

    it("splits the last turn when it alone is larger than keepRecentTokens and summarises its early part", async () => {
      const { requests, summarizer } = recordingSummarizer();
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 200 })], summarizer });
      // A split turn is never the newest one (issue 10): a short request follows the large turn.
      const messages = [...turns(b, 0, 3), ...turns(b, 3, 4, { outputWords: 200, reads: "big.ts" }), b.user("Go on."), b.assistant("OK.")];
      const result = await compactor.compact({ messages });
      expect(result.status).toBe("compacted");
      expect(result.cut!.isSplitTurn).toBe(true);
      expect(requests.map((r) => r.kind)).toEqual(["history", "turnPrefix"]);
      expect(result.summary).toContain(SPLIT_TURN_HEADING);
      expect(suffixTokens(compactor, messages, result.cut!.firstKeptIndex)).toBeLessThanOrEqual(200);
    });

    it("splits a turn rather than give up more than maxTurnBoundaryLoss of the kept tokens", async () => {
      const { requests, summarizer } = recordingSummarizer();
      const longTurn = [b.user("Refactor the exporter."), ...Array.from({ length: 8 }, (_, i) => b.assistant(`Step ${i}: ${words(40, "refactor")}`))];
      const messages = [...chat(b, 0, 3), ...longTurn, b.user("Thanks."), b.assistant("You are welcome.")];
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 300 })], summarizer });
      const result = await compactor.compact({ messages });
      expect(result.cut!.isSplitTurn).toBe(true);
      expect(compactor.facts.of(messages[result.cut!.turnStartIndex]).text).toBe("Refactor the exporter.");
      expect(requests.map((r) => r.kind)).toEqual(["history", "turnPrefix"]);

      const wholeTurns = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 300, maxTurnBoundaryLoss: 1 })] });
      const moved = await wholeTurns.compact({ messages });
      expect(moved.cut!.firstKeptIndex).toBe(messages.length - 2);
      expect(moved.cut!.isSplitTurn).toBe(false);
    });

    it("keeps a tool call with its results", async () => {
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 400 })] });
      const messages = turns(b, 0, 12, { reads: "lib.ts", outputWords: 30 });
      const result = await compactor.compact({ messages });
      expect(result.status).toBe("compacted");
      expect(orphanedResults(factsOf(compactor, result.messages))).toEqual([]);
    });

    it("keeps pinned messages and the system prompt ahead of the summary", async () => {
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 200 })] });
      const system = b.system("You are a coding agent.");
      const pinned = b.pin(b.user("Never touch the vendor directory."));
      const messages = [...(system ? [system] : []), pinned, ...turns(b, 0, 15)];
      const result = await compactor.compact({ messages });
      expect(result.status).toBe("compacted");
      expect(result.messages).toContain(pinned);
      if (system) expect(result.messages[0]).toBe(system);
      expect(compactor.facts.of(result.messages[system ? 2 : 1]).kind).toBe("summary");
    });

    it("lowers the allowance to fit a small budget, says so, and meets the budget", async () => {
      const compactor = compactorFor(format, {
        plugins: [safeguard({ keepRecentTokens: 20_000 })],
        contextWindow: 1_500,
        summaryMaxTokens: 500,
      });
      const messages = turns(b, 0, 30);
      const result = await compactor.compact({ messages });
      expect(result.status).toBe("compacted");
      expect(result.tokensAfter).toBeLessThanOrEqual(1_500);
      // Below the budget's 1,000: within 0.6 of the auto-compaction threshold (80% of 1,500), so the next compaction is turns away.
      expect(
        result.warnings.some((w) => /^\[safeguard\] keepRecentTokens \(20000\) was lowered to \d+ for this run, .* within the run's target \(\d+ tokens, so the next compaction is many turns away/.test(w)),
        result.warnings.join("\n"),
      ).toBe(true);
    });

    it("keeps the newest messages that fit in an eighth of the window when the target's room would leave fewer", async () => {
      // A pinned message takes most of the run's target (0.6 of the 80% threshold): beside it and
      // the summary's room the target leaves the newest messages under a hundred tokens. The least
      // kept part (MIN_KEPT_SHARE of the window) holds: the summary is written in what it leaves.
      const contextWindow = 2_000;
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 20_000 })], contextWindow });
      const messages = [b.pin(b.user(`Project rules: ${words(420)}`)), ...turns(b, 0, 40)];
      const result = await compactor.compact({ messages });
      expect(result.status).toBe("compacted");
      expect(result.tokensAfter).toBeLessThanOrEqual(contextWindow);
      const kept = result.messages.slice(result.messages.findIndex((m) => compactor.facts.of(m).kind === "summary") + 1);
      // The newest messages whose tokens fit in the least kept part, as plain truncation keeps them.
      const floor = Math.floor(contextWindow * MIN_KEPT_SHARE);
      let fit = 0;
      for (let held = 0, i = messages.length - 1; i >= 0 && held + compactor.tokens.count(messages[i]!) <= floor; i--) {
        held += compactor.tokens.count(messages[i]!);
        fit += 1;
      }
      expect(fit).toBeGreaterThan(2);
      expect(kept.length).toBeGreaterThanOrEqual(fit);
    });
  });

  describe("writing the summary", () => {
    it("asks the configured summarizer with the compactor's summaryMaxTokens by default", async () => {
      const { requests, summarizer } = recordingSummarizer();
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 300 })], summarizer, summaryMaxTokens: 777 });
      const result = await compactor.compact({ messages: chat(b, 0, 20) });
      expect(result.summary).toMatch(/^history summary 1 of \d+ messages$/);
      expect(requests.map((r) => [r.kind, r.maxTokens])).toEqual([["history", 777]]);
    });

    it("uses its own summaryMaxTokens and turnPrefixMaxTokens when given", async () => {
      const { requests, summarizer } = recordingSummarizer();
      const plugin = safeguard({ keepRecentTokens: 200, summaryMaxTokens: 900, turnPrefixMaxTokens: 123 });
      const compactor = compactorFor(format, { plugins: [plugin], summarizer });
      const lastTurn = [b.user("Explain the design."), ...Array.from({ length: 6 }, (_, i) => b.assistant(`Part ${i}: ${words(60, "design")}`))];
      const result = await compactor.compact({ messages: [...chat(b, 0, 5), ...lastTurn, b.user("Thanks."), b.assistant("Welcome.")] });
      expect(result.cut?.isSplitTurn).toBe(true);
      expect(requests.map((r) => [r.kind, r.maxTokens])).toEqual([
        ["history", 900],
        ["turnPrefix", 123],
      ]);
    });

    it("asks for a summary shorter by the room the file lists and failed calls need", async () => {
      const { requests, summarizer } = recordingSummarizer();
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 300 })], summarizer, summaryMaxTokens: 777 });
      const messages = [...turns(b, 0, 3, { editFails: true }), ...turns(b, 3, 20)];
      const result = await compactor.compact({ messages });
      const compacted = result.cut!.compactedIndices.map((i) => compactor.facts.of(messages[i]));
      const lists = { files: collectFileLists(compacted), failed: collectFailedCalls(compacted) };
      const reserved = listsTokens(lists, compactor.tokens.counter);
      expect(reserved).toBeGreaterThan(0);
      expect(requests.map((r) => r.maxTokens)).toEqual([777 - reserved]);
      expect(compactor.tokens.counter.count(result.summary!)).toBeLessThanOrEqual(777);
    });

    it("leaves the summarizer at least half of summaryMaxTokens however long the lists are", async () => {
      const { requests, summarizer } = recordingSummarizer();
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 300 })], summarizer, summaryMaxTokens: 60 });
      await compactor.compact({ messages: turns(b, 0, 20) });
      expect(requests.map((r) => r.maxTokens)).toEqual([30]);
    });

    it("writes the extractive summary by default, with the goal and the files", async () => {
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 300 })] });
      const messages = turns(b, 0, 20, { reads: "README.md" });
      const result = await compactor.compact({ messages });
      const state = readSummary(result.summary!);
      expect(state.slots.goal.join(" ")).toContain("Task 0");
      expect(state.slots.filesModified).toContain("src/file-0.ts");
      expect(state.slots.filesRead).toContain("README.md");
    });

    it("updates the previous summary on a second compaction instead of summarising it again", async () => {
      const { requests, summarizer } = recordingSummarizer();
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 300 })], summarizer });
      const first = await compactor.compact({ messages: turns(b, 0, 20) });
      const second = await compactor.compact({ messages: [...first.messages, ...turns(b, 20, 30)] });
      expect(second.status).toBe("compacted");
      const last = requests.at(-1)!;
      expect(last.previousSummary).toBe(first.summary);
      expect(last.messages.some((f) => f.kind === "summary")).toBe(false);
    });

    it("moves work finished after the previous summary to Done", async () => {
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 150 })] });
      // The opening reads a test file first: what is compacted is longer than its summary (a
      // compaction that would not make the context smaller is refused).
      const opening = [
        b.user("Fix the failing parser test in src/parser.ts."),
        b.assistant("Reading the test first.", [{ id: "o1", name: "read", args: { path: "test/parser.test.ts" } }]),
        ...b.toolResults([{ id: "o1", text: words(100, "expect"), name: "read" }]),
        b.assistant("I will fix the parser test in src/parser.ts next."),
      ];
      const first = await compactor.compact({ messages: [...opening, ...turns(b, 0, 2)] });
      expect(first.status, first.reason ?? "").toBe("compacted");
      // An announced step is a next step until the work shows it done.
      expect(readSummary(first.summary!).slots.nextSteps.join(" ")).toMatch(/parser test/);
      const later = [
        b.user("Go on."),
        b.assistant("Editing src/parser.ts.", [{ id: "p1", name: "edit", args: { path: "src/parser.ts" } }]),
        ...b.toolResults([{ id: "p1", text: "edited" }]),
        b.assistant("Fixed the parser test."),
        ...turns(b, 2, 6),
      ];
      const second = await compactor.compact({ messages: [...first.messages, ...later] });
      expect(second.status, second.reason ?? "").toBe("compacted");
      const state = readSummary(second.summary!);
      expect(state.slots.done.join(" ")).toMatch(/parser test/);
      expect(state.slots.inProgress).toEqual([]);
      expect(state.slots.goal).toEqual(["Fix the failing parser test in src/parser.ts."]);
    });

    it("summarises a long history in chunks, each chunk updating the summary of the ones before", async () => {
      const { requests, summarizer } = recordingSummarizer((request, call) => `chunk ${call} after [${request.previousSummary ?? ""}]`);
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 100, chunkTokens: 150 })], summarizer });
      const messages = turns(b, 0, 10);
      const result = await compactor.compact({ messages });
      expect(requests.length).toBeGreaterThan(2);
      requests.forEach((request, i) => {
        expect(request.previousSummary).toBe(i === 0 ? undefined : `chunk ${i} after [${requests[i - 1]!.previousSummary ?? ""}]`);
        const tokens = request.messages.reduce((sum, f) => sum + compactor.tokens.counter.count(f.text) , 0);
        expect(request.messages.length === 1 || tokens <= 150).toBe(true);
      });
      expect(result.summary).toMatch(new RegExp(`^chunk ${requests.length} after`));
      const summarised = requests.reduce((sum, r) => sum + r.messages.length, 0);
      expect(summarised).toBe(result.cut!.compactedIndices.length);
    });

    it("hands the whole history to the summarizer at once when it fits chunkTokens", async () => {
      const { requests, summarizer } = recordingSummarizer();
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 100 })], summarizer });
      await compactor.compact({ messages: turns(b, 0, 10) });
      expect(requests).toHaveLength(1);
    });
  });

  describe("file lists and failed tool calls", () => {
    it("adds the files and failed calls a summarizer's text lacks", async () => {
      const { summarizer } = recordingSummarizer(() => "The user is refactoring the code base.");
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 200 })], summarizer });
      const messages = [...turns(b, 0, 3, { reads: "README.md" }), ...turns(b, 3, 4, { editFails: true }), ...turns(b, 4, 10)];
      const result = await compactor.compact({ messages });
      const state = readSummary(result.summary!);
      expect(result.summary!.startsWith("The user is refactoring the code base.\n\n## Files")).toBe(true);
      expect(state.slots.filesRead).toEqual(["README.md"]);
      expect(state.slots.filesModified.slice(0, 3)).toEqual(["src/file-0.ts", "src/file-1.ts", "src/file-2.ts"]);
      expect(state.slots.filesModified).not.toContain("src/file-3.ts");
      expect(state.slots.failed).toEqual(["edit(src/file-3.ts): Error: could not find the text to replace in src/file-3.ts"]);
    });

    it("carries the files of the previous summary into the next one, even from pi's file tags", async () => {
      const { summarizer } = recordingSummarizer(() => "Prose only.");
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 200 })], summarizer });
      const previous = b.adapter.createSummary("Earlier work.\n\n<modified-files>\nlegacy/old.ts\n</modified-files>");
      const result = await compactor.compact({ messages: [previous, ...turns(b, 0, 10)] });
      expect(readSummary(result.summary!).slots.filesModified).toContain("legacy/old.ts");
    });

    it("adds nothing to an extractive summary that already states them", async () => {
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 200 })] });
      const messages = [...turns(b, 0, 3), ...turns(b, 3, 4, { editFails: true }), ...turns(b, 4, 10)];
      const result = await compactor.compact({ messages });
      // Files edited are named by Done (no `## Files` then); none is listed twice, none added again.
      expect((result.summary!.match(/^## Files$/gm) ?? []).length).toBeLessThanOrEqual(1);
      expect(result.summary!.match(/^### Failed$/gm)).toHaveLength(1);
      for (const path of readSummary(result.summary!).slots.filesModified) {
        expect(result.summary!.split(`\`${path}\``).length - 1).toBe(1);
      }
    });

    it("keeps within its length and warns about the lists that did not fit when the summarizer writes at full length", async () => {
      const { summarizer } = recordingSummarizer(() => words(60, "prose"));
      const compactor = compactorFor(format, {
        plugins: [safeguard({ keepRecentTokens: 200, summaryMaxTokens: 100 })],
        summarizer,
      });
      const result = await compactor.compact({ messages: turns(b, 0, 12) });
      expect(result.status).toBe("compacted");
      expect(compactor.tokens.counter.count(result.summary!)).toBeLessThanOrEqual(100);
      expect(readSummary(result.summary!).slots.filesModified.length).toBeGreaterThan(0);
      expect(result.warnings.some((w) => /^\[safeguard\] \d+ file paths or failed tool calls .* were left out/.test(w))).toBe(true);
    });

    it("warns when the summarizer writes more than it was asked for", async () => {
      const { summarizer } = recordingSummarizer((request) => words(request.maxTokens * 2, "prose"));
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 200, summaryMaxTokens: 100 })], summarizer });
      const result = await compactor.compact({ messages: chat(b, 0, 12) });
      expect(result.status).toBe("compacted");
      expect(result.warnings).toContain("[safeguard] Summarizer 'recorder' wrote 300 tokens, more than the 100 asked for.");
    });
  });

  describe("when summarising fails", () => {
    it("fails and returns the input untouched when the summarizer rejects", async () => {
      const summarizer = { name: "flaky-model", summarize: () => Promise.reject(new Error("HTTP 500")) };
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 200 })], summarizer });
      const messages = turns(b, 0, 10);
      const result = await compactor.compact({ messages });
      expect(result.status).toBe("failed");
      expect(result.messages).toBe(messages);
      expect(result.summary).toBeNull();
      expect(result.error?.code).toBe(ErrorCodes.SUMMARIZER_FAILED);
      expect(result.error?.message).toMatch(/^Summarizer 'flaky-model' failed.*: HTTP 500/);
    });

    it("fails and returns the input untouched when the summarizer does not answer in time", async () => {
      const summarizer = { name: "slow-model", summarize: () => new Promise<string>(() => {}) };
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 200, timeoutMs: 25 })], summarizer });
      const messages = turns(b, 0, 10);
      const result = await compactor.compact({ messages });
      expect(result.status).toBe("failed");
      expect(result.messages).toBe(messages);
      expect(result.error?.code).toBe(ErrorCodes.SUMMARIZER_FAILED);
      expect(result.error?.message).toMatch(/^Summarizer 'slow-model' did not answer within 25 ms/);
    });

    it("fails rather than write a placeholder when the summarizer returns an empty summary", async () => {
      const { summarizer } = recordingSummarizer(() => "  \n");
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 200 })], summarizer });
      const messages = turns(b, 0, 10);
      const result = await compactor.compact({ messages });
      expect(result.status).toBe("failed");
      expect(result.messages).toBe(messages);
      expect(result.error?.code).toBe(ErrorCodes.SUMMARIZER_FAILED);
      expect(result.error?.message).toBe("Summarizer 'recorder' returned an empty history summary; nothing was changed.");
    });

    it("fails when a later chunk fails, keeping nothing of the earlier chunks", async () => {
      const { requests, summarizer } = recordingSummarizer((_request, call) => {
        if (call === 2) throw new Error("rate limited");
        return `chunk ${call}`;
      });
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 100, chunkTokens: 150 })], summarizer });
      const messages = turns(b, 0, 10);
      const result = await compactor.compact({ messages });
      expect(requests).toHaveLength(2);
      expect(result.status).toBe("failed");
      expect(result.messages).toBe(messages);
      expect(result.error?.message).toMatch(/rate limited/);
    });

    it("fails when the split turn's summary fails after the history's succeeded", async () => {
      const { summarizer } = recordingSummarizer((request) => {
        if (request.kind === "turnPrefix") throw new Error("context length exceeded");
        return "history";
      });
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 200 })], summarizer });
      const messages = [...turns(b, 0, 3), ...turns(b, 3, 4, { outputWords: 200, reads: "big.ts" }), b.user("Go on."), b.assistant("OK.")];
      const result = await compactor.compact({ messages });
      expect(result.status).toBe("failed");
      expect(result.messages).toBe(messages);
    });

    it("is cancelled with the input untouched when the signal aborts while summarising", async () => {
      const controller = new AbortController();
      const summarizer = {
        name: "slow-model",
        summarize: () => {
          setTimeout(() => controller.abort(), 5);
          return new Promise<string>(() => {});
        },
      };
      const compactor = compactorFor(format, { plugins: [safeguard({ keepRecentTokens: 200 })], summarizer });
      const messages = turns(b, 0, 10);
      const result = await compactor.compact({ messages, signal: controller.signal });
      expect(result.status).toBe("cancelled");
      expect(result.messages).toBe(messages);
      expect(result.error?.code).toBe(ErrorCodes.CANCELLED);
    });
  });

  describe("with other plugins", () => {
    it("summarises a cut another plugin chose", async () => {
      const other: CompactionPlugin = {
        name: "fixed-cut",
        apply(c) {
          c.hooks.selectCut.tap({ name: "fixed-cut", stage: -1 }, () => ({ firstKeptIndex: turn(b, 0).length * 2 }));
        },
      };
      const compactor = compactorFor(format, { plugins: [other, safeguard({ keepRecentTokens: 100 })] });
      const result = await compactor.compact({ messages: turns(b, 0, 4) });
      expect(result.status).toBe("compacted");
      expect(result.cut?.selectedBy).toBe("fixed-cut");
      expect(readSummary(result.summary!).slots.filesModified).toEqual(["src/file-0.ts", "src/file-1.ts"]);
    });

    it("leaves a summary or note another plugin already wrote", async () => {
      const other: CompactionPlugin = {
        name: "noter",
        apply(c) {
          c.hooks.summarize.tap({ name: "noter", stage: -1 }, () => ({ text: "Evicted 10 messages.", kind: "note" as const }));
        },
      };
      const { requests, summarizer } = recordingSummarizer();
      const compactor = compactorFor(format, { plugins: [other, safeguard({ keepRecentTokens: 100 })], summarizer });
      const result = await compactor.compact({ messages: turns(b, 0, 10) });
      expect(result.summary).toBe("Evicted 10 messages.");
      expect(requests).toHaveLength(0);
    });

    it("lets a fallback plugin's cut wait: its own cut comes first", async () => {
      const fallback: CompactionPlugin = {
        name: "fallback",
        apply(c) {
          c.hooks.selectCut.tap({ name: "fallback", stage: STAGE_FALLBACK }, () => ({ firstKeptIndex: 1 }));
        },
      };
      const compactor = compactorFor(format, { plugins: [fallback, safeguard({ keepRecentTokens: 100 })] });
      const result = await compactor.compact({ messages: turns(b, 0, 10) });
      expect(result.cut?.selectedBy).toBe(PLUGIN_NAME);
    });
  });
});

describe("safeguard options", () => {
  it("is the default export as well as a named one", () => {
    expect(defaultExport).toBe(safeguard);
    expect(safeguard().name).toBe(PLUGIN_NAME);
  });

  it("rejects an unknown option, naming the plugin and the nearest option", () => {
    expect(() => safeguard({ keepRecentToken: 5 } as never)).toThrow(
      expect.objectContaining({
        code: ErrorCodes.PLUGIN_OPTIONS_INVALID,
        plugin: "safeguard",
        message: expect.stringMatching(/Did you mean 'keepRecentTokens'\?/),
      }),
    );
  });

  it.each([
    [{ keepRecentTokens: -1 }, "keepRecentTokens"],
    [{ chunkTokens: 0 }, "chunkTokens"],
    [{ timeoutMs: 1.5 }, "timeoutMs"],
    [{ summaryMaxTokens: 0 }, "summaryMaxTokens"],
    [{ turnPrefixMaxTokens: "big" }, "turnPrefixMaxTokens"],
    [{ timeoutMs: 3_000_000_000 }, "timeoutMs"],
    [{ maxTurnBoundaryLoss: 1.5 }, "maxTurnBoundaryLoss"],
  ])("rejects %j", (options, name) => {
    expect(() => safeguard(options as never)).toThrow(new RegExp(name));
  });
});
