/** Runs the example as a user would (`tsx agent.ts`) and checks what it prints. */
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const here = fileURLToPath(new URL(".", import.meta.url));
const tsx = createRequire(import.meta.url).resolve("tsx/cli");

it("runs the LangChain example: it compacts (once the wait after the preset's first decline is over), finishes the loop and answers", () => {
  const output = execFileSync(process.execPath, [tsx, "agent.ts"], { cwd: here, encoding: "utf8" });
  const compactions = output.match(/^compaction: compacted, \d+ -> \d+ tokens$/gm) ?? [];
  expect(compactions.length).toBeGreaterThan(0);
  expect(output).toMatch(/^model calls: 13, messages in state: \d+$/m);
  expect(output).toContain("answer: The twelve reports agree: revenue grew in every month.");
  expect(output).not.toContain("warning:");
});
