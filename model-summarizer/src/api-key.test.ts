import { describe, expect, it } from "vitest";
import { ErrorCodes } from "@compaction/core";
import { displayUrl, readApiKey, redactSecrets } from "./api-key.js";

describe("readApiKey", () => {
  it("reads the named variable", () => {
    expect(readApiKey("MY_KEY", "openai:m", { MY_KEY: " sk-123 " })).toBe("sk-123");
  });

  it("names the missing variable and nothing else about it", () => {
    let error: unknown;
    try {
      readApiKey("MY_KEY", "openai:m", { MY_KEY: "" });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toMatchObject({ code: ErrorCodes.SUMMARIZER_FAILED, path: "/apiKeyEnv" });
    expect((error as Error).message).toBe("Summarizer 'openai:m' needs an API key in the environment variable MY_KEY, but MY_KEY is not set.");
  });
});

describe("redactSecrets", () => {
  it("replaces every occurrence of the key", () => {
    expect(redactSecrets("bad key sk-abcdef, really sk-abcdef", ["sk-abcdef", undefined])).toBe("bad key [redacted], really [redacted]");
  });
});

describe("displayUrl", () => {
  it("drops credentials, query and fragment", () => {
    expect(displayUrl("https://user:pw@example.com/v1/chat?key=secret#x")).toBe("https://example.com/v1/chat");
  });
});
