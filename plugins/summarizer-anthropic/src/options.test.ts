import { ErrorCodes } from "@compaction/core";
import { describe, expect, it } from "vitest";
import { SUMMARIZER_ANTHROPIC_OPTIONS_SCHEMA } from "./options.js";
import { summarizerAnthropic } from "./summarizer-anthropic.js";

describe("summarizer-anthropic options", () => {
  it("requires a model", () => {
    expect(() => summarizerAnthropic({} as never)).toThrow(
      expect.objectContaining({ code: ErrorCodes.PLUGIN_OPTIONS_INVALID, path: "/model", plugin: "summarizer-anthropic" }),
    );
  });

  it("names a misspelt option and suggests the right one", () => {
    expect(() => summarizerAnthropic({ model: "m", maxToken: 10 } as never)).toThrow(/Did you mean 'maxTokens'\?/);
  });

  it.each([
    [{ temperature: 1.5 }, "/temperature"],
    [{ maxTokens: 0 }, "/maxTokens"],
    [{ baseUrl: "api.anthropic.com" }, "/baseUrl"],
    [{ apiKeyEnv: "sk-ant-xyz" }, "/apiKeyEnv"],
    [{ fallback: "yes" }, "/fallback"],
  ])("rejects %j at %s", (options, path) => {
    expect(() => summarizerAnthropic({ model: "m", ...options } as never)).toThrow(expect.objectContaining({ path }));
  });

  it("gives every option a description, and every option but model a default", () => {
    for (const [name, schema] of Object.entries(SUMMARIZER_ANTHROPIC_OPTIONS_SCHEMA.properties)) {
      expect(typeof schema.description, name).toBe("string");
      if (name !== "model") expect("default" in schema, name).toBe(true);
    }
  });
});
