import { describe, expect, it } from "vitest";
import {
  CompactionError,
  type CompactionPlugin,
  Compactor,
  createEstimateCounter,
  createPiAdapter,
  ErrorCodes,
  type PiMessage,
  type Summarizer,
  type SummarizeRequest,
} from "@compaction/core";
import { fact } from "@compaction/core/testing";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import { assistant, user } from "@compaction/core/testing/pi";
import { relaySummarizerWarnings } from "./warnings.js";
import { withFallback } from "./with-fallback.js";

const request: SummarizeRequest = {
  messages: [fact("user", { text: "Deploy the service to staging" })],
  maxTokens: 500,
  counter: createEstimateCounter(),
  kind: "history",
};

const failing = (message = "Summarizer 'm' failed: HTTP 503."): Summarizer => ({
  name: "m",
  summarize: async () => {
    throw new CompactionError(ErrorCodes.SUMMARIZER_FAILED, message);
  },
});

describe("withFallback", () => {
  it("uses the primary summarizer's summary when it succeeds, without a warning", async () => {
    const warnings: string[] = [];
    const s = withFallback({ name: "m", summarize: async () => "## Goal\n- model" }, createExtractiveSummarizer(), (w) => warnings.push(w));
    expect(await s.summarize(request)).toBe("## Goal\n- model");
    expect(warnings).toEqual([]);
    expect(s.name).toBe("m");
  });

  it("warns with the primary's error and returns the fallback's summary when the primary fails", async () => {
    const warnings: string[] = [];
    const text = await withFallback(failing(), createExtractiveSummarizer(), (w) => warnings.push(w)).summarize(request);
    expect(text).toContain("## Goal\n- Deploy the service to staging");
    expect(warnings).toEqual(["Summarizer 'm' failed: HTTP 503. The extractive summarizer wrote this summary instead."]);
  });

  it("does not cover a cancellation", async () => {
    const warnings: string[] = [];
    const cancelled: Summarizer = {
      name: "m",
      summarize: async () => {
        throw new CompactionError(ErrorCodes.CANCELLED, "cancelled");
      },
    };
    await expect(withFallback(cancelled, createExtractiveSummarizer(), (w) => warnings.push(w)).summarize(request)).rejects.toMatchObject({
      code: ErrorCodes.CANCELLED,
    });
    const aborted = { ...request, signal: AbortSignal.abort() };
    await expect(withFallback(failing(), createExtractiveSummarizer(), (w) => warnings.push(w)).summarize(aborted)).rejects.toMatchObject({
      code: ErrorCodes.SUMMARIZER_FAILED,
    });
    expect(warnings).toEqual([]);
  });
});

/** A model-summarizer plugin: the primary (failing when a message says FAIL) with the extractive fallback. */
function modelPlugin(): CompactionPlugin {
  return {
    name: "model-plugin",
    apply(compactor) {
      const warn = relaySummarizerWarnings(compactor, "model-plugin");
      const primary: Summarizer = {
        name: "m",
        summarize: async (req) => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          if (req.messages.some((m) => m.text.includes("FAIL"))) throw new CompactionError(ErrorCodes.SUMMARIZER_FAILED, "Summarizer 'm' failed.");
          return "## Goal\n- from the model";
        },
      };
      compactor.summarizer = withFallback(primary, createExtractiveSummarizer(), warn);
    },
  };
}

/** A reply longer than a summary of it, so a run that compacts it is written (a bigger context is refused). */
const longReply = () => assistant(`ok. ${"Looked through the parser and its tests. ".repeat(20)}`);

/** Cuts before the last message and summarises the rest with the compactor's summarizer. */
const strategy: CompactionPlugin = {
  name: "strategy",
  apply(compactor) {
    compactor.hooks.selectCut.tap("strategy", (run) => ({ firstKeptIndex: run.messages.length - 1 }));
    compactor.hooks.summarize.tapPromise("strategy", async (draft, run) => ({
      ...draft,
      text: await run.summarize(run.historyMessages(), { maxTokens: 300 }),
    }));
  },
};

function compactor() {
  return new Compactor<PiMessage>({
    summarizer: createExtractiveSummarizer(),
    adapter: createPiAdapter(),
    tokenCounter: createEstimateCounter(),
    plugins: [modelPlugin(), strategy],
    contextWindow: 100_000,
  });
}

describe("relaySummarizerWarnings", () => {
  it("puts the fallback's warning into the run's warnings, prefixed with the plugin's name", async () => {
    const result = await compactor().compact({ messages: [user("FAIL please"), longReply(), user("next")] });
    expect(result.status).toBe("compacted");
    expect(result.summary).toContain("## Goal");
    expect(result.warnings).toEqual(["[model-plugin] Summarizer 'm' failed. The extractive summarizer wrote this summary instead."]);
    expect(result.event?.warnings).toEqual(result.warnings);
  });

  it("gives each of two concurrent runs only its own warnings", async () => {
    const c = compactor();
    const [failed, fine] = await Promise.all([
      c.compact({ messages: [user("FAIL please"), longReply(), user("next")] }),
      c.compact({ messages: [user("all good"), longReply(), user("next")] }),
    ]);
    expect(failed.warnings).toHaveLength(1);
    expect(fine.warnings).toEqual([]);
    expect(fine.summary).toBe("## Goal\n- from the model");
  });
});
