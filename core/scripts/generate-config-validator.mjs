// Build step: writes the config schema's validator as standalone code next to the compiled
// schema module (dist/config/config-validator.generated.cjs), so no process compiles the schema
// with ajv at run time. Runs after tsc; see src/config/config-validator.ts.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { configValidatorSource, GENERATED_VALIDATOR_URL } from "../dist/config/config-validator.js";

const schema = JSON.parse(readFileSync(new URL("../schema/compaction.schema.json", import.meta.url), "utf8"));
writeFileSync(fileURLToPath(GENERATED_VALIDATOR_URL), configValidatorSource(schema));
