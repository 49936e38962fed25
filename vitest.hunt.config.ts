import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/**
 * `npm run hunt`: the property tests behind the guarantees (never stuck, within the budget,
 * history never lost), each run HUNT_FACTOR times over (default 10) from new random seeds, to
 * find the rare generated case CI would otherwise meet first. Not part of `npm test`. Name test
 * files to hunt in others instead. A failure prints its seed and path; replay it with HUNT_SEED
 * and HUNT_PATH (and HUNT_SHRINK=1 for the smallest case). Runs against the packages' builds:
 * `npm run build` first.
 */
const GUARANTEES = [
  "test/provider-measure-budget.test.ts",
  "test/tiny-windows.property.test.ts",
  "test/chained-compactions.property.test.ts",
  "plugins/*/src/*.property.test.ts",
  "plugins/last-turn-injection/src/last-turn-injection.test.ts",
  "core/src/shrink/shrink-to-budget.test.ts",
  "core/src/cut/check-cut.test.ts",
  "core/src/select-messages.test.ts",
  "core/src/summarizer/fit.test.ts",
  "core/src/summarizer/extractive.test.ts",
  "context-manager/src/context-size.test.ts",
  "integrations/langchain/src/real-and-generated.test.ts",
  "integrations/langchain/src/compaction-middleware.test.ts",
  "integrations/ai-sdk/src/ai-sdk-adapter.test.ts",
  "integrations/openclaw/src/engine.test.ts",
];
const named = process.argv.slice(2).some((arg) => arg.endsWith(".test.ts"));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^fast-check$/, replacement: fileURLToPath(new URL("scripts/property-hunt/fast-check.mjs", import.meta.url)) },
      { find: /^fast-check-original$/, replacement: fileURLToPath(import.meta.resolve("fast-check")) },
    ],
  },
  test: {
    include: named ? ["**/*.test.ts"] : GUARANTEES,
    exclude: ["**/node_modules/**", "**/dist/**", "**/bench/**"],
    testTimeout: 3_600_000,
    hookTimeout: 60_000,
  },
});
