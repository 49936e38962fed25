/** "Fall back to the extractive summarizer when configured, with a warning." */
import { CompactionError, describeError, ErrorCodes, type Summarizer, type SummarizeRequest } from "@compaction/core";
import type { SummarizerWarn } from "./warnings.js";

/**
 * A summarizer that asks `primary` and, when it rejects, warns and asks `fallback` instead.
 * A cancellation (the request's signal aborted, or COMPACTION_CANCELLED) is never covered: it
 * rejects as it is. Keeps `primary`'s name.
 */
export function withFallback(primary: Summarizer, fallback: Summarizer, warn: SummarizerWarn): Summarizer {
  return {
    name: primary.name,
    async summarize(request: SummarizeRequest): Promise<string> {
      try {
        return await primary.summarize(request);
      } catch (error) {
        if (request.signal?.aborted || (error instanceof CompactionError && error.code === ErrorCodes.CANCELLED)) throw error;
        warn(`${describeError(error)} The ${fallback.name} summarizer wrote this summary instead.`, request);
        return fallback.summarize(request);
      }
    },
  };
}
