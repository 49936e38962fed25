/**
 * The never-stuck case in pi's real runtime, shared by the tests for pi 0.73.1 and 0.87.1: the
 * newest turn of a real session holds a ~300,000-token tool result, and what pi sends after
 * `session.compact()` must fit the window and hold the request.
 */
import { createPiAdapter, type PiMessage, SHRINK_MARKER_PATTERN } from "@compaction/core";
import { expect } from "vitest";

export const WINDOW = 32_000;
export const REQUEST = "Run the whole test suite and tell me which tests fail.";
export const FOLLOW_UP = "Which of them failed?";

/** The newest turn: the request, a `bash` call, and its result of about 300,000 tokens (chars/4). */
export function hugeTurn(now: number): unknown[] {
  const log = Array.from({ length: 24_000 }, (_, i) => `test ${String(i).padStart(6, "0")} ok ${"x".repeat(30)}`).join("\n");
  return [
    { role: "user", content: [{ type: "text", text: REQUEST }], timestamp: now },
    {
      role: "assistant",
      content: [{ type: "toolCall", id: "huge_call", name: "bash", arguments: { command: "npm test" } }],
      api: "anthropic-messages",
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: "toolUse",
      timestamp: now + 1,
    },
    { role: "toolResult", toolCallId: "huge_call", toolName: "bash", content: [{ type: "text", text: log }], isError: false, timestamp: now + 2 },
  ];
}

/**
 * What pi sent after the compaction and the follow-up prompt: it fits the window, holds both
 * requests verbatim, and the output is shrunk with a marker naming its call. The turn is larger
 * than the window, so it is split: pi's file keeps only a suffix, and the request is carried
 * verbatim in the summary rather than as a message of its own.
 */
export function expectRequestFits(sentMessages: readonly unknown[] | undefined): void {
  const adapter = createPiAdapter();
  const texts = ((sentMessages ?? []) as PiMessage[]).map((m) => adapter.readFacts(m).text);
  const tokens = texts.reduce((sum, t) => sum + Math.ceil(t.length / 4), 0);
  expect(tokens).toBeLessThanOrEqual(WINDOW);
  expect(texts.some((t) => t.includes(REQUEST)), "the request, verbatim, in a message or in the summary").toBe(true);
  expect(texts).toContain(FOLLOW_UP);
  const output = texts.find((t) => t.startsWith("test 000000 ok"));
  expect(output).toMatch(SHRINK_MARKER_PATTERN);
  expect(output).toContain("tool call huge_call");
  expect(output).toContain("test 023999 ok");
}
