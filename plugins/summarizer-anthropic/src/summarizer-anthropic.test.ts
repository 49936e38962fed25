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
import { ANTHROPIC_VERSION } from "./messages-api.js";
import { PLUGIN_NAME, createAnthropicSummarizer, keyVariable, summarizerAnthropic } from "./summarizer-anthropic.js";
import { apiError, message } from "./test-support/messages.js";
import { FORMATS, builders, fact, keepRecent, type ModelServer, type Reply, startModelServer, words } from "@compaction/core/testing";

const KEY_ENV = "COMPACTION_TEST_ANTHROPIC_KEY";
const KEY = "sk-ant-test-NEVER-SHOW-41d07e";
const SUMMARY = "## Goal\n- Fix the login bug in src/auth.ts\n\n## Next Steps\n1. Run the tests";
const counter = createEstimateCounter();

let server: ModelServer | undefined;
const savedAnthropicKey = process.env["ANTHROPIC_API_KEY"];

beforeEach(() => {
  process.env[KEY_ENV] = KEY;
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  delete process.env[KEY_ENV];
  if (savedAnthropicKey === undefined) delete process.env["ANTHROPIC_API_KEY"];
  else process.env["ANTHROPIC_API_KEY"] = savedAnthropicKey;
});

async function serve(replies: readonly Reply[] | ((request: any, index: number) => Reply)): Promise<string> {
  server = await startModelServer(replies);
  return server.origin;
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

const base = { model: "claude-test", apiKeyEnv: KEY_ENV, retryDelayMs: 1 } as const;

function exposed(error: unknown): string {
  const e = error as CompactionError;
  return JSON.stringify({ message: e.message, hint: e.hint, stack: e.stack, cause: String(e.cause), server: (e.cause as { serverMessage?: string } | undefined)?.serverMessage, plugin: e.plugin });
}

describe("summarizer-anthropic requests", () => {
  it("POSTs <baseUrl>/v1/messages with x-api-key, anthropic-version, the model, temperature and max_tokens", async () => {
    const baseUrl = await serve([message([SUMMARY])]);
    const text = await createAnthropicSummarizer({ ...base, baseUrl, temperature: 0.1, maxTokens: 2048 }).summarize(request());
    expect(text).toBe(SUMMARY);
    const sent = server?.requests[0];
    expect(sent?.method).toBe("POST");
    expect(sent?.path).toBe("/v1/messages");
    expect(sent?.headers["x-api-key"]).toBe(KEY);
    expect(sent?.headers["anthropic-version"]).toBe(ANTHROPIC_VERSION);
    expect(sent?.headers["content-type"]).toBe("application/json");
    expect(sent?.headers.authorization).toBeUndefined();
    expect(sent?.body).toMatchObject({ model: "claude-test", temperature: 0.1, max_tokens: 2048 });
  });

  it("sends the defaults: temperature 0.3 and max_tokens 4000", async () => {
    const baseUrl = await serve([message([SUMMARY])]);
    await createAnthropicSummarizer({ ...base, baseUrl }).summarize(request());
    expect(server?.requests[0]?.body).toMatchObject({ temperature: 0.3, max_tokens: 4000 });
  });

  it("sends the system prompt as `system` and the transcript as one user message asking for the sections", async () => {
    const baseUrl = await serve([message([SUMMARY])]);
    await createAnthropicSummarizer({ ...base, baseUrl }).summarize(request({ focus: "the auth module" }));
    const body = server?.requests[0]?.body;
    expect(body.system).toMatch(/Do not continue the conversation/);
    expect(body.messages).toHaveLength(1);
    expect(body.messages[0].role).toBe("user");
    const user = body.messages[0].content as string;
    expect(user).toContain(
      '[User]: Please fix the login bug\n\n[Assistant]: Reading auth.ts\n[Tool call] read({"path":"src/auth.ts"})\n\n[Tool result] read: export function login() {}',
    );
    for (const entry of HISTORY_LAYOUT) expect(user).toContain(`${"#".repeat(entry.level)} ${entry.title}\n`);
    expect(user).toContain("<focus>the auth module</focus>");
  });

  it("passes the previous summary to be updated on a later compaction", async () => {
    const baseUrl = await serve([message([SUMMARY])]);
    await createAnthropicSummarizer({ ...base, baseUrl }).summarize(request({ previousSummary: "## Goal\n- Ship v2" }));
    const user = server?.requests[0]?.body.messages[0].content as string;
    expect(user).toContain("<previous-summary>\n## Goal\n- Ship v2\n</previous-summary>");
    expect(user).toMatch(/do not summarise the summary again/);
  });

  it("joins the text blocks of the answer and skips other blocks", async () => {
    const baseUrl = await serve([
      { body: { type: "message", content: [{ type: "thinking", thinking: "hmm" }, { type: "text", text: "## Goal\n" }, { type: "text", text: "- x" }] } },
    ]);
    expect(await createAnthropicSummarizer({ ...base, baseUrl }).summarize(request())).toBe("## Goal\n- x");
  });

  it("summarises a large history in several requests, each carrying the previous chunk's summary", async () => {
    const baseUrl = await serve((_request, index) => message([`## Goal\n- chunk summary ${index + 1}`]));
    const messages = Array.from({ length: 10 }, (_, i) => fact("user", { text: `step ${i}: ${words(120)}` }));
    const text = await createAnthropicSummarizer({ ...base, baseUrl, maxInputTokens: 1500 }).summarize(
      request({ messages, maxTokens: 300 }),
    );
    const sent = server?.requests ?? [];
    expect(sent.length).toBeGreaterThan(2);
    expect(sent[0]?.body.messages[0].content).not.toContain("<previous-summary>");
    for (let i = 1; i < sent.length; i++) {
      expect(sent[i]?.body.messages[0].content).toContain(`<previous-summary>\n## Goal\n- chunk summary ${i}\n</previous-summary>`);
    }
    expect(text).toBe(`## Goal\n- chunk summary ${sent.length}`);
  });

  it("writes a summary readSummary understands", async () => {
    const baseUrl = await serve([message([SUMMARY])]);
    const text = await createAnthropicSummarizer({ ...base, baseUrl }).summarize(request());
    expect(readSummary(text).slots.nextSteps).toEqual(["Run the tests"]);
  });
});

describe("summarizer-anthropic keys", () => {
  it("sends no x-api-key to a server other than api.anthropic.com when apiKeyEnv is not set, even with ANTHROPIC_API_KEY set", async () => {
    process.env["ANTHROPIC_API_KEY"] = KEY;
    const baseUrl = await serve([message([SUMMARY])]);
    await createAnthropicSummarizer({ model: "local", baseUrl }).summarize(request());
    expect(server?.requests[0]?.headers["x-api-key"]).toBeUndefined();
  });

  it("reads ANTHROPIC_API_KEY for api.anthropic.com when apiKeyEnv is not set", () => {
    expect(keyVariable({ apiKeyEnv: null, baseUrl: "https://api.anthropic.com" })).toBe("ANTHROPIC_API_KEY");
    expect(keyVariable({ apiKeyEnv: null, baseUrl: "http://localhost:4000" })).toBeNull();
  });

  it("names a missing key variable and sends no request", async () => {
    delete process.env[KEY_ENV];
    const baseUrl = await serve([message([SUMMARY])]);
    const error = await createAnthropicSummarizer({ ...base, baseUrl }).summarize(request()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED });
    expect((error as Error).message).toContain(`environment variable ${KEY_ENV}`);
    expect(server?.requests).toHaveLength(0);
  });

  it("never shows the key, even when the server echoes it in a 401", async () => {
    const baseUrl = await serve([apiError(401, "authentication_error", `invalid x-api-key ${KEY}`)]);
    const error = await createAnthropicSummarizer({ ...base, baseUrl }).summarize(request()).catch((e: unknown) => e);
    expect((error as Error).message).toContain('the server said "authentication_error: invalid x-api-key [redacted]"');
    expect(exposed(error)).not.toContain(KEY);
  });
});

describe("summarizer-anthropic failures", () => {
  it("retries a 429 after the Retry-After the server asked for, then succeeds", async () => {
    const baseUrl = await serve([apiError(429, "rate_limit_error", "Number of requests has exceeded your rate limit", { "retry-after": "1" }), message([SUMMARY])]);
    expect(await createAnthropicSummarizer({ ...base, baseUrl }).summarize(request())).toBe(SUMMARY);
    const [first, second] = server?.requests ?? [];
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(950);
  });

  it("retries a 529 overloaded answer", async () => {
    const baseUrl = await serve([apiError(529, "overloaded_error", "Overloaded"), message([SUMMARY])]);
    expect(await createAnthropicSummarizer({ ...base, baseUrl }).summarize(request())).toBe(SUMMARY);
    expect(server?.requests).toHaveLength(2);
  });

  it("fails after maxRetries + 1 answers of HTTP 500 with a coded error naming provider, model, URL, status and message", async () => {
    const baseUrl = await serve([apiError(500, "api_error", "Internal server error")]);
    const error = await createAnthropicSummarizer({ ...base, baseUrl, maxRetries: 2 }).summarize(request()).catch((e: unknown) => e);
    expect(server?.requests).toHaveLength(3);
    const failure = error as CompactionError;
    expect(failure.code).toBe(ErrorCodes.SUMMARIZER_FAILED);
    expect(failure.plugin).toBe(PLUGIN_NAME);
    expect(failure.message).toBe(
      `Summarizer 'anthropic:claude-test' failed (provider 'anthropic', model 'claude-test', POST ${baseUrl}/v1/messages): HTTP 500 Internal Server Error: the server said "api_error: Internal server error" (after 3 attempts).`,
    );
    expect(exposed(error)).not.toContain(KEY);
  });

  it("does not retry a 400 and reports the server's message", async () => {
    const baseUrl = await serve([apiError(400, "invalid_request_error", "max_tokens: must be at most 8192")]);
    const error = await createAnthropicSummarizer({ ...base, baseUrl }).summarize(request()).catch((e: unknown) => e);
    expect(server?.requests).toHaveLength(1);
    expect((error as Error).message).toContain("invalid_request_error: max_tokens: must be at most 8192");
  });

  it("fails within timeoutMs when the server never answers", async () => {
    const baseUrl = await serve([{ hang: true }]);
    const started = Date.now();
    const error = await createAnthropicSummarizer({ ...base, baseUrl, timeoutMs: 300 }).summarize(request()).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED });
    expect((error as Error).message).toContain("no answer within timeoutMs = 300 ms");
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("is cancelled by the request's AbortSignal", async () => {
    const baseUrl = await serve([{ hang: true }]);
    const controller = new AbortController();
    const pending = createAnthropicSummarizer({ ...base, baseUrl }).summarize(request({ signal: controller.signal }));
    await server?.nextRequest();
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: ErrorCodes.CANCELLED });
  });

  it("rejects a 200 answer that is not JSON, without retrying", async () => {
    const baseUrl = await serve([{ body: "upstream connect error" }]);
    const error = await createAnthropicSummarizer({ ...base, baseUrl }).summarize(request()).catch((e: unknown) => e);
    expect(server?.requests).toHaveLength(1);
    expect((error as Error).message).toContain("not JSON: upstream connect error");
  });

  it("rejects an answer without text, saying why the model stopped", async () => {
    const baseUrl = await serve([message([], "max_tokens")]);
    const error = await createAnthropicSummarizer({ ...base, baseUrl }).summarize(request()).catch((e: unknown) => e);
    expect((error as Error).message).toContain("no text blocks in content (stop_reason: max_tokens)");
  });

  it("retries an overloaded error carried by a 200 answer", async () => {
    const baseUrl = await serve([{ body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } }, message([SUMMARY])]);
    expect(await createAnthropicSummarizer({ ...base, baseUrl }).summarize(request())).toBe(SUMMARY);
    expect(server?.requests).toHaveLength(2);
  });
});

describe("summarizer-anthropic plugin in a compaction", () => {
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
      const baseUrl = await serve([message([SUMMARY])]);
      const compactor = new Compactor({
        adapter: b.adapter,
        tokenCounter: createEstimateCounter(),
        contextWindow: 100_000,
        plugins: [summarizerAnthropic({ ...base, baseUrl }), keepRecent(50)],
      });
      const input = conversation(b);
      const result = await compactor.compact({ messages: input, focus: "the migration" });
      expect(result.status).toBe("compacted");
      expect(result.summary).toBe(SUMMARY);
      expect(result.messages.length).toBeLessThan(input.length);
      const user = server?.requests[0]?.body.messages[0].content as string;
      expect(user).toContain("[User]: Please migrate the database schema.");
      expect(user).toContain('[Tool call] bash({"command":"npm run migrate"})');
      expect(user).toContain("<focus>the migration</focus>");
      expect(JSON.stringify(result)).not.toContain(KEY);
    });

    it("leaves the history untouched when the model fails and no fallback is configured", async () => {
      const b = builders(format);
      const baseUrl = await serve([apiError(529, "overloaded_error", "Overloaded")]);
      const compactor = new Compactor({
        adapter: b.adapter,
        tokenCounter: createEstimateCounter(),
        contextWindow: 100_000,
        plugins: [summarizerAnthropic({ ...base, baseUrl, maxRetries: 1 }), keepRecent(50)],
      });
      const input = conversation(b);
      const result = await compactor.compact({ messages: input });
      expect(result.status).toBe("failed");
      expect(result.messages).toBe(input);
      expect(result.error?.code).toBe(ErrorCodes.SUMMARIZER_FAILED);
      expect(result.reason).toContain("HTTP 529");
    });

    it("falls back to the extractive summary with a warning when configured", async () => {
      const b = builders(format);
      const baseUrl = await serve([apiError(500, "api_error", "boom")]);
      const compactor = new Compactor({
        adapter: b.adapter,
        tokenCounter: createEstimateCounter(),
        contextWindow: 100_000,
        plugins: [summarizerAnthropic({ ...base, baseUrl, maxRetries: 0, fallback: "extractive" }), keepRecent(50)],
      });
      const result = await compactor.compact({ messages: conversation(b) });
      expect(result.status).toBe("compacted");
      expect(result.summary).toContain("## Goal\n- Please migrate the database schema.");
      expect(result.warnings).toEqual([
        expect.stringMatching(/^\[summarizer-anthropic\] Summarizer 'anthropic:claude-test' failed \(.*HTTP 500.*api_error: boom.*The extractive summarizer wrote this summary instead\.$/),
      ]);
      expect(JSON.stringify(result)).not.toContain(KEY);
    });
  });

  it("replaces the compactor's summarizer in apply", () => {
    const compactor = new Compactor({ adapter: builders("anthropic").adapter, tokenCounter: createEstimateCounter() });
    compactor.use(summarizerAnthropic({ model: "claude-test" }));
    expect(compactor.summarizer.name).toBe("anthropic:claude-test");
  });
});
