import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLAUDE_TRANSCRIPT, createSandbox, type Sandbox } from "./test-support/cli-sandbox.js";

interface Report {
  session: { path: string; format: string };
  messages: number;
  calls: number;
  contextWindow: number;
  reserveTokens: number;
  continuity: { cuts: number; needed: number };
  presets: {
    preset: string;
    compactions: number;
    cacheMisses: number;
    cacheHitShare: number;
    billed: { anthropic: number; openai: number };
    inputTokens: number;
    largestRequest: number;
    keptNext: number | null;
    longMemory: number | null;
  }[];
  cheapest: string | null;
}

let sandbox: Sandbox;
beforeEach(async () => {
  sandbox = await createSandbox();
});
afterEach(() => sandbox.remove());

const compare = (...args: string[]): Report => {
  const run = sandbox.run(["compare", "--json", ...args]);
  expect(run.stderr).not.toMatch(/compaction: (?!warning)/);
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as Report;
};

describe("compaction compare", () => {
  it("replays the real session through each preset at the window given, within the budget, missing the cache only where it compacts", () => {
    const report = compare("--window", "64000", "--presets", "safeguard,rolling");
    expect(report).toMatchObject({ messages: 914, contextWindow: 64_000, reserveTokens: 16_384 });
    expect(report.calls).toBeGreaterThan(400);
    expect(report.presets.map((p) => p.preset)).toEqual(["safeguard", "rolling"]);
    for (const preset of report.presets) {
      expect(preset.compactions).toBeGreaterThan(0);
      expect(preset.cacheMisses).toBeLessThanOrEqual(preset.compactions + 1);
      expect(preset.largestRequest).toBeLessThanOrEqual(64_000 - 16_384);
      expect(preset.cacheHitShare).toBeGreaterThan(0.95);
      // Cache pricing bills less than the input itself, and Anthropic's cache writes more than OpenAI's input.
      expect(preset.billed.anthropic).toBeLessThan(preset.inputTokens);
      expect(preset.billed.anthropic).toBeGreaterThan(preset.billed.openai);
    }
    const cheapest = [...report.presets].sort((a, b) => a.billed.anthropic - b.billed.anthropic)[0]?.preset;
    expect(report.cheapest).toBe(cheapest);
  });

  it("measures what the agent needed next that each preset's requests still held, at cut points past the window", () => {
    const report = compare("--window", "64000", "--presets", "safeguard,sliding-window");
    expect(report.continuity.cuts).toBeGreaterThan(0);
    expect(report.continuity.needed).toBeGreaterThan(0);
    for (const preset of report.presets) {
      expect(preset.keptNext).toBeGreaterThan(0.5);
      expect(preset.keptNext).toBeLessThanOrEqual(1);
      expect(preset.longMemory).not.toBeNull();
    }
  });

  it("says there is nothing to lose when the session fits the window", () => {
    const report = compare("--window", "1000000", "--presets", "safeguard");
    expect(report.continuity).toEqual({ cuts: 0, needed: 0 });
    expect(report.presets[0]).toMatchObject({ compactions: 0, keptNext: null, longMemory: null });
  });

  it("prints the comparison as a table and writes nothing", () => {
    const before = sandbox.bytes();
    const run = sandbox.run(["compare", "--window", "128000", "--presets", "layered"], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Window\s+128,000 tokens, 16,384 reserved for the reply/);
    expect(run.stdout).toMatch(/preset\s+compactions\s+cache misses\s+cache hits\s+billed \(Anthropic\)/);
    expect(run.stdout).toMatch(/^layered\s+\d+\s+\d+\s+\d+\.\d%/m);
    expect(run.stdout).toContain("Cheapest  layered");
    expect(sandbox.bytes().equals(before)).toBe(true);
  });

  it("replays a Claude Code transcript too", () => {
    const path = join(sandbox.root, "claude.jsonl");
    copyFileSync(CLAUDE_TRANSCRIPT, path);
    const report = compare("--session", path, "--window", "32000", "--presets", "safeguard");
    expect(report.session.format).toBe("claude-code");
    expect(report.presets[0]?.compactions).toBeGreaterThan(0);
  });

  it("refuses a preset that does not exist, naming it, before replaying anything", () => {
    const run = sandbox.run(["compare", "--presets", "safeguard,rollin"]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/rollin/);
    expect(run.stderr).toMatch(/rolling/);
  });

  it("refuses a window that is not a positive whole number, or leaves no room beside the reserve", () => {
    const bad = sandbox.run(["compare", "--window", "lots"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--window/);
    const small = sandbox.run(["compare", "--window", "16000"]);
    expect(small.code).toBe(2);
    expect(small.stderr).toMatch(/reserve/);
  });
});
