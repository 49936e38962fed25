import { Compactor, type CompactionPlugin, type Summarizer, createEstimateCounter } from "@compaction/core";
import { type Format, builders } from "@compaction/core/testing";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import { type SlidingWindowInput } from "../options.js";
import { slidingWindow } from "../sliding-window.js";

export interface CompactorSetup {
  readonly options?: SlidingWindowInput;
  readonly contextWindow?: number;
  readonly reserveTokens?: number;
  readonly summaryMaxTokens?: number;
  readonly summarizer?: Summarizer;
  readonly plugins?: readonly CompactionPlugin[];
}

/** A compactor for `format` with the chars/4 counter and the sliding-window plugin (after `plugins`). */
export function compactorFor(format: Format, setup: CompactorSetup = {}): Compactor<any> {
  return new Compactor<any>({
    adapter: builders(format).adapter,
    tokenCounter: createEstimateCounter(),
    plugins: [...(setup.plugins ?? []), slidingWindow(setup.options)],
    ...(setup.contextWindow !== undefined ? { contextWindow: setup.contextWindow } : {}),
    // The tests' budgets are the whole window unless they set a reserve.
    reserveTokens: setup.reserveTokens ?? 0,
    ...(setup.summaryMaxTokens !== undefined ? { summaryMaxTokens: setup.summaryMaxTokens } : {}),
    summarizer: setup.summarizer ?? createExtractiveSummarizer(),
  });
}

/** Summed tokens of `messages` as the compactor counts them. */
export function tokensOf(compactor: Compactor<any>, messages: readonly unknown[]): number {
  return compactor.tokens.total(messages);
}
