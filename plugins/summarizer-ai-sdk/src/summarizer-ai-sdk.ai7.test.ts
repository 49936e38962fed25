/**
 * The plugin on ai 7: `ai` resolves to ai 7 for the plugin's own import (ai 7 needs Node 22; CI
 * runs on 22 and 24), with ai 7's MockLanguageModelV3.
 */
import { ErrorCodes } from "@compaction/core";
import { fact } from "@compaction/core/testing";
import { createEstimateCounter } from "@compaction/core";
import { describe, expect, it, vi } from "vitest";

vi.mock("ai", async () => await import("ai7"));

const NODE_MAJOR = Number(process.versions.node.split(".")[0]);

describe.skipIf(NODE_MAJOR < 22)("summarizer-ai-sdk with ai 7", () => {
  it("sends the prompt through ai 7's generateText, retries a 503, and returns the model's text", async () => {
    const ai7 = await import("ai7");
    const { MockLanguageModelV3 } = await import("ai7/test");
    const { createAiSdkSummarizer } = await import("./summarizer-ai-sdk.js");
    expect((await import("ai")).generateText).toBe(ai7.generateText);
    const users: string[] = [];
    const model = new MockLanguageModelV3({
      doGenerate: async (options: { prompt: Array<{ role: string; content: unknown }> }) => {
        const user = options.prompt.find((message) => message.role === "user");
        users.push(JSON.stringify(user?.content));
        if (users.length === 1) {
          throw new ai7.APICallError({ message: "overloaded", url: "https://x", requestBodyValues: {}, statusCode: 503, isRetryable: true });
        }
        return {
          content: [{ type: "text", text: "## Goal\n- Fix the login bug" }],
          finishReason: { unified: "stop", raw: "stop" },
          usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
          warnings: [],
        };
      },
    } as never);
    const summarizer = createAiSdkSummarizer({ model: model as never, retryDelayMs: 1 });
    const summary = await summarizer.summarize({
      messages: [fact("user", { text: "Please fix the login bug" })],
      maxTokens: 500,
      counter: createEstimateCounter(),
      kind: "history",
    });
    expect(summary).toBe("## Goal\n- Fix the login bug");
    expect(users).toHaveLength(2);
    expect(users[1]).toContain("Please fix the login bug");
  });

  it("fails with COMPACTION_SUMMARIZER_FAILED on a 401, without retrying", async () => {
    const ai7 = await import("ai7");
    const { MockLanguageModelV3 } = await import("ai7/test");
    const { createAiSdkSummarizer } = await import("./summarizer-ai-sdk.js");
    let calls = 0;
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        calls++;
        throw new ai7.APICallError({ message: "bad key", url: "https://x", requestBodyValues: {}, statusCode: 401, isRetryable: false });
      },
    } as never);
    const error = await createAiSdkSummarizer({ model: model as never, retryDelayMs: 1 })
      .summarize({ messages: [fact("user", { text: "hi" })], maxTokens: 500, counter: createEstimateCounter(), kind: "history" })
      .catch((thrown: unknown) => thrown);
    expect(calls).toBe(1);
    expect(error).toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED });
  });
});
