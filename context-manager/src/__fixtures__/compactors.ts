/**
 * Compactors and conversations for the context manager's tests: chars/4 counting, a plugin that
 * keeps the newest messages that fit a token budget and writes a short fixed summary, and a gate
 * that holds a compaction open until the test releases it.
 */
import {
  type CompactionPlugin,
  Compactor,
  createEstimateCounter,
  createPiAdapter,
  findCutPoint,
  type PiMessage,
} from "@compaction/core";
import { assistant, user, words } from "@compaction/core/testing/pi";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";

/** Cuts to keep at most `keepRecentTokens` of the newest messages; the summary says how many it replaced. */
export function keepRecent(keepRecentTokens: number, options: { gate?: Gate; name?: string; summary?: string } = {}): CompactionPlugin {
  const name = options.name ?? "keep-recent";
  return {
    name,
    apply(compactor) {
      compactor.hooks.selectCut.tapPromise(name, async (run) => {
        await options.gate?.wait();
        return findCutPoint(run.view, { keepRecentTokens });
      });
      compactor.hooks.summarize.tapPromise(name, async (draft) => ({ ...draft, text: options.summary ?? "summary of the earlier conversation" }));
    },
  };
}

/** A plugin that never chooses a cut (every compaction is a noop). */
export const neverCuts: CompactionPlugin = { name: "never-cuts", apply() {} };

export interface PiCompactorOptions {
  readonly plugins?: readonly CompactionPlugin[];
  readonly contextWindow?: number;
  readonly threshold?: number;
  readonly enabled?: boolean;
  readonly reserveTokens?: number;
}

/** A pi-format compactor with chars/4 counting; default: keep 200 recent tokens, window 1,000, threshold 0.8. */
export function piCompactor(options: PiCompactorOptions = {}): Compactor<PiMessage> {
  return new Compactor<PiMessage>({
    summarizer: createExtractiveSummarizer(),
    adapter: createPiAdapter(),
    tokenCounter: createEstimateCounter(),
    plugins: options.plugins ?? [keepRecent(200)],
    contextWindow: options.contextWindow ?? 1000,
    reserveTokens: options.reserveTokens ?? 0,
    autoCompact: { enabled: options.enabled ?? true, threshold: options.threshold ?? 0.8 },
  });
}

/** One user/assistant exchange of about `tokens` tokens in all (chars/4 of "alpha alpha ..."). */
export function exchange(tokens: number, label = "turn"): PiMessage[] {
  const half = Math.max(1, Math.round((tokens * 4) / 2 / 6));
  return [user(`${label} ${words(half)}`), assistant(`${label} ${words(half)}`)];
}

/** A promise the test opens: `wait()` blocks until `open()`; `entered` resolves at the first `wait()`. */
export class Gate {
  #open!: () => void;
  #entered!: () => void;
  readonly #opened = new Promise<void>((resolve) => (this.#open = resolve));
  readonly entered = new Promise<void>((resolve) => (this.#entered = resolve));

  wait(): Promise<void> {
    this.#entered();
    return this.#opened;
  }

  open(): void {
    this.#open();
  }
}
