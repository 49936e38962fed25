/** A model summarizer for the background compaction tests, whose every summary waits until the test releases it. */
import type { Summarizer } from "@compaction/core";

/**
 * A model summarizer the test controls: each summary waits until `release()`, after which it
 * answers at once until `hold()` (a compaction may ask for several), or answers at once when `instant`.
 */
export class SlowModel implements Summarizer {
  readonly name = "slow-model";
  calls = 0;
  instant = false;
  #free = false;
  #waiting: Array<() => void> = [];

  async summarize(request: { signal?: AbortSignal }): Promise<string> {
    this.calls += 1;
    if (!this.instant && !this.#free) {
      await new Promise<void>((resolve, reject) => {
        this.#waiting.push(resolve);
        request.signal?.addEventListener("abort", () => reject(request.signal?.reason ?? new Error("aborted")), { once: true });
      });
    }
    return `## Goal\n- model summary ${this.calls}`;
  }

  /** Answers every summary asked for so far, and the next ones until `hold()`. */
  release(): void {
    this.#free = true;
    for (const resolve of this.#waiting.splice(0)) resolve();
  }

  hold(): void {
    this.#free = false;
  }

  get pending(): number {
    return this.#waiting.length;
  }
}
