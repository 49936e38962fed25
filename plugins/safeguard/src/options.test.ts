import { createOptionsValidator } from "@compaction/core";
import { describe, expect, it } from "vitest";
import { SAFEGUARD_OPTIONS_SCHEMA, type SafeguardOptions } from "./options.js";

describe("SAFEGUARD_OPTIONS_SCHEMA", () => {
  it("is plain JSON: a draft-07 object schema that allows no unknown options", () => {
    expect(JSON.parse(JSON.stringify(SAFEGUARD_OPTIONS_SCHEMA))).toEqual(SAFEGUARD_OPTIONS_SCHEMA);
    expect(SAFEGUARD_OPTIONS_SCHEMA).toMatchObject({ type: "object", additionalProperties: false });
  });

  it.each(Object.entries(SAFEGUARD_OPTIONS_SCHEMA.properties))("documents %s in camelCase with a description and a default", (name, property) => {
    expect(name).toMatch(/^[a-z][a-zA-Z0-9]*$/);
    expect(property.description.length).toBeGreaterThan(20);
    expect(property).toHaveProperty("default");
  });

  it("fills in the documented defaults", () => {
    const validate = createOptionsValidator<SafeguardOptions>("safeguard", SAFEGUARD_OPTIONS_SCHEMA);
    expect(validate()).toEqual({
      keepRecentTokens: 20000,
      maxTurnBoundaryLoss: 0.5,
      summaryMaxTokens: null,
      turnPrefixMaxTokens: null,
      chunkTokens: 100000,
      timeoutMs: 120000,
    });
  });

  it("keeps given values and fills the rest", () => {
    const validate = createOptionsValidator<SafeguardOptions>("safeguard", SAFEGUARD_OPTIONS_SCHEMA);
    expect(validate({ keepRecentTokens: 5000, summaryMaxTokens: 800, timeoutMs: 0 })).toMatchObject({
      keepRecentTokens: 5000,
      summaryMaxTokens: 800,
      timeoutMs: 0,
      chunkTokens: 100000,
    });
  });
});
