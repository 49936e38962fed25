import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
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

  it("on a pi session file, says nothing of a background compaction: the file does not record one (--json: background.recorded false)", () => {
    const text = sandbox.run(["context", "status"], { NO_COLOR: "1" });
    expect(text.stdout).not.toContain("Background");
    const status = JSON.parse(sandbox.run(["context", "status", "--json"]).stdout) as { background: unknown };
    expect(status.background).toStrictEqual({ recorded: false, preparation: null });
  });

  it("says on the Auto-compaction line when the context is past its threshold, and --json has autoCompact.pastThreshold", () => {
    const past = sandbox.run(["context", "status"], { NO_COLOR: "1" });
    expect(past.stdout).toMatch(/^Auto-compaction  on at 80% \(160,000 tokens\), preset safeguard; past it: the host compacts before its next request$/m);
    expect((JSON.parse(sandbox.run(["context", "status", "--json"]).stdout) as { autoCompact: { pastThreshold: boolean } }).autoCompact.pastThreshold).toBe(true);
    sandbox.writeConfig(".compactionrc.json", JSON.stringify({ autoCompact: { enabled: false } }));
    expect(sandbox.run(["context", "status"], { NO_COLOR: "1" }).stdout).toMatch(/^Auto-compaction  off \(threshold 80%\), preset safeguard; past it: compact by hand \(compaction compact\)$/m);
    sandbox.writeConfig(".compactionrc.json", JSON.stringify({ contextWindow: 400000 }));
    const below = sandbox.run(["context", "status"], { NO_COLOR: "1" });
    expect(below.stdout).toMatch(/^Auto-compaction  on at 80% \(320,000 tokens\), preset safeguard$/m);
    expect((JSON.parse(sandbox.run(["context", "status", "--json"]).stdout) as { autoCompact: { pastThreshold: boolean } }).autoCompact.pastThreshold).toBe(false);
  });

  it("measures against --window when given, over the config's window, and says it came from the option", () => {
    sandbox.writeConfig(".compactionrc.json", JSON.stringify({ contextWindow: 400000 }));
    const run = sandbox.run(["context", "status", "--window", "1000000"], { NO_COLOR: "1" });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("18% context (177,657 / 1,000,000 tokens)");
    const status = JSON.parse(sandbox.run(["context", "status", "--window", "1000000", "--json"]).stdout) as Record<string, unknown>;
    expect(status).toMatchObject({ contextWindow: 1_000_000, contextWindowSource: "option", autoCompact: { thresholdTokens: 800_000, pastThreshold: false } });
  });

  it.each(["0", "1.5", "many"])("refuses --window %s as compare does: exit 2, the flag and what to pass", (value) => {
    const run = sandbox.run(["context", "status", "--window", value], { NO_COLOR: "1" });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`compaction: --window expects a whole number of at least 1, but got '${value}'.\nhint: Pass the model's context window in tokens, e.g. --window 128000.\n`);
    expect(sandbox.run(["compare", "--window", value], { NO_COLOR: "1" }).stderr).toBe(run.stderr);
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

  describe("the encoder starts only when something is to be counted", () => {
    /** `context status --json` in a child process that reports, on exit, whether it loaded tiktoken. */
    // Whether the run read tiktoken's WebAssembly: what building the encoder, or starting it from its image, begins with.
    const statusWithProbe = (): { status: { tokens: number; measure: Record<string, unknown> }; loadedTiktoken: boolean } => {
      const probe = join(sandbox.root, "probe.cjs");
      const report = join(sandbox.root, "probe.txt");
      writeFileSync(
        probe,
        [
          `const fs = require("node:fs");`,
          `const readFileSync = fs.readFileSync;`,
          `let read = false;`,
          `fs.readFileSync = function (file, ...rest) { if (/tiktoken_bg\\.wasm$/.test(String(file))) read = true; return readFileSync.call(this, file, ...rest); };`,
          `require("node:module").syncBuiltinESMExports();`,
          `process.on("exit", () => fs.writeFileSync(${JSON.stringify(report)}, String(read)));`,
        ].join("\n"),
      );
      const run = sandbox.run(["context", "status", "--json"], { NODE_OPTIONS: `--require ${probe}` });
      expect(run.code).toBe(0);
      expect(existsSync(report)).toBe(true);
      return { status: JSON.parse(run.stdout) as { tokens: number; measure: Record<string, unknown> }, loadedTiktoken: readFileSync(report, "utf8") === "true" };
    };

    it("none when the newest usage figure covers every message: that figure is the size, no calibration applies", () => {
      const { status, loadedTiktoken } = statusWithProbe();
      expect(loadedTiktoken).toBe(false);
      expect(status.tokens).toBe(177657);
      expect(status.measure).toEqual({ base: "usage", counted: 0, counter: "tiktoken:o200k_base", ratio: null, perMessage: null, source: null, samples: 0, model: null });
      expect(sandbox.run(["context", "status"], { NO_COLOR: "1" }).stdout).toMatch(/Measure\s+provider's: usage figure of the newest message \(nothing after it to count\)\n/);
    });

    it("counts and calibrates what follows the newest usage figure", () => {
      const message = { role: "user", content: "Now add a test for the parser.", timestamp: Date.now() };
      const last = readFileSync(sandbox.sessionPath, "utf8").trimEnd().split("\n").at(-1) as string;
      const parentId = (JSON.parse(last) as { id: string }).id;
      appendFileSync(sandbox.sessionPath, `${JSON.stringify({ type: "message", id: "probe0001", parentId, timestamp: new Date().toISOString(), message })}\n`);
      const { status, loadedTiktoken } = statusWithProbe();
      expect(loadedTiktoken).toBe(true);
      expect(status.measure).toMatchObject({ base: "usage", counted: 1, source: "usage", samples: 14 });
      expect(status.tokens).toBeGreaterThan(177657);
      expect(sandbox.run(["context", "status"], { NO_COLOR: "1" }).stdout).toMatch(/Measure\s+provider's: usage figure \+ o200k x1\.25 \+13\/message after it \(from 14 usage pairs/);
    });
  });
});
