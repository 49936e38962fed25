import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { describeSchemaErrors } from "./schema-problems.js";

const schema = {
  type: "object",
  additionalProperties: false,
  required: ["name", "items"],
  properties: {
    name: { type: "string", minLength: 1, description: "The name." },
    count: { type: "integer", minimum: 1, examples: [3] },
    mode: { enum: ["fast", "slow"] },
    items: { type: "array", description: "What to list." },
  },
};
const validate = new Ajv({ allErrors: true, verbose: true, strict: false }).compile(schema);

function problems(data: unknown, special?: Parameters<typeof describeSchemaErrors>[1]["special"]) {
  validate(data);
  return describeSchemaErrors(validate.errors ?? [], { schemaName: "test.schema.json", ...(special ? { special } : {}) });
}

describe("describeSchemaErrors", () => {
  it("says what was expected and found at each path, with what to do", () => {
    expect(problems({ name: "", items: [], count: 0, mode: "fsat" })).toEqual([
      { path: "/name", message: 'expected a non-empty string, found string ""', hint: "Give a value." },
      { path: "/count", message: "expected a number of at least 1, found integer 0", hint: "Use a value of at least 1, e.g. 3." },
      { path: "/mode", message: 'expected one of "fast", "slow", found string "fsat"', hint: `Did you mean 'fast'? Allowed values: "fast", "slow".` },
    ]);
  });

  it("reports a misspelt property once, as the misspelling, not also as a missing one", () => {
    expect(problems({ nmae: "x", items: [] })).toEqual([
      { path: "/nmae", message: "unknown property 'nmae'; expected one of: name, count, mode, items", hint: "Did you mean 'name'?" },
    ]);
  });

  it("names a missing property with its description and what to put when there is nothing", () => {
    expect(problems({ name: "x" })).toEqual([
      { path: "/items", message: "missing required property 'items' (what to list)", hint: "Add 'items' ([] when there is nothing to list)." },
    ]);
  });

  it("lets a schema word its own shapes, or leave an error out", () => {
    const special = (error: { keyword: string }) => (error.keyword === "type" ? null : undefined);
    expect(problems({ name: 5, items: [] }, special)).toEqual([]);
  });
});
