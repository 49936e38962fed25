import { fileURLToPath } from "node:url";
import { defineConfig, mergeConfig } from "vitest/config";
import { missingHostExcludes } from "../../scripts/host-tests.mjs";
import shared from "../../vitest.shared.js";

/** The tests that run pi 0.73 (src/test-support/pi-session.ts) skip, naming the install command, when it is not installed; pi 0.87's say so in PI_087_UNSUPPORTED. */
const exclude = missingHostExcludes(fileURLToPath(new URL(".", import.meta.url)), {
  "pi-0.73": ["src/before-compact.test.ts", "src/compact-branch.test.ts", "src/context-pruner.test.ts", "src/extension.test.ts", "src/never-stuck-087.runtime.test.ts", "src/never-stuck.runtime.test.ts", "src/pi-087-runtime.test.ts", "src/pi-087-trust.test.ts", "src/pi-compaction.test.ts", "src/pi-runtime.test.ts", "src/recall-link.test.ts"],
});

export default mergeConfig(shared, defineConfig({ test: { exclude } }));
