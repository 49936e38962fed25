/** The read commands on transcripts other agents wrote: Claude Code and Codex CLI, read-only. */
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { FIXTURES_DIR } from "@compaction/fixtures";
import { importClaudeCode } from "@compaction/transcript";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLAUDE_TRANSCRIPT, createSandbox, type Sandbox } from "./test-support/cli-sandbox.js";

const CODEX_ROLLOUT = new URL("../../transcript/src/__fixtures__/codex-rollout.jsonl", import.meta.url);
const NO_COLOR = { NO_COLOR: "1" };

let sandbox: Sandbox;
let claude: string;
let codex: string;
beforeEach(async () => {
  sandbox = await createSandbox();
  claude = join(sandbox.root, "claude-session.jsonl");
  codex = join(sandbox.root, "rollout-2025-01-01T00-00-00-codex.jsonl");
  copyFileSync(CLAUDE_TRANSCRIPT, claude);
  copyFileSync(CODEX_ROLLOUT, codex);
});
afterEach(() => sandbox.remove());

describe("read commands on a Claude Code transcript", () => {
  it("context status counts its main context with the Anthropic adapter and names it read-only", () => {
    const run = sandbox.run(["context", "status", "--session", claude], NO_COLOR);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("[Claude Code transcript, read-only]");
    const status = JSON.parse(sandbox.run(["context", "status", "--session", claude, "--json"]).stdout) as Record<string, any>;
    const imported = importClaudeCode(claude);
    expect(status["session"]).toEqual({ path: claude, id: imported.sessionId, format: "claude-code" });
    expect(status["messages"]).toBe(imported.messages.length);
    expect(status["tokens"]).toBeGreaterThan(0);
    expect(status["compactions"]["count"]).toBe(imported.compactions);
  });

  it("context status on one with real compactions counts the context after the latest, and says so", () => {
    const compacted = join(sandbox.root, "attribution.jsonl");
    copyFileSync(join(FIXTURES_DIR, "claude-code-entire-attribution-6113e919.jsonl"), compacted);
    const status = JSON.parse(sandbox.run(["context", "status", "--session", compacted, "--json"]).stdout) as Record<string, any>;
    const imported = importClaudeCode(compacted);
    expect(imported.messages[0]?.isCompactSummary).toBe(true);
    expect(status["messages"]).toBe(imported.messages.length);
    expect(status["compactions"]["count"]).toBe(3);
    const text = sandbox.run(["context", "status", "--session", compacted], NO_COLOR);
    expect(text.stdout).toMatch(/^Compactions {6}3, the context counted is what follows the latest$/m);
  });

  it("context inspect breaks its tokens down, tool outputs included", () => {
    const inspection = JSON.parse(sandbox.run(["context", "inspect", "--session", claude, "--json"]).stdout) as Record<string, any>;
    expect(inspection["session"]["format"]).toBe("claude-code");
    expect(inspection["breakdown"]["toolOutputs"]["messages"]).toBeGreaterThan(0);
    const sum = Object.values(inspection["breakdown"] as Record<string, { tokens: number }>).reduce((total, share) => total + share.tokens, 0);
    expect(sum).toBe(inspection["tokens"]);
  });

  it("compact --dry-run shows the plan in a window it overflows, keeping from a line uuid of the file", () => {
    sandbox.writeConfig(".compactionrc.json", JSON.stringify({ contextWindow: 64_000 }));
    const text = sandbox.run(["compact", "--dry-run", "--session", claude], NO_COLOR);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/Compacts\s+\d+ messages, by safeguard/);
    const report = JSON.parse(sandbox.run(["compact", "--dry-run", "--json", "--session", claude]).stdout) as Record<string, any>;
    expect(report["status"]).toBe("compacted");
    expect(report["tokensAfter"]).toBeLessThan(64_000);
    expect(report["written"]).toBe(false);
    expect(importClaudeCode(claude).entryIds).toContain(report["firstKeptEntryId"]);
  });

  it("refuses to write a compaction to it: exit 3, the file unchanged, a hint naming what works", () => {
    const before = readFileSync(claude);
    const run = sandbox.run(["compact", "--yes", "--session", claude], NO_COLOR);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/^compaction: Cannot write a compaction: .* is a Claude Code transcript, not a pi session: this tool reads its context but never writes to it/);
    expect(run.stderr).toContain("hint: On imported transcripts, use context status");
    expect(readFileSync(claude).equals(before)).toBe(true);
  });

  it.each([
    [["context", "history"], "list compaction entries"],
    [["session", "branch", "--at", "x"], "branch the session"],
    [["autocompact", "off"], "set auto-compaction"],
  ])("refuses %j with exit 3, saying it cannot %s", (args, what) => {
    const run = sandbox.run([...args, "--session", claude], NO_COLOR);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`Cannot ${what}:`);
  });
});

describe("read commands on a Codex rollout", () => {
  it("context status reads it with the OpenAI adapter", () => {
    const status = JSON.parse(sandbox.run(["context", "status", "--session", codex, "--json"]).stdout) as Record<string, any>;
    expect(status["session"]["format"]).toBe("codex");
    expect(status["messages"]).toBeGreaterThan(0);
  });

  it("compact --dry-run --json reports on it without writing", () => {
    const before = readFileSync(codex);
    const run = sandbox.run(["compact", "--dry-run", "--json", "--session", codex]);
    const report = JSON.parse(run.stdout) as Record<string, any>;
    expect(report["session"]["format"]).toBe("codex");
    expect(report["dryRun"]).toBe(true);
    expect(readFileSync(codex).equals(before)).toBe(true);
  });
});

describe("a file that is no transcript", () => {
  it("exits 3 for a directory given as the session, saying it is a directory", () => {
    const run = sandbox.run(["context", "status", "--session", sandbox.root], NO_COLOR);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("it is a directory");
    expect(run.stderr).not.toContain("unexpected error");
  });

  it("exits 3 naming the file and what it found", () => {
    const path = join(sandbox.root, "notes.jsonl");
    copyFileSync(new URL("../package.json", import.meta.url), path);
    const run = sandbox.run(["context", "status", "--session", path], NO_COLOR);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`${path} is not a transcript this tool reads`);
  });
});
