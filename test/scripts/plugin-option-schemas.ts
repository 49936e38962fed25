/**
 * The built-in plugins' option schemas, as the core JSON Schema documents them: each plugin
 * package owns its schema (and validates with it); the core schema carries a copy without
 * `default` keys (a default written into `options.<plugin>` by the config validator would
 * override the preset's own options), so editors complete plugin options too.
 *
 *   npx tsx test/scripts/plugin-option-schemas.ts --write   # update core/schema/compaction.schema.json
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { LAST_TURN_INJECTION_OPTIONS_SCHEMA } from "@compaction/plugin-last-turn-injection";
import { LAYERED_OPTIONS_SCHEMA } from "@compaction/plugin-layered";
import { RECALL_OPTIONS_SCHEMA } from "@compaction/plugin-recall";
import { ROLLING_OPTIONS_SCHEMA } from "@compaction/plugin-rolling";
import { SAFEGUARD_OPTIONS_SCHEMA } from "@compaction/plugin-safeguard";
import { SLIDING_WINDOW_OPTIONS_SCHEMA } from "@compaction/plugin-sliding-window";
import { SUMMARIZER_ANTHROPIC_OPTIONS_SCHEMA } from "@compaction/plugin-summarizer-anthropic";
import { SUMMARIZER_EXTRACTIVE_OPTIONS_SCHEMA } from "@compaction/plugin-summarizer-extractive";
import { SUMMARIZER_OPENAI_OPTIONS_SCHEMA } from "@compaction/plugin-summarizer-openai";

export const CORE_SCHEMA_PATH = fileURLToPath(new URL("../../core/schema/compaction.schema.json", import.meta.url));

/** Plugin short name -> [definition name in the core schema, the plugin's own schema]. */
export const PLUGIN_OPTION_SCHEMAS: Readonly<Record<string, readonly [string, object]>> = {
  rolling: ["rollingOptions", ROLLING_OPTIONS_SCHEMA],
  safeguard: ["safeguardOptions", SAFEGUARD_OPTIONS_SCHEMA],
  layered: ["layeredOptions", LAYERED_OPTIONS_SCHEMA],
  "last-turn-injection": ["lastTurnInjectionOptions", LAST_TURN_INJECTION_OPTIONS_SCHEMA],
  "sliding-window": ["slidingWindowOptions", SLIDING_WINDOW_OPTIONS_SCHEMA],
  recall: ["recallOptions", RECALL_OPTIONS_SCHEMA],
  "summarizer-extractive": ["summarizerExtractiveOptions", SUMMARIZER_EXTRACTIVE_OPTIONS_SCHEMA],
  "summarizer-openai": ["summarizerOpenAIOptions", SUMMARIZER_OPENAI_OPTIONS_SCHEMA],
  "summarizer-anthropic": ["summarizerAnthropicOptions", SUMMARIZER_ANTHROPIC_OPTIONS_SCHEMA],
};

/** A copy of a schema without `default` keys; each default is stated in the description instead. */
export function withoutDefaults(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutDefaults);
  if (typeof schema !== "object" || schema === null) return schema;
  const out: Record<string, unknown> = {};
  const source = schema as Record<string, unknown>;
  for (const [key, value] of Object.entries(source)) {
    if (key === "default") continue;
    out[key] = key === "properties" ? mapValues(value as Record<string, unknown>, withoutDefaults) : withoutDefaults(value);
  }
  if ("default" in source && typeof out["description"] === "string") {
    out["description"] = `${out["description"]} Default: ${JSON.stringify(source["default"])}.`;
  }
  return out;
}

function mapValues(record: Record<string, unknown>, fn: (value: unknown) => unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, fn(value)]));
}

/** The core schema with the plugins' option definitions put in. */
export function syncedCoreSchema(): Record<string, any> {
  const schema = JSON.parse(readFileSync(CORE_SCHEMA_PATH, "utf8"));
  const options = schema.definitions.options;
  options.properties = {};
  for (const [plugin, [definition, pluginSchema]] of Object.entries(PLUGIN_OPTION_SCHEMAS)) {
    schema.definitions[definition] = withoutDefaults(pluginSchema);
    options.properties[plugin] = {
      description: `Options of the built-in '${plugin}' plugin (see @compaction/plugin-${plugin}).`,
      allOf: [{ $ref: `#/definitions/${definition}` }],
    };
  }
  return schema;
}

if (process.argv.includes("--write")) {
  writeFileSync(CORE_SCHEMA_PATH, `${JSON.stringify(syncedCoreSchema(), null, 2)}\n`);
  console.log(`updated ${CORE_SCHEMA_PATH}`);
}
