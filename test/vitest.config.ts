import { defineConfig } from "vitest/config";

/** Cross-package and real-fixture tests; benchmarks under bench/ run with `npm run bench`. */
export default defineConfig({
  test: {
    include: ["**/*.test.ts"],
    exclude: ["**/node_modules/**", "bench/**"],
  },
});
