import { fileURLToPath } from "node:url";
import { defineConfig, mergeConfig } from "vitest/config";
import { missingHostExcludes } from "../scripts/host-tests.mjs";
import shared from "../vitest.shared.js";

/** The suites that compare with pi 0.73's session code skip, naming the install command, when it is not installed. */
const exclude = missingHostExcludes(fileURLToPath(new URL(".", import.meta.url)), {
  "pi-0.73": ["context-manager-pi.test.ts", "transcript-write-pi.test.ts", "transcript-pi.test.ts", "transcript-concurrency.test.ts"],
});

/** Cross-package and real-fixture tests; benchmarks under bench/ run with `npm run bench`. */
export default mergeConfig(shared, defineConfig({ test: { include: ["**/*.test.ts"], exclude } }));
