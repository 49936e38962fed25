import { readFileSync } from "node:fs";
import { ErrorCodes, loadConfig } from "@compaction/core";
import { describe, expect, it } from "vitest";
import { CORE_SCHEMA_PATH, syncedCoreSchema } from "./scripts/plugin-option-schemas.js";
import { tmpProject } from "./support/tmp-project.js";

describe("plugin options in the core JSON Schema", () => {
  it("match each built-in plugin's own schema (run `npx tsx test/scripts/plugin-option-schemas.ts --write` after changing one)", () => {
    expect(JSON.parse(readFileSync(CORE_SCHEMA_PATH, "utf8"))).toEqual(syncedCoreSchema());
  });

  it("catch a misspelt plugin option in .compactionrc with the file, the path and a suggestion", async () => {
    const cwd = tmpProject({ ".compactionrc.yaml": "preset: rolling\noptions:\n  rolling:\n    minKeepMesages: 20\n" });
    const error = await loadConfig({ cwd }).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({
      code: ErrorCodes.CONFIG_INVALID,
      path: "/options/rolling/minKeepMesages",
      hint: expect.stringContaining("Did you mean 'minKeepMessages'?"),
    });
    expect((error as { file: string }).file).toMatch(/\.compactionrc\.yaml$/);
  });

  it("leave the preset's own option values alone when the config sets other options of the plugin", async () => {
    const cwd = tmpProject({ ".compactionrc.json": JSON.stringify({ options: { safeguard: { timeoutMs: 5000 } } }) });
    const config = await loadConfig({ cwd });
    expect(config.options).toEqual({ safeguard: { timeoutMs: 5000 } });
  });
});
