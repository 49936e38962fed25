import { ErrorCodes } from "@compaction/core";
import { describe, expect, it } from "vitest";
import { SUMMARIZER_OPENAI_OPTIONS_SCHEMA } from "./options.js";
import { summarizerOpenAI } from "./summarizer-openai.js";

describe("summarizer-openai options", () => {
  it("requires a model", () => {
    expect(() => summarizerOpenAI({} as never)).toThrow(
      expect.objectContaining({ code: ErrorCodes.PLUGIN_OPTIONS_INVALID, path: "/model", plugin: "summarizer-openai" }),
    );
  });

  it("names a misspelt option and suggests the right one", () => {
    expect(() => summarizerOpenAI({ model: "m", baseURL: "http://x" } as never)).toThrow(/Did you mean 'baseUrl'\?/);
  });

  it.each([
    [{ temperature: 3 }, "/temperature"],
    [{ maxTokens: 0 }, "/maxTokens"],
    [{ baseUrl: "localhost:8080" }, "/baseUrl"],
    [{ apiKeyEnv: "sk-abc def" }, "/apiKeyEnv"],
    [{ fallback: "model" }, "/fallback"],
  ])("rejects %j at %s", (options, path) => {
    expect(() => summarizerOpenAI({ model: "m", ...options } as never)).toThrow(expect.objectContaining({ path }));
  });

  it("gives every option a description, and every option but model a default", () => {
    for (const [name, schema] of Object.entries(SUMMARIZER_OPENAI_OPTIONS_SCHEMA.properties)) {
      expect(typeof schema.description, name).toBe("string");
      if (name !== "model") expect("default" in schema, name).toBe(true);
    }
  });
});
