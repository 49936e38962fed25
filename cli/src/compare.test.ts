import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FIXTURES_DIR } from "@compaction/fixtures";
import { importClaudeCode } from "@compaction/transcript";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLAUDE_TRANSCRIPT, createSandbox, type Sandbox } from "./test-support/cli-sandbox.js";

interface Report {
  session: { path: string; format: string };
  history: {
    view: string;
    compactions: { at: string; trigger: string | null; tokensBefore: number | null }[];
    startsAt: { at: string; reason: string } | null;
  };
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
    // The window's own reserve: an eighth of 64,000.
    expect(report).toMatchObject({ messages: 914, contextWindow: 64_000, reserveTokens: 8_000 });
    expect(report.calls).toBeGreaterThan(400);
    expect(report.presets.map((p) => p.preset)).toEqual(["safeguard", "rolling"]);
    for (const preset of report.presets) {
      expect(preset.compactions).toBeGreaterThan(0);
      expect(preset.cacheMisses).toBeLessThanOrEqual(preset.compactions + 1);
      expect(preset.largestRequest).toBeLessThanOrEqual(64_000 - 8_000);
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
    expect(run.stdout).toMatch(/Window\s+128,000 tokens, 16,000 reserved for the reply/);
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

  it("refuses a window that is not a positive whole number, or that the config's reserveTokens does not fit, naming the file and key", () => {
    const bad = sandbox.run(["compare", "--window", "lots"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--window/);
    sandbox.writeConfig(".compactionrc.json", JSON.stringify({ reserveTokens: 16_384 }));
    const small = sandbox.run(["compare", "--window", "16000"]);
    expect(small.code).toBe(4);
    expect(small.stderr).toMatch(/reserve \(reserveTokens in .*\.compactionrc\.json, \/reserveTokens\) is 16384 tokens, which does not fit the 16,000-token context window/);
  });

  it("replays a small model's window on the window's own reserve when the config sets none", () => {
    const report = compare("--window", "16000", "--presets", "safeguard");
    expect(report.reserveTokens).toBe(2_000);
    expect(report.presets[0]?.compactions).toBeGreaterThan(0);
    expect(report.presets[0]?.largestRequest).toBeLessThanOrEqual(16_000 - 2_000);
  });
});

/** The real Claude Code transcripts with real compactions, whose lines before each boundary stay in the file. */
const COMPACTED = ["claude-code-entire-review-847ff7d2.jsonl", "claude-code-entire-attribution-6113e919.jsonl", "claude-code-entire-openclaw-ca8cc13b.jsonl"];

type Raw = Record<string, any>;
/** Every line of a file with its 1-based number. */
const numbered = (path: string): { line: number; value: Raw }[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .map((text, i) => ({ line: i + 1, text }))
    .filter(({ text }) => text.trim() !== "")
    .map(({ line, text }) => ({ line, value: JSON.parse(text) as Raw }));

/**
 * Counted from the raw lines: the conversation's messages (main-context user lines but the
 * compaction summaries, one message per assistant response id) and its model calls (an assistant
 * message after anything else).
 */
function conversation(path: string): { messages: number; calls: number } {
  const roles: string[] = [];
  const responses = new Set<string>();
  for (const { value } of numbered(path)) {
    if ((value.type !== "user" && value.type !== "assistant") || value.isSidechain === true || value.isCompactSummary === true) continue;
    if (value.type === "assistant") {
      if (responses.has(value.message.id)) continue;
      responses.add(value.message.id);
    }
    roles.push(value.type);
  }
  return { messages: roles.length, calls: roles.filter((role, i) => role === "assistant" && i > 0 && roles[i - 1] !== "assistant").length };
}

describe("compaction compare on a Claude Code transcript with real compactions", () => {
  it.each(COMPACTED)("replays the whole conversation of a copy of %s, before and after each boundary, through its own compactions", (file) => {
    const path = join(sandbox.root, file);
    copyFileSync(join(FIXTURES_DIR, file), path);
    const report = compare("--session", path, "--window", "64000", "--presets", "safeguard");
    const expected = conversation(path);
    expect(report).toMatchObject({ messages: expected.messages, calls: expected.calls });
    // More than the context after the latest compaction, which is all it replayed before.
    expect(report.messages).toBeGreaterThan(importClaudeCode(path).messages.length);
    const boundaries = numbered(path).filter(({ value }) => value.subtype === "compact_boundary");
    expect(report.history).toEqual({
      view: "whole",
      compactions: boundaries.map(({ line, value }) => ({ at: `line ${line}`, trigger: "auto", tokensBefore: value.compactMetadata.preTokens })),
      startsAt: null,
    });
    // Each real compaction happened past 150k tokens: the replay at 64k compacts on its own.
    expect(report.presets[0]?.compactions).toBeGreaterThanOrEqual(boundaries.length);
  });

  it("names the recording's own compactions beside the presets in the table's heading", () => {
    const path = join(sandbox.root, "attribution.jsonl");
    copyFileSync(join(FIXTURES_DIR, "claude-code-entire-attribution-6113e919.jsonl"), path);
    const run = sandbox.run(["compare", "--session", path, "--window", "64000", "--presets", "layered"], { NO_COLOR: "1" });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Session {3}.*\(claude-code: 483 messages, 226 model calls\)$/m);
    expect(run.stdout).toMatch(
      /^History {3}the whole conversation, through its own 3 compactions \(auto, at 156,699, 155,241 and 155,413 tokens by its count\): not applied, their summaries left out$/m,
    );
  });

  describe("whose boundary does not join what came before it", () => {
    const line = (value: Record<string, unknown>) => JSON.stringify({ isSidechain: false, sessionId: "generated", timestamp: "2025-07-01T10:00:00.000Z", ...value });
    const lines = [
      line({ type: "user", uuid: "u1", parentUuid: null, message: { role: "user", content: "Rename parseConfig to readConfig in src/config.ts" } }),
      line({ type: "assistant", uuid: "a1", parentUuid: "u1", message: { id: "msg_a1", role: "assistant", content: [{ type: "text", text: "Done: src/config.ts now exports readConfig." }] } }),
      line({ type: "system", subtype: "compact_boundary", uuid: "b1", parentUuid: null, logicalParentUuid: "not-in-this-file", compactMetadata: { trigger: "auto", preTokens: 150000 } }),
      line({ type: "user", uuid: "s1", parentUuid: "b1", isCompactSummary: true, message: { role: "user", content: "This session is being continued from a previous conversation. Summary: readConfig rename." } }),
      line({ type: "user", uuid: "u2", parentUuid: "s1", message: { role: "user", content: "Now run the tests" } }),
      line({ type: "assistant", uuid: "a2", parentUuid: "u2", message: { id: "msg_a2", role: "assistant", content: [{ type: "text", text: "The tests pass." }] } }),
    ];
    const write = (): string => {
      const path = join(sandbox.root, "broken-join.jsonl");
      writeFileSync(path, `${lines.join("\n")}\n`);
      return path;
    };

    it("fails with exit 3, naming the line and the missing uuid, and the flag that reads past it", () => {
      const path = write();
      const run = sandbox.run(["compare", "--session", path, "--presets", "safeguard"], { NO_COLOR: "1" });
      expect(run.code).toBe(3);
      expect(run.stdout).toBe("");
      expect(run.stderr).toContain(`compaction: ${path}:3: the compaction boundary names logicalParentUuid "not-in-this-file", which no line of the file has`);
      expect(run.stderr).toMatch(/hint: .*--skip-corrupt/);
    });

    it("with --skip-corrupt replays from that compaction on, its summary first, and says so on stderr and in the report", () => {
      const path = write();
      const run = sandbox.run(["compare", "--json", "--skip-corrupt", "--session", path, "--presets", "safeguard"]);
      expect(run.code).toBe(0);
      expect(run.stderr).toContain(`compaction: warning: ${path}:3: the compaction boundary names logicalParentUuid "not-in-this-file"`);
      const report = JSON.parse(run.stdout) as Report;
      expect(report).toMatchObject({ messages: 3, calls: 1 });
      expect(report.history.compactions).toEqual([]);
      expect(report.history.startsAt?.at).toBe("line 3");
      expect(report.history.startsAt?.reason).toMatch(/the 2 messages before it were left out/);
    });
  });
});

describe("compaction compare on a pi session with compactions of its own", () => {
  it("replays the branch's every message and lists the session's compactions with their tokensBefore", () => {
    const path = join(sandbox.root, "before-compaction.jsonl");
    copyFileSync(join(FIXTURES_DIR, "pi-before-compaction.jsonl"), path);
    const report = compare("--session", path, "--window", "1000000", "--presets", "safeguard");
    const compactions = numbered(path).filter(({ value }) => value.type === "compaction");
    expect(compactions).toHaveLength(2);
    expect(report.history.view).toBe("whole");
    expect(report.history.compactions.map((c) => c.tokensBefore)).toEqual(compactions.map(({ value }) => value.tokensBefore));
  });
});
