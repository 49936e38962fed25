// Run only by test/vitest-watchdog.test.ts, with the repository's shared settings (and so its watchdog).
import { defineConfig, mergeConfig } from "vitest/config";
import shared from "../../../vitest.shared.js";

export default mergeConfig(shared, defineConfig({ test: { include: ["*.fixture.ts"] } }));
