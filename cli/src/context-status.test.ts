import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSandbox, REAL_SESSION_ID, type Sandbox } from "./test-support/cli-sandbox.js";

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(() => sandbox.remove());

describe("compaction context status", () => {
  it("prints the usage bar with the token count of the cwd's latest session against the config's window", () => {
    const run = sandbox.run(["context", "status"], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("[█████████░] 89% context (177,657 / 200,000 tokens)");
    expect(run.stdout).toContain(REAL_SESSION_ID);
  });

  it("reports auto-compaction, the compaction count and a low risk for a session never compacted", () => {
    const run = sandbox.run(["context", "status"], { NO_COLOR: "1" });
    expect(run.stdout).toMatch(/Auto-compaction\s+on at 80% \(160,000 tokens\), preset safeguard/);
    expect(run.stdout).toMatch(/Compactions\s+0\n/);
    expect(run.stdout).toMatch(/Degradation risk\s+low/);
  });

  it("prints one JSON object with --json", () => {
    const run = sandbox.run(["context", "status", "--json", "--session", REAL_SESSION_ID.slice(0, 8)]);
    expect(run.code).toBe(0);
    const status = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(status).toMatchObject({
      session: { path: sandbox.sessionPath, id: REAL_SESSION_ID },
      tokens: 177657,
      contextWindow: 200000,
      percent: 89,
      autoCompact: { enabled: true, threshold: 0.8, thresholdTokens: 160000 },
      compactions: { count: 0, lastAt: null, sinceLastMs: null },
      risk: "low",
    });
  });

  it("uses the context window and auto-compaction settings of .compactionrc", () => {
    sandbox.writeConfig(".compactionrc.json", JSON.stringify({ contextWindow: 400000, autoCompact: { enabled: false, threshold: 0.5 } }));
    const status = JSON.parse(sandbox.run(["context", "status", "--json"]).stdout) as Record<string, unknown>;
    expect(status).toMatchObject({ contextWindow: 400000, percent: 44, autoCompact: { enabled: false, threshold: 0.5 } });
  });

  it("counts the compactions written by compact and reports the time since the latest", () => {
    expect(sandbox.run(["compact", "--yes"]).code).toBe(0);
    const status = JSON.parse(sandbox.run(["context", "status", "--json"]).stdout) as {
      compactions: { count: number; lastAt: string | null; sinceLastMs: number | null };
      tokens: number;
    };
    expect(status.compactions.count).toBe(1);
    expect(status.compactions.lastAt).not.toBeNull();
    expect(status.compactions.sinceLastMs).toBeGreaterThanOrEqual(0);
    expect(status.compactions.sinceLastMs).toBeLessThan(60_000);
    expect(status.tokens).toBeLessThan(177657);
  });

  it("writes no escape codes when NO_COLOR is set, even with FORCE_COLOR", () => {
    const run = sandbox.run(["context", "status"], { NO_COLOR: "1", FORCE_COLOR: "1" });
    expect(run.stdout).not.toContain("\u001b[");
  });

  it("colours the output with FORCE_COLOR unless --no-color is given", () => {
    expect(sandbox.run(["context", "status"], { FORCE_COLOR: "1" }).stdout).toContain("\u001b[");
    expect(sandbox.run(["--no-color", "context", "status"], { FORCE_COLOR: "1" }).stdout).not.toContain("\u001b[");
  });
});
