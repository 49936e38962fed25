import { fileURLToPath } from "node:url";
import { defineConfig, mergeConfig } from "vitest/config";
import { missingHostExcludes } from "../scripts/host-tests.mjs";
import shared from "../vitest.shared.js";

/** The tests that write sessions with pi 0.73's SessionManager skip, naming the install command, when it is not installed. */
const exclude = missingHostExcludes(fileURLToPath(new URL(".", import.meta.url)), {
  "pi-0.73": ["src/autocompact.test.ts", "src/compact.test.ts", "src/context-export-import.test.ts", "src/session-upgrade.test.ts"],
});

export default mergeConfig(shared, defineConfig({ test: { exclude } }));
