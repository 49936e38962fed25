import { describe, expect, it } from "vitest";
import { isContextOverflowError } from "./overflow.js";

const withStatus = (message: string, status?: number) => Object.assign(new Error(message), status === undefined ? {} : { status });

describe("isContextOverflowError", () => {
  it.each([
    ["Anthropic", withStatus("prompt is too long: 213462 tokens > 200000 maximum", 400)],
    ["Anthropic 413", withStatus('413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}', 413)],
    ["OpenAI", withStatus("Your input exceeds the context window of this model", 400)],
    ["OpenAI code", withStatus("This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.", 400)],
    ["context_length_exceeded", { status: 400, error: { message: "too long", code: "context_length_exceeded" } }],
    ["Google", new Error("The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)")],
    ["xAI", new Error("This model's maximum prompt length is 131072 but the request contains 537812 tokens")],
    ["llama.cpp", new Error("the request exceeds the available context size, try increasing it")],
    ["Cerebras", new Error("400 status code (no body)")],
    ["HTTP 413 alone", withStatus("Payload", 413)],
    ["pi's error message", { stopReason: "error", errorMessage: "prompt is too long: 210000 tokens > 200000 maximum" }],
    ["a wrapped cause", new Error("request failed", { cause: withStatus("too many tokens in the prompt", 400) })],
    ["a plain string", "maximum context length exceeded"],
  ])("recognises %s", (_name, error) => {
    expect(isContextOverflowError(error)).toBe(true);
  });

  it.each([
    ["a rate limit", withStatus("Rate limit reached for requests", 429)],
    ["Bedrock throttling that mentions tokens", new Error("ThrottlingException: Too many tokens, please wait before trying again.")],
    ["HTTP 429 with an overflow-like text", withStatus("too many tokens per minute", 429)],
    ["a server error", withStatus("Internal server error", 500)],
    ["a bad request about something else", withStatus("Invalid tool schema", 400)],
    ["undefined", undefined],
    ["a number", 42],
  ])("does not take %s for an overflow", (_name, error) => {
    expect(isContextOverflowError(error)).toBe(false);
  });
});
