import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, type Sandbox } from "./test-support/cli-sandbox.js";

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(() => sandbox.remove());

describe("compaction context history", () => {
  it("says there are no compactions with exit 0 for a session never compacted", () => {
    const run = sandbox.run(["context", "history"], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("No compactions on this session's branch");
  });

  it("shows one entry with strategy safeguard, tokens before -> after and the focus after one compact --yes", () => {
    expect(sandbox.run(["compact", "--yes", "--focus", "the session manager"]).code).toBe(0);
    const run = sandbox.run(["context", "history"], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    expect(run.stdout.match(/Strategy/g)).toHaveLength(1);
    expect(run.stdout).toMatch(/Strategy\s+safeguard \(layer summarize\)/);
    expect(run.stdout).toMatch(/Tokens\s+177,657 -> [\d,]+/);
    expect(run.stdout).toMatch(/Trigger\s+manual/);
    expect(run.stdout).toMatch(/Compacted\s+\d+ messages/);
    expect(run.stdout).toMatch(/Focus\s+the session manager/);
  });

  it("shows a compaction's warnings, and says their token figures are our count, not the provider's measure of Tokens", () => {
    sandbox.writeConfig(".compactionrc.json", JSON.stringify({ preset: "safeguard", contextWindow: 30_000 }));
    expect(sandbox.run(["compact", "--yes"]).code).toBe(0);
    const run = sandbox.run(["context", "history"], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/  warning: \[safeguard\] keepRecentTokens \(20000 in the provider's measure, \d+ in our count\) was lowered/);
    expect(run.stdout).toContain("  (token figures in warnings are our count; Tokens are in the provider's measure)");
  });

  it("prints a JSON array of records with --json", () => {
    expect(sandbox.run(["compact", "--yes"]).code).toBe(0);
    const records = JSON.parse(sandbox.run(["context", "history", "--json"]).stdout) as Array<Record<string, unknown>>;
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ trigger: "manual", strategy: "safeguard", layer: "summarize", tokensBefore: 177657, focus: null, warnings: [] });
    expect(records[0]?.["tokensAfter"]).toBeLessThan(177657);
    expect(records[0]?.["messagesCompacted"]).toBeGreaterThan(0);
  });

  it("prints an empty JSON array with --json when there are no compactions", () => {
    expect(JSON.parse(sandbox.run(["context", "history", "--json"]).stdout)).toEqual([]);
  });

  it("rejects a --depth that is not a whole number of at least 1 with exit 2", () => {
    const run = sandbox.run(["context", "history", "--depth", "0"], { NO_COLOR: "1" });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--depth expects a whole number");
  });
});
