/**
 * The AI SDK example (examples/ai-sdk/agent.mjs) runs as docs/hosts/ai-sdk.md shows it: it prints
 * what the page quotes, figure for figure, and keeps every prompt inside its window.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { codeBlocks } from "./support/markdown.js";

const EXAMPLE = fileURLToPath(new URL("../examples/ai-sdk/agent.mjs", import.meta.url));
const PAGE = fileURLToPath(new URL("../docs/hosts/ai-sdk.md", import.meta.url));
const COMMAND = "$ node examples/ai-sdk/agent.mjs\n";

/** What docs/hosts/ai-sdk.md quotes the example as printing. */
function quotedOutput(): string {
  const block = codeBlocks(PAGE).find((b) => b.before === "<!-- run-by: test/example-ai-sdk.test.ts -->" && b.body.startsWith(COMMAND));
  if (!block) throw new Error(`docs/hosts/ai-sdk.md quotes no run of ${COMMAND.trim()}`);
  return `${block.body.slice(COMMAND.length)}\n`;
}

describe("examples/ai-sdk/agent.mjs", () => {
  let stdout = "";
  let stderr = "";
  beforeAll(async () => {
    ({ stdout, stderr } = await promisify(execFile)(process.execPath, [EXAMPLE], { cwd: fileURLToPath(new URL("..", import.meta.url)) }));
  });

  it("prints what docs/hosts/ai-sdk.md quotes, every figure included", () => {
    expect(stderr).toBe("");
    expect(stdout).toBe(quotedOutput());
  });

  it("runs a 15-step ToolLoopAgent whose largest prompt stays within the context window, compacting on the way", () => {
    expect(stdout).toMatch(/^step \d+: compacted, \d+ -> \d+ tokens$/m);
    expect(stdout).toContain("still call fetchLegacy()");
    const summary = /(\d+) steps, largest prompt (\d+) tokens, context window (\d+)/.exec(stdout);
    expect(summary).not.toBeNull();
    const [, steps, largest, window] = (summary as RegExpExecArray).map(Number);
    expect(steps).toBe(15);
    expect(largest).toBeLessThanOrEqual(window as number);
  });
});
