import { Compactor, createEstimateCounter, ErrorCodes, type SummarizeRequest } from "@compaction/core";
import { builders, fact, FORMATS, keepRecent, words } from "@compaction/core/testing";
import { SUMMARY_SYSTEM_PROMPT } from "@compaction/model-summarizer";
import { APICallError } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { createAiSdkSummarizer, PLUGIN_NAME, summarizerAiSdk } from "./summarizer-ai-sdk.js";

const SUMMARY = "## Goal\n- Fix the login bug in src/auth.ts\n\n## Next Steps\n1. Run the tests";
const counter = createEstimateCounter();

interface Call {
  readonly system: string;
  readonly user: string;
  readonly temperature: number | undefined;
  readonly maxOutputTokens: number | undefined;
  readonly providerOptions: unknown;
}

/** A mock model answering with `answers` in turn (an Error is thrown), recording each call. */
function model(answers: ReadonlyArray<string | Error>) {
  const calls: Call[] = [];
  const mock = new MockLanguageModelV3({
    provider: "mock-provider",
    modelId: "mock-model",
    doGenerate: async (options) => {
      const system = options.prompt.find((message) => message.role === "system");
      const user = options.prompt.find((message) => message.role === "user");
      calls.push({
        system: typeof system?.content === "string" ? system.content : "",
        user: Array.isArray(user?.content) ? user.content.map((part) => (part.type === "text" ? part.text : "")).join("") : "",
        temperature: options.temperature,
        maxOutputTokens: options.maxOutputTokens,
        providerOptions: options.providerOptions,
      });
      const answer = answers[Math.min(calls.length - 1, answers.length - 1)];
      if (answer instanceof Error) throw answer;
      return {
        content: [{ type: "text", text: answer ?? "" }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 10, text: 10, reasoning: 0 } },
        warnings: [],
      };
    },
  });
  return { model: mock, calls };
}

function overloaded(status = 503): APICallError {
  return new APICallError({
    message: "Service Unavailable",
    url: "https://api.example.com/v1/chat",
    requestBodyValues: {},
    statusCode: status,
    responseHeaders: { "retry-after-ms": "1" },
    responseBody: '{"error":"overloaded"}',
    isRetryable: status === 429 || status >= 500,
  });
}

function request(extra: Partial<SummarizeRequest> = {}): SummarizeRequest {
  return {
    messages: [
      fact("user", { text: "Please fix the login bug" }),
      fact("assistant", { text: "Reading auth.ts", toolCalls: [{ id: "c1", name: "read", arguments: { path: "src/auth.ts" } }] }),
      fact("toolResult", { text: "export function login() {}", toolResultIds: ["c1"], toolName: "read" }),
    ],
    maxTokens: 1000,
    counter,
    kind: "history",
    ...extra,
  };
}

describe("summarizer-ai-sdk: the request", () => {
  it("sends the summary prompt (system instructions, the conversation as a transcript) with the settings, and returns the model's text", async () => {
    const { model: mock, calls } = model([SUMMARY]);
    const summarizer = createAiSdkSummarizer({ model: mock, temperature: 0.1, maxOutputTokens: 800, providerOptions: { mock: { effort: "low" } } });
    expect(summarizer.name).toBe("mock-provider:mock-model");
    expect(await summarizer.summarize(request({ focus: "the login flow", previousSummary: "## Goal\n- Earlier goal" }))).toBe(SUMMARY);
    expect(calls).toHaveLength(1);
    const call = calls[0] as Call;
    expect(call.system).toBe(SUMMARY_SYSTEM_PROMPT);
    expect(call.user).toContain("Please fix the login bug");
    expect(call.user).toContain("src/auth.ts");
    expect(call.user).toContain("the login flow");
    expect(call.user).toContain("Earlier goal");
    expect(call).toMatchObject({ temperature: 0.1, maxOutputTokens: 800, providerOptions: { mock: { effort: "low" } } });
  });

  it("sends no temperature when it is null", async () => {
    const { model: mock, calls } = model([SUMMARY]);
    await createAiSdkSummarizer({ model: mock, temperature: null }).summarize(request());
    expect(calls[0]?.temperature).toBeUndefined();
  });
});

describe("summarizer-ai-sdk: failures", () => {
  it("retries a retryable API error (503) with backoff and then succeeds", async () => {
    const { model: mock, calls } = model([overloaded(), overloaded(429), SUMMARY]);
    expect(await createAiSdkSummarizer({ model: mock, retryDelayMs: 1 }).summarize(request())).toBe(SUMMARY);
    expect(calls).toHaveLength(3);
  });

  it("does not retry a client error (400) and fails with COMPACTION_SUMMARIZER_FAILED naming the provider, model and status", async () => {
    const { model: mock, calls } = model([overloaded(400)]);
    const error = await createAiSdkSummarizer({ model: mock, retryDelayMs: 1 }).summarize(request()).catch((thrown: unknown) => thrown);
    expect(calls).toHaveLength(1);
    expect(error).toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED, plugin: PLUGIN_NAME });
    expect((error as Error).message).toMatch(/mock-provider.*mock-model.*400/);
  });

  it("gives up after maxRetries", async () => {
    const { model: mock, calls } = model([overloaded()]);
    const error = await createAiSdkSummarizer({ model: mock, retryDelayMs: 1, maxRetries: 2 }).summarize(request()).catch((thrown: unknown) => thrown);
    expect(calls).toHaveLength(3);
    expect(error).toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED, message: expect.stringContaining("after 3 attempts") });
  });

  it("fails on an empty answer instead of writing an empty summary", async () => {
    const { model: mock } = model(["   "]);
    await expect(createAiSdkSummarizer({ model: mock }).summarize(request())).rejects.toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED });
  });
});

describe("summarizer-ai-sdk as a plugin", () => {
  for (const format of FORMATS) {
    it(`${format}: a failing model leaves the history untouched (fallback none)`, async () => {
      const b = builders(format);
      const messages = [b.user(words(300, "ask")), b.assistant(words(300, "answer")), b.user(words(300, "more")), b.assistant(words(300, "done"))];
      const { model: mock } = model([overloaded(500)]);
      const compactor = new Compactor<any>({
        adapter: b.adapter,
        tokenCounter: createEstimateCounter(),
        plugins: [keepRecent(200), summarizerAiSdk({ model: mock, retryDelayMs: 1, maxRetries: 1 })],
      });
      const result = await compactor.compact({ messages, contextWindow: 100_000 });
      expect(result).toMatchObject({ status: "failed", error: { code: ErrorCodes.SUMMARIZER_FAILED } });
      expect(result.messages).toBe(messages);
    });
  }

  it("summarises a compaction with the model's text", async () => {
    const b = builders("openai");
    const messages = [b.user(words(300, "ask")), b.assistant(words(300, "answer")), b.user(words(300, "more")), b.assistant(words(300, "done"))];
    const { model: mock, calls } = model([SUMMARY]);
    const compactor = new Compactor<any>({ adapter: b.adapter, tokenCounter: createEstimateCounter(), plugins: [keepRecent(200), summarizerAiSdk({ model: mock })] });
    const result = await compactor.compact({ messages, contextWindow: 100_000 });
    expect(result.status).toBe("compacted");
    expect(result.summary).toContain("Fix the login bug");
    expect(calls.length).toBeGreaterThan(0);
  });

  it("falls back to the extractive summary with a warning when asked to (fallback extractive)", async () => {
    const b = builders("pi");
    const messages = [b.user(words(300, "ask")), b.assistant(words(300, "answer")), b.user(words(300, "more")), b.assistant(words(300, "done"))];
    const { model: mock } = model([overloaded(400)]);
    const compactor = new Compactor<any>({
      adapter: b.adapter,
      tokenCounter: createEstimateCounter(),
      plugins: [keepRecent(200), summarizerAiSdk({ model: mock, fallback: "extractive" })],
    });
    const result = await compactor.compact({ messages, contextWindow: 100_000 });
    expect(result.status).toBe("compacted");
    expect(result.warnings.join("\n")).toContain(PLUGIN_NAME);
  });
});

describe("summarizer-ai-sdk options", () => {
  it.each([
    [{}, "/model"],
    [{ model: 42 }, "/model"],
    [{ model: "openai/gpt-4o-mini", providerOptions: "fast" }, "/providerOptions"],
    [{ model: "openai/gpt-4o-mini", maxRetries: -1 }, "/maxRetries"],
    [{ model: "openai/gpt-4o-mini", maxOutputToken: 10 }, "/maxOutputToken"],
  ])("rejects %j with COMPACTION_PLUGIN_OPTIONS_INVALID at %s", (options, path) => {
    expect(() => summarizerAiSdk(options as never)).toThrowError(expect.objectContaining({ code: ErrorCodes.PLUGIN_OPTIONS_INVALID, path, plugin: PLUGIN_NAME }));
  });

  it("suggests the nearest option name", () => {
    expect(() => summarizerAiSdk({ model: "m", maxOutputToken: 10 } as never)).toThrowError(/maxOutputTokens/);
  });
});
