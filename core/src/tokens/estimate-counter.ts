/**
 * The chars/4 estimate pi-coding-agent uses: no start-up cost, no dependencies, roughly right
 * for English prose and code (it over-counts dense code a little, under-counts CJK text).
 */
import { CompactionError, ErrorCodes } from "../errors.js";
import type { TokenCounter } from "./token-counter.js";

/** Estimated tokens of a string: `Math.ceil(text.length / 4)`. */
export function estimateStringTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** A TokenCounter that estimates with chars/4. Counting after `dispose()` throws, as for every counter. */
export function createEstimateCounter(): TokenCounter {
  const name = "estimate:chars/4";
  let disposed = false;
  return {
    name,
    count(text: string): number {
      if (disposed) {
        throw new CompactionError(
          ErrorCodes.INPUT_INVALID,
          `Token counter ${name} was used after dispose(); expected a live counter, found a disposed one.`,
          { hint: "Create a new counter with createEstimateCounter() or stop using this one after dispose()." },
        );
      }
      return estimateStringTokens(text);
    },
    dispose(): void {
      disposed = true;
    },
  };
}
