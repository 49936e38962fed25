/** The AI SDK example (examples/ai-sdk/agent.mjs) runs as the README shows and keeps every prompt inside its window. */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const EXAMPLE = fileURLToPath(new URL("../examples/ai-sdk/agent.mjs", import.meta.url));

describe("examples/ai-sdk/agent.mjs", () => {
  it("runs a 15-step ToolLoopAgent whose largest prompt stays within the context window, compacting on the way", async () => {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [EXAMPLE], { cwd: fileURLToPath(new URL("..", import.meta.url)) });
    expect(stderr).toBe("");
    expect(stdout).toMatch(/^step \d+: compacted, \d+ -> \d+ tokens$/m);
    expect(stdout).toContain("still call fetchLegacy()");
    const summary = /(\d+) steps, largest prompt (\d+) tokens, context window (\d+)/.exec(stdout);
    expect(summary).not.toBeNull();
    const [, steps, largest, window] = (summary as RegExpExecArray).map(Number);
    expect(steps).toBe(15);
    expect(largest).toBeLessThanOrEqual(window as number);
  });
});
