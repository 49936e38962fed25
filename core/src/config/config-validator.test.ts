import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { compileConfigValidator, configValidatorSource, loadConfigValidator } from "./config-validator.js";
import { compactionSchema } from "./schema.js";

// Inside the package, so the generated code's require("ajv/dist/runtime/...") resolves as in dist/.
const dir = mkdtempSync(join(import.meta.dirname, ".generated-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CONFIGS: unknown[] = [
  {},
  { preset: "rolling", contextWindow: 32000 },
  { preset: "safeguard", threshold: 0.7, agents: { coder: { preset: "layered" } } },
  { plugins: [["rolling", { minKeepMessages: 4 }], ["recall"]] },
  { tokenizer: { counter: "estimate" } },
  { contextWindow: -1 },
  { preset: 3, threshold: "high", unknownKey: true },
  { agents: { coder: { contextWindw: 1000 } } },
  { plugins: [[]] },
  [],
  null,
];

describe("the generated config validator", () => {
  const file = join(dir, "validator.cjs");
  writeFileSync(file, configValidatorSource(compactionSchema));
  const generated = loadConfigValidator(pathToFileURL(file));
  const compiled = compileConfigValidator(compactionSchema);

  it.each(CONFIGS.map((config) => [JSON.stringify(config), config]))("judges %s as the run-time compile does: same verdict, defaults and errors", (_name, config) => {
    expect(generated).toBeTypeOf("function");
    const a = structuredClone(config);
    const b = structuredClone(config);
    const verdict = generated!(a);
    expect(verdict).toBe(compiled(b));
    expect(a).toEqual(b); // the same defaults filled in
    const strip = (errors: typeof compiled.errors) => (errors ?? []).map(({ instancePath, keyword, params, data }) => ({ instancePath, keyword, params, data }));
    expect(strip(generated!.errors)).toEqual(strip(compiled.errors));
    if (!verdict) expect(generated!.errors?.[0]?.parentSchema).toBeDefined(); // verbose, for readable messages
  });

  it("is found only where a build wrote it", () => {
    expect(loadConfigValidator(pathToFileURL(join(dir, "absent.cjs")))).toBeUndefined();
  });
});
