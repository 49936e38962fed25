import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { RECALL_OPTIONS_SCHEMA } from "./options.js";

describe("RECALL_OPTIONS_SCHEMA", () => {
  it("gives every option a description and a default", () => {
    for (const [name, property] of Object.entries(RECALL_OPTIONS_SCHEMA.properties)) {
      expect(typeof property.description, name).toBe("string");
      expect("default" in property, name).toBe(true);
    }
  });

  it("accepts its own defaults and rejects unknown options", () => {
    const validate = new Ajv({ strict: false }).compile(RECALL_OPTIONS_SCHEMA);
    const defaults = Object.fromEntries(Object.entries(RECALL_OPTIONS_SCHEMA.properties).map(([name, property]) => [name, property.default]));
    expect(validate(defaults)).toBe(true);
    expect(validate({ indexDirectory: "x" })).toBe(false);
  });

  it("is plain JSON (the core schema carries a copy)", () => {
    expect(JSON.parse(JSON.stringify(RECALL_OPTIONS_SCHEMA))).toEqual(RECALL_OPTIONS_SCHEMA);
  });
});
