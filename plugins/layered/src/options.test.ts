import { CompactionError, ErrorCodes } from "@compaction/core";
import { describe, expect, it } from "vitest";
import { layered, resolveLayeredOptions } from "./layered.js";
import { LAYERED_OPTIONS_SCHEMA } from "./options.js";

const DEFAULTS = {
  pruneThreshold: 0.8,
  pruneMinToolTokens: 50000,
  pruneProtectTokens: 40000,
  pruneMinSavings: 20000,
  summarizeThreshold: 0.88,
  summarizeProtectTokens: 25000,
  fullThreshold: 0.95,
  summaryMaxTokens: null,
  chunkTokens: 100000,
};

function optionsError(options: unknown): CompactionError {
  try {
    resolveLayeredOptions(options as never);
  } catch (error) {
    if (error instanceof CompactionError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(options)} to be rejected`);
}

describe("layered options", () => {
  it("fill in the issue's defaults, leaving summaryMaxTokens to the compactor (null)", () => {
    expect(resolveLayeredOptions()).toEqual(DEFAULTS);
    expect(resolveLayeredOptions().summaryMaxTokens).toBeNull();
  });

  it("treat an undefined or null summaryMaxTokens as the compactor's (null)", () => {
    expect(resolveLayeredOptions({ summaryMaxTokens: undefined }).summaryMaxTokens).toBeNull();
    expect(resolveLayeredOptions({ summaryMaxTokens: null }).summaryMaxTokens).toBeNull();
  });

  it("keep every option the caller sets and fill in the rest", () => {
    expect(resolveLayeredOptions({ pruneMinSavings: 5, summaryMaxTokens: 800 })).toEqual({
      ...DEFAULTS,
      pruneMinSavings: 5,
      summaryMaxTokens: 800,
    });
  });

  it("never write the defaults into the caller's object", () => {
    const given = { pruneThreshold: 0.5 };
    resolveLayeredOptions(given);
    expect(given).toEqual({ pruneThreshold: 0.5 });
  });

  it("accept 1 as a threshold (only a context over the window triggers it)", () => {
    expect(resolveLayeredOptions({ fullThreshold: 1 }).fullThreshold).toBe(1);
  });

  it.each([
    ["pruneThreshold", 0],
    ["summarizeThreshold", -0.1],
    ["fullThreshold", 1.2],
    ["fullThreshold", "0.95"],
  ])("reject %s = %j, a threshold outside (0, 1]", (name, value) => {
    const error = optionsError({ [name]: value });
    expect(error.code).toBe(ErrorCodes.PLUGIN_OPTIONS_INVALID);
    expect(error.plugin).toBe("layered");
    expect(error.path).toBe(`/${name}`);
  });

  it.each([
    ["pruneMinToolTokens", -1],
    ["pruneProtectTokens", 1.5],
    ["pruneMinSavings", "20000"],
    ["summarizeProtectTokens", -5],
    ["summaryMaxTokens", 0],
    ["chunkTokens", 0],
  ])("reject %s = %j, not a token amount", (name, value) => {
    const error = optionsError({ [name]: value });
    expect(error.code).toBe(ErrorCodes.PLUGIN_OPTIONS_INVALID);
    expect(error.path).toBe(`/${name}`);
  });

  it("reject a prune threshold at or above the summarize threshold, naming both values", () => {
    const error = optionsError({ pruneThreshold: 0.9 });
    expect(error.code).toBe(ErrorCodes.PLUGIN_OPTIONS_INVALID);
    expect(error.path).toBe("/summarizeThreshold");
    expect(error.message).toContain("pruneThreshold (0.9) is not below summarizeThreshold (0.88)");
    expect(optionsError({ pruneThreshold: 0.88 }).path).toBe("/summarizeThreshold");
  });

  it("reject a summarize threshold at or above the full threshold, naming both values", () => {
    const error = optionsError({ summarizeThreshold: 0.97 });
    expect(error.path).toBe("/fullThreshold");
    expect(error.message).toContain("summarizeThreshold (0.97) is not below fullThreshold (0.95)");
    expect(optionsError({ summarizeThreshold: 0.95 }).path).toBe("/fullThreshold");
  });

  it("accept rising thresholds set together", () => {
    const o = resolveLayeredOptions({ pruneThreshold: 0.5, summarizeThreshold: 0.6, fullThreshold: 0.7 });
    expect([o.pruneThreshold, o.summarizeThreshold, o.fullThreshold]).toEqual([0.5, 0.6, 0.7]);
  });

  it("suggest the nearest option name for a misspelling", () => {
    const error = optionsError({ pruneProtectToken: 1 });
    expect(error.path).toBe("/pruneProtectToken");
    expect(error.message).toMatch(/Did you mean 'pruneProtectTokens'\?/);
  });

  it("are checked when the plugin is created, not when it first runs", () => {
    expect(() => layered({ fullThreshold: 0.5 })).toThrow(expect.objectContaining({ code: ErrorCodes.PLUGIN_OPTIONS_INVALID }));
  });
});

describe("LAYERED_OPTIONS_SCHEMA", () => {
  it("documents every option with a camelCase name, a description and a default", () => {
    for (const [name, property] of Object.entries(LAYERED_OPTIONS_SCHEMA.properties)) {
      expect(name).toMatch(/^[a-z][a-zA-Z]*$/);
      expect(property.description.length).toBeGreaterThan(20);
      expect(property).toHaveProperty("default");
    }
    expect(LAYERED_OPTIONS_SCHEMA.additionalProperties).toBe(false);
  });

  it("is plain JSON (survives a JSON round trip unchanged)", () => {
    expect(JSON.parse(JSON.stringify(LAYERED_OPTIONS_SCHEMA))).toEqual(LAYERED_OPTIONS_SCHEMA);
  });

  it("has defaults that equal the resolved defaults", () => {
    const defaults = Object.fromEntries(
      Object.entries(LAYERED_OPTIONS_SCHEMA.properties).flatMap(([name, p]) => ("default" in p ? [[name, p.default]] : [])),
    );
    expect(defaults).toEqual(resolveLayeredOptions());
  });
});
