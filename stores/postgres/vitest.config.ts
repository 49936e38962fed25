import { defineConfig, mergeConfig } from "vitest/config";
import shared from "../../vitest.shared.js";

export default mergeConfig(
  shared,
  defineConfig({
    test: {
      // One real Postgres server for all test files (src/test-support/global-setup.ts).
      globalSetup: ["src/test-support/global-setup.ts"],
    },
  }),
);
