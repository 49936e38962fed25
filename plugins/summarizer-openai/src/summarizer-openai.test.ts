import {
  CompactionError,
  Compactor,
  ErrorCodes,
  HISTORY_LAYOUT,
  type SummarizeRequest,
  createEstimateCounter,
  readSummary,
} from "@compaction/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PLUGIN_NAME, createOpenAISummarizer, keyVariable, summarizerOpenAI } from "./summarizer-openai.js";
import { apiError, completion } from "./test-support/chat.js";
import { FORMATS, builders, fact, keepRecent, type ModelServer, type Reply, startModelServer, words } from "@compaction/core/testing";

const KEY_ENV = "COMPACTION_TEST_OPENAI_KEY";
const KEY = "sk-test-openai-NEVER-SHOW-7c1e9b";
const SUMMARY = "## Goal\n- Fix the login bug in src/auth.ts\n\n## Next Steps\n1. Run the tests";
const counter = createEstimateCounter();

let server: ModelServer | undefined;
const savedOpenAIKey = process.env["OPENAI_API_KEY"];

beforeEach(() => {
  process.env[KEY_ENV] = KEY;
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  delete process.env[KEY_ENV];
  if (savedOpenAIKey === undefined) delete process.env["OPENAI_API_KEY"];
  else process.env["OPENAI_API_KEY"] = savedOpenAIKey;
});

async function serve(replies: readonly Reply[] | ((request: any, index: number) => Reply)): Promise<string> {
  server = await startModelServer(replies);
  return `${server.origin}/v1`;
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

const base = { model: "test-model", apiKeyEnv: KEY_ENV, retryDelayMs: 1 } as const;

/** Everything an error exposes, as one string. */
function exposed(error: unknown): string {
  const e = error as CompactionError;
  return JSON.stringify({ message: e.message, hint: e.hint, stack: e.stack, cause: String(e.cause), server: (e.cause as { serverMessage?: string } | undefined)?.serverMessage, plugin: e.plugin });
}

describe("summarizer-openai requests", () => {
  it("POSTs <baseUrl>/chat/completions with the model, temperature, max_tokens and a bearer key", async () => {
    const baseUrl = await serve([completion(SUMMARY)]);
    const text = await createOpenAISummarizer({ ...base, baseUrl, temperature: 0.2, maxTokens: 1234 }).summarize(request());
    expect(text).toBe(SUMMARY);
    const sent = server?.requests[0];
    expect(sent?.method).toBe("POST");
    expect(sent?.path).toBe("/v1/chat/completions");
    expect(sent?.headers["content-type"]).toBe("application/json");
    expect(sent?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent?.body).toMatchObject({ model: "test-model", temperature: 0.2, max_tokens: 1234 });
  });

  it("sends the defaults: temperature 0.3 and max_tokens 4000", async () => {
    const baseUrl = await serve([completion(SUMMARY)]);
    await createOpenAISummarizer({ ...base, baseUrl }).summarize(request());
    expect(server?.requests[0]?.body).toMatchObject({ temperature: 0.3, max_tokens: 4000 });
  });

  it("sends the conversation as a text transcript in one user message, after a system prompt asking for the sections", async () => {
    const baseUrl = await serve([completion(SUMMARY)]);
    await createOpenAISummarizer({ ...base, baseUrl }).summarize(request({ focus: "the auth module" }));
    const messages = server?.requests[0]?.body.messages as Array<{ role: string; content: string }>;
    expect(messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(messages[0]?.content).toMatch(/Do not continue the conversation/);
    const user = messages[1]?.content ?? "";
    expect(user).toContain(
      '[User]: Please fix the login bug\n\n[Assistant]: Reading auth.ts\n[Tool call] read({"path":"src/auth.ts"})\n\n[Tool result] read: export function login() {}',
    );
    for (const entry of HISTORY_LAYOUT) expect(user).toContain(`${"#".repeat(entry.level)} ${entry.title}\n`);
    expect(user).toContain("<focus>the auth module</focus>");
  });

  it("passes the previous summary to be updated on a later compaction", async () => {
    const baseUrl = await serve([completion(SUMMARY)]);
    await createOpenAISummarizer({ ...base, baseUrl }).summarize(request({ previousSummary: "## Goal\n- Ship v2" }));
    const user = server?.requests[0]?.body.messages[1].content as string;
    expect(user).toContain("<previous-summary>\n## Goal\n- Ship v2\n</previous-summary>");
    expect(user).toMatch(/do not summarise the summary again/);
  });

  it("asks for the turn-prefix sections for the early part of a split turn", async () => {
    const baseUrl = await serve([completion("## Original Request\nFix it")]);
    await createOpenAISummarizer({ ...base, baseUrl }).summarize(request({ kind: "turnPrefix" }));
    const user = server?.requests[0]?.body.messages[1].content as string;
    expect(user).toContain("## Original Request\n");
    expect(user).toContain("## Context for Suffix\n");
  });

  it("summarises a large history in several requests, each carrying the previous chunk's summary", async () => {
    const baseUrl = await serve((_request, index) => completion(`## Goal\n- chunk summary ${index + 1}`));
    const messages = Array.from({ length: 10 }, (_, i) => fact("user", { text: `step ${i}: ${words(120)}` }));
    const text = await createOpenAISummarizer({ ...base, baseUrl, maxInputTokens: 1500 }).summarize(
      request({ messages, maxTokens: 300 }),
    );
    const sent = server?.requests ?? [];
    expect(sent.length).toBeGreaterThan(2);
    expect(sent[0]?.body.messages[1].content).not.toContain("<previous-summary>");
    for (let i = 1; i < sent.length; i++) {
      expect(sent[i]?.body.messages[1].content).toContain(`<previous-summary>\n## Goal\n- chunk summary ${i}\n</previous-summary>`);
    }
    expect(text).toBe(`## Goal\n- chunk summary ${sent.length}`);
  });

  it("writes a summary readSummary understands", async () => {
    const baseUrl = await serve([completion(SUMMARY)]);
    const text = await createOpenAISummarizer({ ...base, baseUrl }).summarize(request());
    expect(readSummary(text).slots.goal).toEqual(["Fix the login bug in src/auth.ts"]);
  });
});

describe("summarizer-openai keys", () => {
  it("sends no Authorization to a server other than api.openai.com when apiKeyEnv is not set, even with OPENAI_API_KEY set", async () => {
    process.env["OPENAI_API_KEY"] = KEY;
    const baseUrl = await serve([completion(SUMMARY)]);
    await createOpenAISummarizer({ model: "llama", baseUrl }).summarize(request());
    expect(server?.requests[0]?.headers.authorization).toBeUndefined();
  });

  it("reads OPENAI_API_KEY for api.openai.com when apiKeyEnv is not set", () => {
    expect(keyVariable({ apiKeyEnv: null, baseUrl: "https://api.openai.com/v1" })).toBe("OPENAI_API_KEY");
    expect(keyVariable({ apiKeyEnv: null, baseUrl: "http://localhost:11434/v1" })).toBeNull();
    expect(keyVariable({ apiKeyEnv: "OPENROUTER_API_KEY", baseUrl: "https://openrouter.ai/api/v1" })).toBe("OPENROUTER_API_KEY");
  });

  it("names a missing key variable and sends no request", async () => {
    delete process.env[KEY_ENV];
    const baseUrl = await serve([completion(SUMMARY)]);
    const error = await createOpenAISummarizer({ ...base, baseUrl }).summarize(request()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED });
    expect((error as Error).message).toContain(`environment variable ${KEY_ENV}`);
    expect(server?.requests).toHaveLength(0);
  });

  it("reads the key when it summarises, not when it is created", async () => {
    delete process.env[KEY_ENV];
    const baseUrl = await serve([completion(SUMMARY)]);
    const summarizer = createOpenAISummarizer({ ...base, baseUrl });
    process.env[KEY_ENV] = `${KEY}-later`;
    await summarizer.summarize(request());
    expect(server?.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}-later`);
  });

  it("never shows the key, even when the server echoes it in a 401", async () => {
    const baseUrl = await serve([apiError(401, `Incorrect API key provided: ${KEY}. You can find your API key at ...`)]);
    const error = await createOpenAISummarizer({ ...base, baseUrl }).summarize(request()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED });
    expect((error as Error).message).toContain("Incorrect API key provided: [redacted]");
    expect((error as CompactionError).hint).toContain(`check that ${KEY_ENV} holds a valid key`);
    expect(exposed(error)).not.toContain(KEY);
  });
});

describe("summarizer-openai failures", () => {
  it("retries a 429 after the Retry-After the server asked for, then succeeds", async () => {
    const baseUrl = await serve([apiError(429, "Rate limit reached", { "retry-after": "1" }), completion(SUMMARY)]);
    const text = await createOpenAISummarizer({ ...base, baseUrl }).summarize(request());
    expect(text).toBe(SUMMARY);
    const [first, second] = server?.requests ?? [];
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(950);
  });

  it("honours OpenAI's retry-after-ms header", async () => {
    const baseUrl = await serve([apiError(429, "slow down", { "retry-after-ms": "300" }), completion(SUMMARY)]);
    await createOpenAISummarizer({ ...base, baseUrl }).summarize(request());
    const [first, second] = server?.requests ?? [];
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(280);
  });

  it("fails after maxRetries + 1 answers of HTTP 500 with a coded error naming provider, model, URL, status and message", async () => {
    const baseUrl = await serve([apiError(500, "The server had an error while processing your request.")]);
    const error = await createOpenAISummarizer({ ...base, baseUrl, provider: "local", maxRetries: 2 }).summarize(request()).catch((e: unknown) => e);
    expect(server?.requests).toHaveLength(3);
    expect(error).toBeInstanceOf(CompactionError);
    const failure = error as CompactionError;
    expect(failure.code).toBe(ErrorCodes.SUMMARIZER_FAILED);
    expect(failure.plugin).toBe(PLUGIN_NAME);
    expect(failure.message).toBe(
      `Summarizer 'local:test-model' failed (provider 'local', model 'test-model', POST ${baseUrl}/chat/completions): HTTP 500 Internal Server Error: the server said "The server had an error while processing your request." (after 3 attempts).`,
    );
    expect(failure.hint).toMatch(/fallback: extractive/);
    expect(exposed(error)).not.toContain(KEY);
  });

  it("does not retry a 400 and reports the server's message", async () => {
    const baseUrl = await serve([apiError(400, "max_tokens is too large")]);
    const error = await createOpenAISummarizer({ ...base, baseUrl }).summarize(request()).catch((e: unknown) => e);
    expect(server?.requests).toHaveLength(1);
    expect((error as Error).message).toContain('HTTP 400 Bad Request: the server said "max_tokens is too large"');
  });

  it("fails within timeoutMs when the server never answers", async () => {
    const baseUrl = await serve([{ hang: true }]);
    const started = Date.now();
    const error = await createOpenAISummarizer({ ...base, baseUrl, timeoutMs: 300 }).summarize(request()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED });
    expect((error as Error).message).toContain("no answer within timeoutMs = 300 ms");
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("is cancelled by the request's AbortSignal", async () => {
    const baseUrl = await serve([{ hang: true }]);
    const controller = new AbortController();
    const pending = createOpenAISummarizer({ ...base, baseUrl }).summarize(request({ signal: controller.signal }));
    await server?.nextRequest();
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: ErrorCodes.CANCELLED });
  });

  it("rejects a 200 answer that is not JSON, without retrying", async () => {
    const baseUrl = await serve([{ body: "<html>Bad gateway page</html>" }]);
    const error = await createOpenAISummarizer({ ...base, baseUrl }).summarize(request()).catch((e: unknown) => e);
    expect(server?.requests).toHaveLength(1);
    expect(error).toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED });
    expect((error as Error).message).toContain("not JSON: <html>Bad gateway page</html>");
  });

  it("rejects an answer with empty content, saying why the model stopped", async () => {
    const baseUrl = await serve([completion("", "length")]);
    const error = await createOpenAISummarizer({ ...base, baseUrl }).summarize(request()).catch((e: unknown) => e);
    expect((error as Error).message).toContain("no text in choices[0].message.content (finish_reason: length)");
  });

  it("retries an error object in a 200 answer when its code is retryable (OpenRouter)", async () => {
    const baseUrl = await serve([{ body: { error: { code: 502, message: "Upstream error" } } }, completion(SUMMARY)]);
    expect(await createOpenAISummarizer({ ...base, baseUrl }).summarize(request())).toBe(SUMMARY);
    expect(server?.requests).toHaveLength(2);
  });

  it("retries a refused connection and then says to check the server", async () => {
    const baseUrl = await serve([completion(SUMMARY)]);
    await server?.close();
    const error = await createOpenAISummarizer({ ...base, baseUrl, maxRetries: 1 }).summarize(request()).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/could not reach the server .*ECONNREFUSED.*\(after 2 attempts\)/);
    expect((error as CompactionError).hint).toContain("is running and reachable");
  });
});

describe("summarizer-openai plugin in a compaction", () => {
  const conversation = (b: ReturnType<typeof builders>) => [
    b.user(`Please migrate the database schema. ${words(200)}`),
    b.assistant("Running the migration", [{ id: "m1", name: "bash", args: { command: "npm run migrate" } }]),
    ...b.toolResults([{ id: "m1", text: `migrated 12 tables ${words(200)}` }]),
    b.assistant(`Done. ${words(200)}`),
    b.user("Now add an index on users.email"),
    b.assistant("Adding it"),
  ];

  describe.each(FORMATS)("%s messages", (format) => {
    it("compacts end to end through the local server", async () => {
      const b = builders(format);
      const baseUrl = await serve([completion(SUMMARY)]);
      const compactor = new Compactor({
        adapter: b.adapter,
        tokenCounter: createEstimateCounter(),
        contextWindow: 100_000,
        plugins: [summarizerOpenAI({ ...base, baseUrl }), keepRecent(50)],
      });
      const input = conversation(b);
      const result = await compactor.compact({ messages: input, focus: "the migration" });
      expect(result.status).toBe("compacted");
      expect(result.summary).toBe(SUMMARY);
      expect(result.messages.length).toBeLessThan(input.length);
      const user = server?.requests[0]?.body.messages[1].content as string;
      expect(user).toContain("[User]: Please migrate the database schema.");
      expect(user).toContain('[Tool call] bash({"command":"npm run migrate"})');
      expect(user).toContain("<focus>the migration</focus>");
      expect(JSON.stringify(result)).not.toContain(KEY);
    });

    it("leaves the history untouched when the model fails and no fallback is configured", async () => {
      const b = builders(format);
      const baseUrl = await serve([apiError(503, "overloaded")]);
      const compactor = new Compactor({
        adapter: b.adapter,
        tokenCounter: createEstimateCounter(),
        contextWindow: 100_000,
        plugins: [summarizerOpenAI({ ...base, baseUrl, maxRetries: 1 }), keepRecent(50)],
      });
      const input = conversation(b);
      const result = await compactor.compact({ messages: input });
      expect(result.status).toBe("failed");
      expect(result.messages).toBe(input);
      expect(result.error?.code).toBe(ErrorCodes.SUMMARIZER_FAILED);
      expect(result.reason).toContain("HTTP 503");
      expect(JSON.stringify({ reason: result.reason, error: exposed(result.error) })).not.toContain(KEY);
    });

    it("falls back to the extractive summary with a warning when configured", async () => {
      const b = builders(format);
      const baseUrl = await serve([apiError(500, "boom")]);
      const compactor = new Compactor({
        adapter: b.adapter,
        tokenCounter: createEstimateCounter(),
        contextWindow: 100_000,
        plugins: [summarizerOpenAI({ ...base, baseUrl, maxRetries: 0, fallback: "extractive" }), keepRecent(50)],
      });
      const result = await compactor.compact({ messages: conversation(b) });
      expect(result.status).toBe("compacted");
      expect(result.summary).toContain("## Goal\n- Please migrate the database schema.");
      expect(result.warnings).toEqual([
        expect.stringMatching(/^\[summarizer-openai\] Summarizer 'openai:test-model' failed \(.*HTTP 500.*"boom".*The extractive summarizer wrote this summary instead\.$/),
      ]);
      expect(JSON.stringify(result)).not.toContain(KEY);
    });
  });

  it("replaces the compactor's summarizer in apply", () => {
    const compactor = new Compactor({ adapter: builders("pi").adapter, tokenCounter: createEstimateCounter() });
    compactor.use(summarizerOpenAI({ model: "m", baseUrl: "http://localhost:8080/v1", provider: "llama.cpp" }));
    expect(compactor.summarizer.name).toBe("llama.cpp:m");
  });
});

describe("summarizer-openai for reasoning models", () => {
  it("sends max_completion_tokens and no temperature when configured so", async () => {
    const baseUrl = await serve([completion(SUMMARY)]);
    await createOpenAISummarizer({ ...base, baseUrl, temperature: null, maxTokensParameter: "max_completion_tokens", maxTokens: 900 }).summarize(
      request(),
    );
    const body = server?.requests[0]?.body;
    expect(body.max_completion_tokens).toBe(900);
    expect(body).not.toHaveProperty("max_tokens");
    expect(body).not.toHaveProperty("temperature");
  });
});
