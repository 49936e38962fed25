import { ErrorCodes } from "@compaction/core";
import { failingSummarizer, makeProject, removeProjects } from "@compaction/core/testing";
import { afterAll, describe, expect, it } from "vitest";
import type { AiSdkCompactionEvent, CompactionEndEvent } from "./options.js";
import { compactionPrepareStep } from "./prepare-step.js";
import {
  type AiPackage,
  carriesRequest,
  continueConversation,
  fileContent,
  orphanedResults,
  promptText,
  type RecordedPrompt,
  REQUEST,
  runToolLoop,
  type Runner,
  TOOL_STEPS,
} from "./test-support/tool-loop.js";

/** ai 7 needs Node 22; CI runs on 22 and 24. */
const NODE_MAJOR = Number(process.versions.node.split(".")[0]);
const CONTEXT_WINDOW = 32_000;

const VERSIONS: ReadonlyArray<{ name: string; load: () => Promise<AiPackage>; skip: boolean }> = [
  { name: "ai 6", load: async () => ({ ai: (await import("ai")) as never, test: (await import("ai/test")) as never }), skip: false },
  { name: "ai 7", load: async () => ({ ai: (await import("ai7")) as never, test: (await import("ai7/test")) as never }), skip: NODE_MAJOR < 22 },
];

afterAll(() => removeProjects());

/** A project with a config naming the safeguard preset and the window. */
function project(): string {
  return makeProject({ ".compactionrc.json": JSON.stringify({ preset: "safeguard", contextWindow: CONTEXT_WINDOW }) });
}

function compactionsOf(events: readonly AiSdkCompactionEvent[]): CompactionEndEvent[] {
  return events.filter((event): event is CompactionEndEvent => event.type === "compaction-end" && event.result.status === "compacted");
}

/** The prompt's messages as JSON, to compare prompts of consecutive steps. */
function messagesJson(prompt: RecordedPrompt): string[] {
  return prompt.messages.map((message) => JSON.stringify(message));
}

for (const version of VERSIONS) {
  describe.skipIf(version.skip)(`compactionPrepareStep with ${version.name}`, () => {
    it("without it, the 14-step loop's prompts outgrow the window (the case the tests below guard)", async () => {
      const pkg = await version.load();
      const { prompts } = await runToolLoop(pkg, "generateText", undefined);
      expect(prompts).toHaveLength(TOOL_STEPS + 1);
      expect(Math.max(...prompts.map((prompt) => prompt.tokens))).toBeGreaterThan(CONTEXT_WINDOW);
    });

    for (const runner of ["generateText", "streamText", "ToolLoopAgent"] as Runner[]) {
      it(`${runner}: every prompt of a 14-step loop with large tool results fits the window, has no tool result without its call, and carries the user's request`, async () => {
        const pkg = await version.load();
        const events: AiSdkCompactionEvent[] = [];
        const prepareStep = compactionPrepareStep({ cwd: project(), on: (event) => events.push(event) });
        const { prompts, text } = await runToolLoop(pkg, runner, prepareStep);

        expect(prompts).toHaveLength(TOOL_STEPS + 1);
        expect(text).toContain("fetchLegacy");
        for (const [step, prompt] of prompts.entries()) {
          expect({ step, tokens: prompt.tokens, over: prompt.tokens > CONTEXT_WINDOW }).toMatchObject({ over: false });
          expect({ step, orphans: orphanedResults(prompt) }).toEqual({ step, orphans: [] });
          expect({ step, carriesRequest: carriesRequest(prompt) }).toEqual({ step, carriesRequest: true });
        }
        expect(events.filter((event) => event.type === "warning")).toEqual([]);
        expect(compactionsOf(events).length).toBeGreaterThan(0);
      });
    }

    it("keeps its earlier compaction and extends it: fewer summaries than steps, each one updating the last, and between compactions each prompt starts with the one before", async () => {
      const pkg = await version.load();
      const events: AiSdkCompactionEvent[] = [];
      const prepareStep = compactionPrepareStep({ cwd: project(), on: (event) => events.push(event) });
      const { prompts } = await runToolLoop(pkg, "generateText", prepareStep);

      const compactions = compactionsOf(events);
      expect(compactions.length).toBeGreaterThanOrEqual(2);
      expect(compactions.length).toBeLessThan(TOOL_STEPS / 2);
      // A later summary still names the first file read: it updated the summary, not replaced it.
      const last = compactions.at(-1)?.result.summary ?? "";
      expect(last).toContain("src/module-0.ts");
      const compactedAt = new Set(compactions.map((event) => event.stepNumber));
      for (let step = 1; step < prompts.length; step++) {
        if (compactedAt.has(step)) continue;
        const before = messagesJson(prompts[step - 1] as RecordedPrompt);
        expect(messagesJson(prompts[step] as RecordedPrompt).slice(0, before.length)).toEqual(before);
      }
    });

    it("carries its compaction into the conversation's next request: the summary so far is updated, not written again from the whole history", async () => {
      const pkg = await version.load();
      const events: AiSdkCompactionEvent[] = [];
      const prepareStep = compactionPrepareStep({ cwd: project(), on: (event) => events.push(event) });
      const first = await continueConversation(pkg, [], REQUEST, prepareStep);
      const firstSummary = compactionsOf(events).at(-1)?.result.summary ?? "";
      expect(firstSummary).toContain("src/module-0.ts");
      const compactedBefore = compactionsOf(events).length;

      const next = "Now replace every fetchLegacy() call you found with fetchModern().";
      const second = await continueConversation(pkg, first.messages, next, prepareStep);
      // The second request's first prompt starts from the first run's compaction, not from the whole history.
      const opening = second.prompts[0] as RecordedPrompt;
      expect(opening.tokens).toBeLessThanOrEqual(CONTEXT_WINDOW);
      const lastOfFirst = messagesJson(first.prompts.at(-1) as RecordedPrompt);
      expect(messagesJson(opening).slice(0, lastOfFirst.length)).toEqual(lastOfFirst);
      expect(opening.messages.some((message) => JSON.stringify(message).includes("compacted into the following summary"))).toBe(true);
      const later = compactionsOf(events).slice(compactedBefore);
      expect(later.length).toBeGreaterThan(0);
      expect(later[0]?.stepNumber).toBeGreaterThan(0);
      // Each later compaction found the previous summary and updated it: the first run's files are still named.
      for (const event of later) expect(event.result.summary ?? "").toContain("src/module-0.ts");
      for (const prompt of second.prompts) {
        expect(prompt.tokens).toBeLessThanOrEqual(CONTEXT_WINDOW);
        expect(orphanedResults(prompt)).toEqual([]);
        expect(prompt.messages.some((message) => message.role === "user" && JSON.stringify(message).includes("fetchModern"))).toBe(true);
      }
    });

    it("with a summarizer that always fails, 30 steps past the threshold call it at most once per quarter of the window appended (not at every step), and every prompt fits, holds the request and the newest steps whole, and starts as the one before except at most once per quarter of the window appended", async () => {
      const pkg = await version.load();
      const STEPS = 30;
      const uncompacted = await runToolLoop(pkg, "generateText", undefined, STEPS);
      const appended = (uncompacted.prompts.at(-1) as RecordedPrompt).tokens - (uncompacted.prompts[0] as RecordedPrompt).tokens;
      const perQuarter = Math.floor(appended / (CONTEXT_WINDOW / 4)) + 1;
      const summarizer = failingSummarizer();
      const events: AiSdkCompactionEvent[] = [];
      // At the threshold, in the foreground (background compaction has tests of its own).
      const prepareStep = compactionPrepareStep({ cwd: project(), plugins: [summarizer.plugin], background: false, on: (event) => events.push(event) });
      const { prompts } = await runToolLoop(pkg, "generateText", prepareStep, STEPS);

      expect(prompts).toHaveLength(STEPS + 1);
      // Without the wait, a summary would be asked for at every one of these steps.
      expect(uncompacted.prompts.filter((prompt) => prompt.tokens > CONTEXT_WINDOW * 0.8).length).toBeGreaterThan(perQuarter + 5);
      expect(summarizer.calls()).toBeGreaterThan(1);
      expect(summarizer.calls()).toBeLessThanOrEqual(perQuarter);
      const failures = events.filter((event) => event.type === "warning" && event.code === ErrorCodes.SUMMARIZER_FAILED);
      expect(failures).toHaveLength(summarizer.calls());
      expect(failures[0]?.type === "warning" && failures[0].message).toMatch(/waits until the prompt has grown by 8000 tokens/);
      let restarts = 0;
      for (const [step, prompt] of prompts.entries()) {
        expect({ step, over: prompt.tokens > CONTEXT_WINDOW }).toEqual({ step, over: false });
        expect({ step, orphans: orphanedResults(prompt) }).toEqual({ step, orphans: [] });
        expect({ step, carriesRequest: carriesRequest(prompt) }).toEqual({ step, carriesRequest: true });
        const before = step === 0 ? [] : messagesJson(prompts[step - 1] as RecordedPrompt);
        if (messagesJson(prompt).slice(0, before.length).join() !== before.join()) restarts += 1;
      }
      // What is sent is shaped by one prefix-stable shaper: a step's prompt starts as the one before
      // until the remembered forms no longer fit, and each such step frees room for several more.
      expect(restarts).toBeGreaterThan(0);
      expect(restarts).toBeLessThanOrEqual(perQuarter);
      // The newest steps that fit go whole: the last prompt ends with the files read last.
      const newest = (prompts.at(-1) as RecordedPrompt).messages.slice(-4).map(promptText).join("\n");
      for (const file of [28, 29]) expect({ file, whole: newest.includes(JSON.stringify(fileContent(file)).slice(1, -1)) }).toEqual({ file, whole: true });
    });

    it("gives the same messages for the same history: a second run of the loop sends exactly the same prompts", async () => {
      const pkg = await version.load();
      const cwd = project();
      const first = await runToolLoop(pkg, "generateText", compactionPrepareStep({ cwd }));
      const second = await runToolLoop(pkg, "generateText", compactionPrepareStep({ cwd }));
      expect(second.prompts.map(messagesJson)).toEqual(first.prompts.map(messagesJson));
    });
  });
}

describe("compactionPrepareStep options", () => {
  it.each([
    [{ contextWindow: 0 }, "/contextWindow"],
    [{ contextWindow: 1000, reserveTokens: 1000 }, "/reserveTokens"],
    [{ on: "log" }, "/on"],
  ])("rejects %j with COMPACTION_INPUT_INVALID naming the option", (options, path) => {
    expect(() => compactionPrepareStep(options as never)).toThrowError(expect.objectContaining({ code: "COMPACTION_INPUT_INVALID", path }));
  });
});
