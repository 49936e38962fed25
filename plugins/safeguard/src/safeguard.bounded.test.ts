import { readSummary } from "@compaction/core";
import { FORMATS, builders } from "@compaction/core/testing";
import { describe, expect, it } from "vitest";
import { safeguard } from "./index.js";
import { type Message, compactorFor, recordingSummarizer, turns } from "./test-support/conversation.js";

const ROUNDS = 10;
const TURNS_PER_ROUND = 4;
const SUMMARY_MAX_TOKENS = 330;

describe.each(FORMATS)("safeguard over %s successive compactions", (format) => {
  const b = builders(format);
  const goal = "Build the invoice exporter: CSV first, then PDF.";

  /** Feeds each result's messages plus new turns into the next compaction, `ROUNDS` times. */
  async function compactRepeatedly(summarizer?: ReturnType<typeof recordingSummarizer>["summarizer"]) {
    const compactor = compactorFor(format, {
      plugins: [safeguard({ keepRecentTokens: 250 })],
      summaryMaxTokens: SUMMARY_MAX_TOKENS,
      ...(summarizer !== undefined ? { summarizer } : {}),
    });
    let messages: Message[] = [b.user(goal), b.assistant("Starting with the CSV exporter.")];
    const summaries: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      messages = [...messages, ...turns(b, round * TURNS_PER_ROUND, (round + 1) * TURNS_PER_ROUND)];
      const result = await compactor.compact({ messages });
      expect(result.status).toBe("compacted");
      summaries.push(result.summary!);
      messages = [...result.messages];
    }
    return { compactor, summaries, messages };
  }

  const modifiedFiles = Array.from({ length: ROUNDS * TURNS_PER_ROUND }, (_, n) => `src/file-${n}.ts`);

  it("keeps every summary within summaryMaxTokens", async () => {
    const { compactor, summaries } = await compactRepeatedly();
    for (const summary of summaries) expect(compactor.tokens.counter.count(summary)).toBeLessThanOrEqual(SUMMARY_MAX_TOKENS);
    // The cap binds: the oldest finished work had to make room for newer items.
    expect(readSummary(summaries.at(-1)!).slots.done.join("\n")).not.toContain("task 0");
  });

  it("keeps the earliest goal through every compaction", async () => {
    const { summaries } = await compactRepeatedly();
    for (const summary of summaries) expect(readSummary(summary).slots.goal).toContain(goal);
  });

  it("lists every file modified before the kept part after the tenth compaction", async () => {
    const { compactor, summaries, messages } = await compactRepeatedly();
    const kept = messages.slice(1).map((m) => compactor.facts.of(m));
    const keptEdits = new Set(kept.flatMap((f) => f.toolCalls.map((c) => (c.arguments as { path?: string }).path ?? JSON.parse(String(c.arguments)).path)));
    const compactedEdits = modifiedFiles.filter((path) => !keptEdits.has(path));
    expect(compactedEdits.length).toBeGreaterThan(30);
    expect(readSummary(summaries.at(-1)!).slots.filesModified).toEqual(expect.arrayContaining(compactedEdits));
  });

  it("keeps one summary message: each compaction replaces the previous summary", async () => {
    const { compactor, messages } = await compactRepeatedly();
    expect(messages.filter((m) => compactor.facts.of(m).kind === "summary")).toHaveLength(1);
  });

  it("carries the file lists through ten summaries of a summarizer that writes prose only", async () => {
    const { summarizer } = recordingSummarizer((request) => `Prose summary of ${request.messages.length} messages.`);
    const { summaries } = await compactRepeatedly(summarizer);
    const last = readSummary(summaries.at(-1)!).slots.filesModified;
    expect(last).toEqual(expect.arrayContaining(modifiedFiles.slice(0, 30)));
  });
});
