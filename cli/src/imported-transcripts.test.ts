/** The read commands on transcripts other agents wrote: Claude Code and Codex CLI, read-only. */
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FIXTURES_DIR } from "@compaction/fixtures";
import { importClaudeCode } from "@compaction/transcript";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLAUDE_TRANSCRIPT, createSandbox, type Sandbox } from "./test-support/cli-sandbox.js";

const CODEX_ROLLOUT = new URL("../../transcript/src/__fixtures__/codex-rollout.jsonl", import.meta.url);
/** A real Codex CLI rollout (0.47, gpt-5-codex): 42 token_count events, the first with info null, model_context_window 272000. */
const REAL_CODEX_ROLLOUT = join(FIXTURES_DIR, "codex-pomodoro-example.jsonl");
const NO_COLOR = { NO_COLOR: "1" };

let sandbox: Sandbox;
let claude: string;
let codex: string;
let realCodex: string;
beforeEach(async () => {
  sandbox = await createSandbox();
  claude = join(sandbox.root, "claude-session.jsonl");
  codex = join(sandbox.root, "rollout-2025-01-01T00-00-00-codex.jsonl");
  copyFileSync(CLAUDE_TRANSCRIPT, claude);
  copyFileSync(CODEX_ROLLOUT, codex);
  realCodex = join(sandbox.root, "rollout-2025-10-21T19-56-00-019a085e.jsonl");
  copyFileSync(REAL_CODEX_ROLLOUT, realCodex);
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

describe("a real Codex rollout, measured as the provider counted it", () => {
  it("context status shows the window the rollout records and starts from the newest usage figure", () => {
    const run = sandbox.run(["context", "status", "--session", realCodex], NO_COLOR);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("] 7% context (19,856 / 272,000 tokens)\n");
    expect(run.stdout).toContain("\nWindow           272,000 tokens, the model's window as the session records it (contextWindow in the config overrides it)\n");
    expect(run.stdout).toContain("\nMeasure          provider's: usage figure of the newest message (nothing after it to count)\n");
    expect(run.stdout).toContain("on at 80% (217,600 tokens)");
    const status = JSON.parse(sandbox.run(["context", "status", "--session", realCodex, "--json"]).stdout) as Record<string, any>;
    expect(status).toMatchObject({ tokens: 19_856, contextWindow: 272_000, contextWindowSource: "session", measure: { base: "usage", counted: 0 } });
  });

  it("context status calibrates what follows the newest figure from the rollout's usage pairs", () => {
    // Up to the last tool output: the figure of the call before it, plus the output counted.
    const lines = readFileSync(realCodex, "utf8").trimEnd().split("\n");
    const cut = join(sandbox.root, "rollout-cut.jsonl");
    writeFileSync(cut, `${lines.slice(0, 147).join("\n")}\n`);
    const status = JSON.parse(sandbox.run(["context", "status", "--session", cut, "--json"]).stdout) as Record<string, any>;
    expect(status["measure"]).toMatchObject({ base: "usage", counted: 1, source: "usage" });
    expect(status["measure"]["samples"]).toBeGreaterThanOrEqual(3);
    expect(status["tokens"]).toBeGreaterThan(18_702);
  });

  it("takes the config's contextWindow over the recorded window when the config sets it", () => {
    sandbox.writeConfig(".compactionrc.json", JSON.stringify({ contextWindow: 128_000 }));
    const status = JSON.parse(sandbox.run(["context", "status", "--session", realCodex, "--json"]).stdout) as Record<string, any>;
    expect(status).toMatchObject({ tokens: 19_856, contextWindow: 128_000, contextWindowSource: "config" });
    expect(sandbox.run(["context", "status", "--session", realCodex], NO_COLOR).stdout).not.toContain("Window");
  });

  it("compact --dry-run shows Before in the provider's measure at the recorded window, and compacts at that window", () => {
    const before = readFileSync(realCodex);
    const run = sandbox.run(["compact", "--dry-run", "--session", realCodex], NO_COLOR);
    expect(run.stdout).toMatch(/Before\s+19,856 tokens \(43 messages\)\nWindow\s+272,000 tokens, the model's window as the session records it/);
    expect(run.stdout).toContain("\nMeasure   provider's: usage figure of the newest message (nothing after it to count)\n");
    const report = JSON.parse(sandbox.run(["compact", "--dry-run", "--json", "--session", realCodex]).stdout) as Record<string, any>;
    expect(report).toMatchObject({ dryRun: true, tokensBefore: 19_856, contextWindow: 272_000, contextWindowSource: "session", measure: { base: "usage" } });
    // rolling says the window it ran at.
    expect(sandbox.run(["compact", "--dry-run", "--preset", "rolling", "--session", realCodex], NO_COLOR).stderr).toContain("50% of the 272000-token window");
    expect(readFileSync(realCodex).equals(before)).toBe(true);
  });

  it("compare replays at the recorded window unless --window is given", () => {
    const at = (...args: string[]) => JSON.parse(sandbox.run(["compare", "--session", realCodex, "--presets", "safeguard", "--json", ...args]).stdout) as Record<string, any>;
    expect(at()).toMatchObject({ contextWindow: 272_000, contextWindowSource: "session" });
    expect(at("--window", "64000")).toMatchObject({ contextWindow: 64_000, contextWindowSource: "option" });
  });

  it("reports a usage figure it cannot read on stderr, line and reason, and measures from the others", () => {
    const lines = readFileSync(realCodex, "utf8").trimEnd().split("\n");
    const last = lines.length - 3;
    expect(lines[last]).toContain('"type":"token_count"');
    lines[last] = (lines[last] as string).replace('"last_token_usage":{"input_tokens":18733', '"last_token_usage":{"input_tokens":"18733"');
    const broken = join(sandbox.root, "rollout-broken.jsonl");
    writeFileSync(broken, `${lines.join("\n")}\n`);
    const run = sandbox.run(["context", "status", "--session", broken, "--json"]);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(
      `compaction: line ${last + 1} of ${broken}: token_count info.last_token_usage.input_tokens: expected a whole number of tokens (0 or more), found string "18733"; the event's usage figure is not read\n`,
    );
    // The figure of the call before, plus the count of its tool output and of the last reply.
    expect(JSON.parse(run.stdout)).toMatchObject({ contextWindow: 272_000, measure: { base: "usage", counted: 2 } });
  });

  it("uses a small recorded window with that window's own reserve", () => {
    const small = join(sandbox.root, "rollout-small.jsonl");
    writeFileSync(small, readFileSync(realCodex, "utf8").replaceAll('"model_context_window":272000', '"model_context_window":8000'));
    const run = sandbox.run(["context", "status", "--session", small, "--json"]);
    expect(JSON.parse(run.stdout)).toMatchObject({ contextWindow: 8_000, contextWindowSource: "session" });
  });

  it("uses the default window, saying why, when the config's reserveTokens does not fit the recorded one", () => {
    const small = join(sandbox.root, "rollout-small.jsonl");
    writeFileSync(small, readFileSync(realCodex, "utf8").replaceAll('"model_context_window":272000', '"model_context_window":8000'));
    sandbox.writeConfig(".compactionrc.json", JSON.stringify({ reserveTokens: 16_384 }));
    const run = sandbox.run(["context", "status", "--session", small, "--json"]);
    expect(JSON.parse(run.stdout)).toMatchObject({ contextWindow: 200_000, contextWindowSource: "default" });
    expect(run.stderr).toMatch(/the session records a context window of 8,000 tokens, but the reply's reserve \(reserveTokens in .*\.compactionrc\.json, \/reserveTokens\) is 16384 tokens, which does not fit the 8,000-token context window: .*; using the default 200,000\./);
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
