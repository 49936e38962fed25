// Build step of each built-in plugin (run from the plugin's folder after tsc): writes the
// validator of its options schema, the one `export const *_OPTIONS_SCHEMA` of dist/options.js,
// as standalone code to dist/options-validator.generated.cjs, which the plugin passes to
// createOptionsValidator({ generated }). No process then loads ajv to check a built-in plugin's
// options. See core/src/config/standalone-validator.ts.
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { optionsValidatorSource } from "@compaction/core";

const dir = resolve(process.argv[2] ?? ".");
const { name } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
const options = await import(pathToFileURL(join(dir, "dist/options.js")).href);
const schemas = Object.entries(options).filter(([key]) => key.endsWith("_OPTIONS_SCHEMA"));
if (schemas.length !== 1) {
  console.error(`${name}: expected dist/options.js to export exactly one *_OPTIONS_SCHEMA, found ${schemas.map(([key]) => key).join(", ") || "none"}.`);
  process.exit(1);
}
writeFileSync(join(dir, "dist/options-validator.generated.cjs"), optionsValidatorSource(name, schemas[0][1]));
