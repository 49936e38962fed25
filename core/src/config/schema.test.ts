import { existsSync } from "node:fs";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { AGENT_KEYS } from "./merge.js";
import { compactionSchema, compactionSchemaPath, validateConfigData } from "./schema.js";

type Schema = Record<string, unknown>;

/** Every `properties` entry anywhere in the schema, as [JSON pointer of the schema, schema]. */
function allProperties(schema: unknown, at = "#"): Array<[string, Schema]> {
  if (typeof schema !== "object" || schema === null) return [];
  const found: Array<[string, Schema]> = [];
  for (const [key, child] of Object.entries(schema)) {
    if (key === "properties" && typeof child === "object" && child !== null) {
      for (const [name, property] of Object.entries(child)) {
        found.push([`${at}/properties/${name}`, property as Schema]);
        found.push(...allProperties(property, `${at}/properties/${name}`));
      }
    } else if (key !== "examples" && key !== "default") {
      found.push(...allProperties(child, `${at}/${key}`));
    }
  }
  return found;
}

describe("compaction.schema.json", () => {
  it("is a valid draft-07 JSON Schema", () => {
    const ajv = new Ajv({ strict: false });
    expect(compactionSchema["$schema"]).toBe("http://json-schema.org/draft-07/schema#");
    expect(ajv.validateSchema(compactionSchema)).toBe(true);
  });

  it("describes every property at every level", () => {
    const properties = allProperties(compactionSchema);
    expect(properties.length).toBeGreaterThan(20);
    const undescribed = properties.filter(([, schema]) => typeof schema["description"] !== "string" || schema["description"] === "");
    expect(undescribed.map(([at]) => at)).toEqual([]);
  });

  it("lets agent sections set exactly the top-level keys except $schema and agents", () => {
    const top = Object.keys(compactionSchema["properties"] as Schema);
    const agent = Object.keys(((compactionSchema["definitions"] as Schema)["agentSection"] as Schema)["properties"] as Schema);
    expect(agent).toEqual([...AGENT_KEYS]);
    expect(top).toEqual(["$schema", ...AGENT_KEYS, "agents"]);
  });

  it("gives agent-section properties no defaults, so a section only sets what it names", () => {
    const section = ((compactionSchema["definitions"] as Schema)["agentSection"] as Schema)["properties"] as Record<string, Schema>;
    expect(Object.values(section).filter((property) => "default" in property)).toEqual([]);
  });

  it("is shipped at the path compactionSchemaPath names", () => {
    expect(compactionSchemaPath.endsWith("core/schema/compaction.schema.json")).toBe(true);
    expect(existsSync(compactionSchemaPath)).toBe(true);
  });

  it("is frozen, so callers cannot change what the validator checks", () => {
    expect(Object.isFrozen(compactionSchema)).toBe(true);
    expect(Object.isFrozen(compactionSchema["properties"])).toBe(true);
  });
});

describe("validateConfigData", () => {
  it("fills top-level defaults into the data it validates", () => {
    const data: Record<string, unknown> = { preset: "rolling" };
    expect(validateConfigData(data)).toEqual([]);
    expect(data).toMatchObject({ preset: "rolling", contextWindow: 200000, adapter: "pi" });
    // No default: the reserve follows the window (replyReserveTokens).
    expect(data).not.toHaveProperty("reserveTokens");
  });

  it("injects no top-level defaults into an agent section", () => {
    const data = { agents: { coder: { preset: "layered" } } };
    expect(validateConfigData(data)).toEqual([]);
    expect(data.agents.coder).toEqual({ preset: "layered" });
  });

  it("gives each validation a fresh copy of an object default", () => {
    const first: Record<string, unknown> = {};
    const second: Record<string, unknown> = {};
    validateConfigData(first);
    validateConfigData(second);
    expect(first["tokenizer"]).toEqual(second["tokenizer"]);
    expect(first["tokenizer"]).not.toBe(second["tokenizer"]);
  });

  it("returns every problem, not just the first", () => {
    expect(validateConfigData({ preset: 1, contextWindow: 0, adapter: "x" })).toHaveLength(3);
  });
});
