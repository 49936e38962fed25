/**
 * A summarizer for the engine's own tests (the core ships none): the previous summary, then the
 * first line (up to 200 characters) of each user and summary message, within the length asked for (the newest lines
 * dropped first). Good enough to see what a run does with a summary; no strategy.
 */
import type { CompactionPlugin } from "../compactor/plugin.js";
import type { SummarizeRequest, Summarizer } from "../summarizer/summarizer.js";

export const listingSummarizer: Summarizer = Object.freeze({
  name: "listing",
  async summarize(request: SummarizeRequest): Promise<string> {
    const lines: string[] = [];
    if (request.previousSummary?.trim()) lines.push(request.previousSummary.trim());
    for (const message of request.messages) {
      if (message.kind !== "user" && message.kind !== "summary") continue;
      const first = message.text.split("\n").find((line) => line.trim() !== "")?.trim();
      if (first !== undefined) lines.push(`- ${first.slice(0, 200)}`);
    }
    while (lines.length > 0 && request.counter.count(lines.join("\n")) > request.maxTokens) lines.pop();
    return lines.join("\n");
  },
});

/** A summarizer plugin whose model is down: every summary throws. `calls()` counts them. */
export function failingSummarizer(): { plugin: CompactionPlugin; calls: () => number } {
  let calls = 0;
  const plugin: CompactionPlugin = {
    name: "failing-summarizer",
    apply(compactor) {
      compactor.summarizer = {
        name: "failing",
        summarize: async () => {
          calls += 1;
          throw new Error("model unavailable");
        },
      };
    },
  };
  return { plugin, calls: () => calls };
}
