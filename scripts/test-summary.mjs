#!/usr/bin/env node
// One closing line for the whole suite, from the vitest JSON report each workspace package
// writes during `npm test`: "vitest: N passed, N failed" (", N skipped" when any were).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const { workspaces } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const dirs = workspaces.flatMap((pattern) =>
  pattern.endsWith("/*")
    ? readdirSync(join(root, pattern.slice(0, -2))).map((name) => join(pattern.slice(0, -2), name))
    : [pattern],
);

const total = { passed: 0, failed: 0, skipped: 0, reports: 0 };
for (const dir of dirs) {
  const file = join(root, dir, ".vitest-report.json");
  if (!existsSync(file)) continue;
  const report = JSON.parse(readFileSync(file, "utf8"));
  total.reports += 1;
  total.passed += report.numPassedTests ?? 0;
  total.failed += (report.numFailedTests ?? 0) + (report.numRuntimeErrorTestSuites ?? 0);
  total.skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
}
if (total.reports === 0) {
  console.error("test-summary: no vitest reports found; run `npm test` first.");
  process.exit(1);
}
const skipped = total.skipped > 0 ? `, ${total.skipped} skipped` : "";
console.log(`vitest: ${total.passed} passed, ${total.failed} failed${skipped}`);
process.exit(total.failed > 0 ? 1 : 0);
