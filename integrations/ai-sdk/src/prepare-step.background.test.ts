/**
 * Background compaction in `compactionPrepareStep`, on the real `ai` package (ai 6 and 7) and its
 * `MockLanguageModelV3`, with the real model summarizer (`summarizer-openai`, from `.compactionrc`)
 * against a local server that holds every summary until the test lets it answer: a summary takes
 * as long as the test says, and the test sees when each was asked for.
 */
import { makeProject, removeProjects, startHeldModelServer, type HeldModelServer } from "@compaction/core/testing";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { AiSdkCompactionEvent, AiSdkCompactionOptions, BackgroundCompactionEvent, CompactionStartEvent } from "./options.js";
import { compactionPrepareStep, type PrepareStepInput } from "./prepare-step.js";
import { type AiPackage, carriesRequest, fileContent, orphanedResults, promptText, runToolLoop } from "./test-support/tool-loop.js";

const NODE_MAJOR = Number(process.versions.node.split(".")[0]);
const CONTEXT_WINDOW = 32_000;

const VERSIONS: ReadonlyArray<{ name: string; load: () => Promise<AiPackage>; skip: boolean }> = [
  { name: "ai 6", load: async () => ({ ai: (await import("ai")) as never, test: (await import("ai/test")) as never }), skip: false },
  { name: "ai 7", load: async () => ({ ai: (await import("ai7")) as never, test: (await import("ai7/test")) as never }), skip: NODE_MAJOR < 22 },
];

const servers: HeldModelServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});
afterAll(() => removeProjects());

/** A server that holds summaries (answering on its own after `answerAfterMs`, so a step that waits for one ends), and a project whose safeguard preset summarises with it. */
async function heldModel(answerAfterMs: number): Promise<{ server: HeldModelServer; cwd: string }> {
  const server = await startHeldModelServer({ answerAfterMs });
  servers.push(server);
  const plugins = [["summarizer-openai", { model: "held-model", baseUrl: server.baseUrl, maxRetries: 0 }]];
  return { server, cwd: makeProject({ ".compactionrc.json": JSON.stringify({ preset: "safeguard", contextWindow: CONTEXT_WINDOW, plugins }) }) };
}

/** What each step's prepareStep saw of the summarizer: summaries asked for before it and after it, and whether one was held when it returned. */
interface StepRecord {
  readonly asked: number;
  readonly askedAfter: number;
}

/** `compactionPrepareStep(options)`, recording per step how many summaries the server had been asked for before and after it. */
function recordedPrepareStep(server: HeldModelServer, options: AiSdkCompactionOptions) {
  const steps = new Map<number, StepRecord>();
  const prepareStep = compactionPrepareStep<object>(options);
  const wrapped = async (input: PrepareStepInput<object>) => {
    const asked = server.requests.length;
    const output = await prepareStep(input);
    steps.set(input.stepNumber, { asked, askedAfter: server.requests.length });
    return output;
  };
  return { steps, prepareStep: wrapped };
}

const backgroundOf = (events: readonly AiSdkCompactionEvent[]) => events.filter((event): event is BackgroundCompactionEvent => event.type === "background");
const appliedOf = (events: readonly AiSdkCompactionEvent[]) => events.filter((event): event is CompactionStartEvent => event.type === "compaction-start" && event.prepared !== undefined);

for (const version of VERSIONS) {
  describe.skipIf(version.skip)(`compactionPrepareStep in the background with ${version.name}`, () => {
    it("prepares the summary while later steps run, and the step at the threshold puts it in place without asking for one or waiting", async () => {
      const pkg = await version.load();
      const { server, cwd } = await heldModel(10_000);
      const events: AiSdkCompactionEvent[] = [];
      let ready = 0;
      let readyNow: () => void = () => undefined;
      const { steps, prepareStep } = recordedPrepareStep(server, {
        cwd,
        on: (event) => {
          events.push(event);
          if (event.type === "background" && event.background.type === "ready") {
            ready += 1;
            readyNow();
          }
        },
      });
      // The model's next step takes as long as the summary: the summary is written while the agent goes on.
      const beforeReply = async (step: number) => {
        const started = backgroundOf(events).filter((event) => event.background.type === "start" && (event.stepNumber ?? step) < step).length;
        if (started <= ready) return;
        const answered = new Promise<void>((resolve) => (readyNow = resolve));
        server.release();
        await answered;
        server.hold();
      };
      const { prompts } = await runToolLoop(pkg, "generateText", prepareStep, 14, beforeReply);

      const start = backgroundOf(events).find((event) => event.background.type === "start");
      const applied = appliedOf(events)[0];
      expect(start?.background).toMatchObject({ reason: "prepare" });
      expect(applied).toBeDefined();
      const [k, m] = [start?.stepNumber as number, applied?.stepNumber as number];
      expect(m).toBeGreaterThan(k + 1);
      // Prepared below the threshold, put in place past it, with what the steps between appended.
      expect(applied?.prepared?.tokens).toBeLessThanOrEqual(applied?.threshold as number);
      expect(applied?.tokens).toBeGreaterThan(applied?.threshold as number);
      expect(applied?.prepared?.appended).toBeGreaterThan(0);
      // The one summary was asked for at step k; the step at the threshold asked for none and found none in flight.
      expect(steps.get(m)).toEqual({ asked: 1, askedAfter: 1 });
      expect(server.requests).toHaveLength(backgroundOf(events).filter((event) => event.background.type === "start").length);
      expect(backgroundOf(events).filter((event) => event.background.type === "waiting")).toEqual([]);
      const end = events.find((event) => event.type === "compaction-end" && event.stepNumber === m);
      expect(end?.type === "compaction-end" && end.result.status).toBe("compacted");

      // Step m's prompt: the summary, then what step k's snapshot kept, then every tool result since, verbatim.
      const prompt = prompts[m];
      const text = (prompt?.messages ?? []).map(promptText).join("\n");
      expect(text.includes("held summary 1")).toBe(true);
      const whole = Array.from({ length: m - k }, (_, i) => k + i).filter((step) => !text.includes(JSON.stringify(fileContent(step))));
      expect({ missing: whole }).toEqual({ missing: [] });
      for (const [step, sent] of prompts.entries()) {
        expect({ step, over: sent.tokens > CONTEXT_WINDOW }).toEqual({ step, over: false });
        expect({ step, orphans: orphanedResults(sent) }).toEqual({ step, orphans: [] });
        expect({ step, carriesRequest: carriesRequest(sent) }).toEqual({ step, carriesRequest: true });
      }
    });

    it("with background: false the step at the threshold asks for the summary itself and waits for it", async () => {
      const pkg = await version.load();
      const { server, cwd } = await heldModel(50);
      const events: AiSdkCompactionEvent[] = [];
      const { steps, prepareStep } = recordedPrepareStep(server, { cwd, background: false, on: (event) => events.push(event) });
      await runToolLoop(pkg, "generateText", prepareStep, 14);

      expect(backgroundOf(events)).toEqual([]);
      const start = events.find((event): event is CompactionStartEvent => event.type === "compaction-start");
      expect(start?.prepared).toBeUndefined();
      const m = start?.stepNumber as number;
      // Its summary was asked for, and answered, inside that step's prepareStep.
      expect(steps.get(m)).toEqual({ asked: 0, askedAfter: 1 });
      const end = events.find((event) => event.type === "compaction-end");
      expect(end?.type === "compaction-end" && end.result.status).toBe("compacted");
    });

    it("checks the option: background must be true, false or \"auto\"", () => {
      expect(() => compactionPrepareStep({ background: "soon" as never })).toThrow(
        expect.objectContaining({ code: "COMPACTION_INPUT_INVALID", path: "/background", message: expect.stringContaining("@compaction/ai-sdk") }),
      );
    });
  });
}
