import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/**
 * Shared by every package's vitest.config.ts. CI runs the packages' suites side by side on two
 * cores, and some tests load a TypeScript config or the tiktoken encoder: a generous timeout
 * keeps a slow start from failing a correct test (no test asserts on time). A test stuck in a
 * synchronous loop, which no timeout stops, is killed by scripts/vitest-watchdog.mjs after 10
 * minutes without a turn of its event loop, naming the test.
 */
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    setupFiles: [fileURLToPath(new URL("./scripts/vitest-watchdog.mjs", import.meta.url))],
    exclude: ["**/node_modules/**", "**/dist/**", "bench/**"],
  },
});
