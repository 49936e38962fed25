import { defineConfig, mergeConfig } from "vitest/config";
import shared from "../vitest.shared.js";

/** Cross-package and real-fixture tests; benchmarks under bench/ run with `npm run bench`. */
export default mergeConfig(shared, defineConfig({ test: { include: ["**/*.test.ts"] } }));
