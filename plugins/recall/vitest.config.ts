import { fileURLToPath } from "node:url";
import { defineConfig, mergeConfig } from "vitest/config";
import { missingHostExcludes } from "../../scripts/host-tests.mjs";
import shared from "../../vitest.shared.js";

/** The test that validates the tool's arguments with pi 0.73's pi-ai skips, naming the install command, when it is not installed. */
const exclude = missingHostExcludes(fileURLToPath(new URL(".", import.meta.url)), {
  "pi-0.73": ["src/memory-search-tool.test.ts"],
});

export default mergeConfig(shared, defineConfig({ test: { exclude } }));
