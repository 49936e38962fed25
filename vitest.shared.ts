import { defineConfig } from "vitest/config";

/**
 * Shared by every package's vitest.config.ts. CI runs the packages' suites side by side on two
 * cores, and some tests load a TypeScript config or the tiktoken encoder: a generous timeout
 * keeps a slow start from failing a correct test (no test asserts on time).
 */
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    exclude: ["**/node_modules/**", "**/dist/**", "bench/**"],
  },
});
