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
} from "@compaction/core";
import { assistant, user } from "@compaction/core/testing/pi";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import { type ModelFallback, installModelSummarizer } from "./install-model-summarizer.js";

const broken: Summarizer = {
  name: "broken",
  summarize: async () => {
    throw new CompactionError(ErrorCodes.SUMMARIZER_FAILED, "Summarizer 'broken' failed: HTTP 502.");
  },
};

const plugin = (fallback: ModelFallback): CompactionPlugin => ({
  name: "model",
  apply: (compactor) => installModelSummarizer(compactor, { plugin: "model", fallback, create: () => broken }),
});

const strategy: CompactionPlugin = {
  name: "strategy",
  apply(compactor) {
    compactor.hooks.selectCut.tap("strategy", () => ({ firstKeptIndex: 2 }));
    compactor.hooks.summarize.tapPromise("strategy", async (draft, run) => ({
      ...draft,
      text: await run.summarize(run.historyMessages(), { maxTokens: 300 }),
    }));
  },
};

/** The reply is longer than a summary of it, so a run that compacts it is written (a bigger context is refused). */
const messages = () => [user("Rename the config loader"), assistant(`Renamed loadConfig. ${"Checked every caller and updated its imports. ".repeat(20)}`), user("now test it")];

function compactor(fallback: ModelFallback) {
  return new Compactor<PiMessage>({
    summarizer: createExtractiveSummarizer(),
    adapter: createPiAdapter(),
    tokenCounter: createEstimateCounter(),
    plugins: [plugin(fallback), strategy],
    contextWindow: 100_000,
  });
}

describe("installModelSummarizer", () => {
  it("makes the model summarizer the compactor's", () => {
    expect(compactor("none").summarizer).toBe(broken);
  });

  it("without a fallback, lets the failure leave the history untouched", async () => {
    const input = messages();
    const result = await compactor("none").compact({ messages: input });
    expect(result.status).toBe("failed");
    expect(result.messages).toBe(input);
    expect(result.error?.code).toBe(ErrorCodes.SUMMARIZER_FAILED);
    expect(result.reason).toContain("HTTP 502");
  });

  it("with the extractive fallback, compacts with an extractive summary and a warning", async () => {
    const result = await compactor("extractive").compact({ messages: messages() });
    expect(result.status).toBe("compacted");
    expect(result.summary).toContain("## Goal\n- Rename the config loader");
    expect(result.warnings).toEqual(["[model] Summarizer 'broken' failed: HTTP 502. The extractive summarizer wrote this summary instead."]);
  });
});
