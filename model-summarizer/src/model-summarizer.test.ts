import { afterEach, describe, expect, it } from "vitest";
import { CompactionError, createEstimateCounter, ErrorCodes, type SummarizeRequest } from "@compaction/core";
import { fact } from "@compaction/core/testing";
import { ModelCallError } from "./model-call-error.js";
import { type ModelCompletionRequest, type ModelSummarizerOptions, createModelSummarizer } from "./model-summarizer.js";

const counter = createEstimateCounter();
const KEY_ENV = "COMPACTION_TEST_MODEL_KEY";
const KEY = "sk-test-DO-NOT-LEAK-3f9a1c";

afterEach(() => {
  delete process.env[KEY_ENV];
});

function request(extra: Partial<SummarizeRequest> = {}): SummarizeRequest {
  return {
    messages: [fact("user", { text: "Please fix the login bug" }), fact("assistant", { text: "Looking at auth.ts" })],
    maxTokens: 500,
    counter,
    kind: "history",
    ...extra,
  };
}

function summarizer(complete: ModelSummarizerOptions["complete"], extra: Partial<ModelSummarizerOptions> = {}) {
  return createModelSummarizer({
    provider: "acme",
    model: "m-1",
    url: "http://127.0.0.1:9/v1/chat",
    complete,
    retryDelayMs: 1,
    ...extra,
  });
}

/** Answers each prompt with a summary naming the call, and records the prompts. */
function recorder() {
  const calls: ModelCompletionRequest[] = [];
  const complete = async (req: ModelCompletionRequest) => {
    calls.push(req);
    return `## Goal\n- summary ${calls.length}`;
  };
  return { calls, complete };
}

describe("createModelSummarizer", () => {
  it("sends the conversation as a text transcript and resolves to the model's summary", async () => {
    const { calls, complete } = recorder();
    const text = await summarizer(complete).summarize(request({ focus: "auth" }));
    expect(text).toBe("## Goal\n- summary 1");
    expect(calls).toHaveLength(1);
    expect(calls[0]?.user).toContain("[User]: Please fix the login bug\n\n[Assistant]: Looking at auth.ts");
    expect(calls[0]?.user).toContain("<focus>auth</focus>");
    expect(calls[0]?.system).toMatch(/Do not continue the conversation/);
  });

  it("is named after the provider and model unless given a name", () => {
    expect(summarizer(recorder().complete).name).toBe("acme:m-1");
    expect(summarizer(recorder().complete, { name: "mine" }).name).toBe("mine");
  });

  it("summarises a history too large for one request chunk by chunk, each request updating the summary so far", async () => {
    const { calls, complete } = recorder();
    const messages = Array.from({ length: 12 }, (_, i) => fact("user", { text: `request ${i} ${"word ".repeat(80)}` }));
    const text = await summarizer(complete, { maxInputTokens: 1200 }).summarize(
      request({ messages, previousSummary: "## Goal\n- from before", maxTokens: 200 }),
    );
    expect(calls.length).toBeGreaterThan(2);
    expect(calls[0]?.user).toContain("<previous-summary>\n## Goal\n- from before\n</previous-summary>");
    for (let i = 1; i < calls.length; i++) {
      expect(calls[i]?.user).toContain(`<previous-summary>\n## Goal\n- summary ${i}\n</previous-summary>`);
    }
    for (const call of calls) expect(counter.count(call.system) + counter.count(call.user)).toBeLessThanOrEqual(1200);
    const sent = calls.map((call) => call.user).join("\n");
    for (let i = 0; i < 12; i++) expect(sent).toContain(`request ${i} `);
    expect(text).toBe(`## Goal\n- summary ${calls.length}`);
  });

  it("refuses a maxInputTokens that leaves no room for the conversation", async () => {
    const error = await summarizer(recorder().complete, { maxInputTokens: 600 }).summarize(request()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED, path: "/maxInputTokens" });
  });

  it("returns the previous summary unchanged when no message has anything to summarise", async () => {
    const { calls, complete } = recorder();
    const text = await summarizer(complete).summarize(request({ messages: [fact("assistant")], previousSummary: "## Goal\n- old" }));
    expect(text).toBe("## Goal\n- old");
    expect(calls).toHaveLength(0);
  });

  it("retries a retryable failure and succeeds", async () => {
    let attempts = 0;
    const text = await summarizer(async () => {
      attempts++;
      if (attempts === 1) throw new ModelCallError("HTTP 429 Too Many Requests", { status: 429, retryable: true, retryAfterMs: 1 });
      return "## Goal\n- ok";
    }).summarize(request());
    expect(text).toBe("## Goal\n- ok");
    expect(attempts).toBe(2);
  });

  it("rejects after maxRetries + 1 attempts with provider, model, URL, status, server message and a hint", async () => {
    let attempts = 0;
    const error = await summarizer(
      async () => {
        attempts++;
        throw new ModelCallError("HTTP 500 Internal Server Error", { status: 500, retryable: true, serverMessage: "model crashed" });
      },
      { maxRetries: 2, plugin: "summarizer-acme" },
    )
      .summarize(request())
      .catch((e: unknown) => e);
    expect(attempts).toBe(3);
    expect(error).toBeInstanceOf(CompactionError);
    const failure = error as CompactionError;
    expect(failure.code).toBe(ErrorCodes.SUMMARIZER_FAILED);
    expect(failure.plugin).toBe("summarizer-acme");
    expect(failure.message).toBe(
      `Summarizer 'acme:m-1' failed (provider 'acme', model 'm-1', POST http://127.0.0.1:9/v1/chat): HTTP 500 Internal Server Error: the server said "model crashed" (after 3 attempts).`,
    );
    expect(failure.hint).toMatch(/try again later/);
  });

  it("reads the key from the environment at call time and hands it to complete", async () => {
    const { calls, complete } = recorder();
    const s = summarizer(complete, { apiKeyEnv: KEY_ENV });
    process.env[KEY_ENV] = KEY;
    await s.summarize(request());
    expect(calls[0]?.apiKey).toBe(KEY);
  });

  it("names the missing key variable before calling the model", async () => {
    const { calls, complete } = recorder();
    const error = await summarizer(complete, { apiKeyEnv: KEY_ENV }).summarize(request()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED });
    expect((error as Error).message).toContain(`environment variable ${KEY_ENV}`);
    expect(calls).toHaveLength(0);
  });

  it("never shows the key, even when the server echoes it", async () => {
    process.env[KEY_ENV] = KEY;
    const error = await summarizer(
      async () => {
        throw new ModelCallError("HTTP 401 Unauthorized", { status: 401, serverMessage: `Incorrect API key provided: ${KEY}` });
      },
      { apiKeyEnv: KEY_ENV },
    )
      .summarize(request())
      .catch((e: unknown) => e);
    const failure = error as CompactionError;
    expect(failure.message).toContain("Incorrect API key provided: [redacted]");
    const cause = failure.cause as ModelCallError;
    expect(cause.status).toBe(401);
    expect(JSON.stringify({ message: failure.message, hint: failure.hint, cause: String(cause), server: cause.serverMessage })).not.toContain(KEY);
    expect(failure.hint).toContain(KEY_ENV);
  });

  it("fails when the time limit runs out, within about timeoutMs", async () => {
    const started = Date.now();
    const error = await summarizer(
      (req) =>
        new Promise<string>((_resolve, reject) => {
          req.signal?.addEventListener("abort", () => reject(req.signal?.reason));
        }),
      { timeoutMs: 100 },
    )
      .summarize(request())
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED });
    expect((error as Error).message).toContain("no answer within timeoutMs = 100 ms");
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("rejects with COMPACTION_CANCELLED when the request's signal aborts", async () => {
    const controller = new AbortController();
    const pending = summarizer(
      (req) =>
        new Promise<string>((_resolve, reject) => {
          req.signal?.addEventListener("abort", () => reject(req.signal?.reason));
        }),
    ).summarize(request({ signal: controller.signal }));
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: ErrorCodes.CANCELLED });
  });

  it("rejects an answer with no text", async () => {
    const error = await summarizer(async () => "<think>only thoughts</think>").summarize(request()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED });
    expect((error as Error).message).toContain("the model answered with no text");
  });

  it("trims a summary longer than maxTokens and warns", async () => {
    const warnings: string[] = [];
    const long = `## Goal\n${Array.from({ length: 100 }, (_, i) => `- goal item ${i} with some words`).join("\n")}`;
    const text = await summarizer(async () => long, { onWarning: (message) => warnings.push(message) }).summarize(
      request({ maxTokens: 100 }),
    );
    expect(counter.count(text)).toBeLessThanOrEqual(100);
    expect(text.startsWith("## Goal\n- goal item 0")).toBe(true);
    expect(warnings).toEqual([expect.stringMatching(/more than the 100 asked for/)]);
  });

  it("rejects options it cannot work with", () => {
    expect(() => summarizer(recorder().complete, { maxRetries: -1 })).toThrow(/maxRetries/);
    expect(() => summarizer(recorder().complete, { apiKeyEnv: " " })).toThrow(/apiKeyEnv/);
    expect(() => createModelSummarizer({ provider: "p", model: "", url: "u", complete: recorder().complete })).toThrow(/model/);
  });
});
