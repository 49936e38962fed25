import { CompactionError, ErrorCodes } from "@compaction/core";
import { describe, expect, it } from "vitest";
import { lastTurnInjection } from "./last-turn-injection.js";
import { LAST_TURN_INJECTION_OPTIONS_SCHEMA } from "./options.js";

function optionsError(options: unknown): CompactionError {
  try {
    lastTurnInjection(options as never);
  } catch (error) {
    if (error instanceof CompactionError) return error;
    throw error;
  }
  throw new Error("expected the factory to throw");
}

describe("last-turn-injection options schema", () => {
  it("is a closed draft-07 object schema", () => {
    expect(LAST_TURN_INJECTION_OPTIONS_SCHEMA.type).toBe("object");
    expect(LAST_TURN_INJECTION_OPTIONS_SCHEMA.additionalProperties).toBe(false);
  });

  it("names the issue's two options, camelCase, each with a description and a default", () => {
    const properties = LAST_TURN_INJECTION_OPTIONS_SCHEMA.properties as Record<string, Record<string, unknown>>;
    expect(Object.keys(properties).sort()).toEqual(["lastTurnInjection", "lastTurnMaxTokens"]);
    for (const [name, property] of Object.entries(properties)) {
      expect(name).toMatch(/^[a-z][a-zA-Z0-9]*$/);
      expect(typeof property["description"]).toBe("string");
      expect(property).toHaveProperty("default");
    }
  });

  it("defaults to on with a 2,000-token cap", () => {
    const properties = LAST_TURN_INJECTION_OPTIONS_SCHEMA.properties;
    expect(properties.lastTurnInjection.default).toBe(true);
    expect(properties.lastTurnMaxTokens.default).toBe(2000);
  });

  it("is plain JSON (survives a JSON round trip unchanged)", () => {
    expect(JSON.parse(JSON.stringify(LAST_TURN_INJECTION_OPTIONS_SCHEMA))).toEqual(LAST_TURN_INJECTION_OPTIONS_SCHEMA);
  });
});

describe("lastTurnInjection options validation", () => {
  it("accepts no options", () => {
    expect(lastTurnInjection().name).toBe("last-turn-injection");
  });

  it("rejects an unknown option, naming the plugin and the option", () => {
    const error = optionsError({ maxTokens: 2000 });
    expect(error.code).toBe(ErrorCodes.PLUGIN_OPTIONS_INVALID);
    expect(error.plugin).toBe("last-turn-injection");
    expect(error.message).toContain("maxTokens");
  });

  it("suggests the nearest option name for a typo", () => {
    const error = optionsError({ lastTurnMaxToken: 2000 });
    expect(`${error.message} ${error.hint ?? ""}`).toContain("lastTurnMaxTokens");
  });

  it("rejects a cap below 1", () => {
    expect(optionsError({ lastTurnMaxTokens: 0 }).code).toBe(ErrorCodes.PLUGIN_OPTIONS_INVALID);
  });

  it("rejects a cap that is not a whole number", () => {
    expect(optionsError({ lastTurnMaxTokens: 12.5 }).message).toContain("lastTurnMaxTokens");
  });

  it("rejects a non-boolean switch", () => {
    expect(optionsError({ lastTurnInjection: "yes" }).message).toContain("lastTurnInjection");
  });

  it("does not write defaults into the caller's options object", () => {
    const options = {};
    lastTurnInjection(options);
    expect(options).toEqual({});
  });
});
