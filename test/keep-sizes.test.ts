/**
 * What the presets keep, as the provider counts it, on every real transcript: the sizes of the
 * messages kept (safeguard's and rolling's `keepRecentTokens`, sliding-window's `keepRatio`) are
 * converted at the calibrated ratio (`run.messageRatio`), not at the run's ratio (Before over our
 * count), which also holds the system prompt and tools no message shows: 15,000–30,000 tokens of
 * Claude Code's figures. At the run's ratio, `claude-code-viewer` (21,562 tokens, a run ratio of
 * 4.3) was compacted to 22,654: a compaction that made the context bigger.
 */
import { type Compactor, createCompactor } from "@compaction/core";
import { CLAUDE_FIXTURES, loadClaudeMessages, loadPiMessages, PI_FIXTURES } from "@compaction/fixtures";
import { afterEach, describe, expect, it } from "vitest";
import { tmpProject } from "./support/tmp-project.js";

const WINDOW = 200_000;
const KEEP = 20_000;

const FIXTURES: ReadonlyArray<readonly [string, "pi" | "anthropic", () => unknown[]]> = [
  ...PI_FIXTURES.map((file) => [file, "pi", () => loadPiMessages(file, { context: true })] as const),
  ...CLAUDE_FIXTURES.map((file) => [file, "anthropic", () => loadClaudeMessages(file)] as const),
];

const PRESETS: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ["safeguard", { preset: "safeguard" }],
  ["sliding-window", { preset: "sliding-window" }],
  ["rolling without recall (safeguard's fallback)", { preset: "rolling", options: { rolling: { recall: false, minKeepMessages: 0 } } }],
  ["layered", { preset: "layered" }],
];

const compactors: Compactor<unknown>[] = [];
afterEach(() => {
  for (const compactor of compactors.splice(0)) compactor.dispose();
});

describe.each(FIXTURES)("what the presets keep on %s", (_file, adapter, load) => {
  it.each(PRESETS)("%s never leaves a context bigger than it found", async (_name, config) => {
    const compactor = await createCompactor<unknown>({ cwd: tmpProject({ ".compactionrc.json": JSON.stringify(config) }), adapter });
    compactors.push(compactor);
    const messages = load();
    const result = await compactor.compact({ messages, contextWindow: WINDOW });
    if (result.status !== "compacted") return;
    expect(result.event!.tokensAfterCompaction).toBeLessThan(result.tokensBefore);
  });

  it("safeguard keeps the newest 20,000 tokens of messages as the provider counts them, at the calibrated ratio", async () => {
    const compactor = await createCompactor<unknown>({ cwd: tmpProject({}), adapter });
    compactors.push(compactor);
    const messages = load();
    const result = await compactor.compact({ messages, contextWindow: WINDOW });
    if (result.status !== "compacted") {
      // Nothing older than the newest 20,000 tokens (as the provider counts them) to summarise.
      expect(compactor.tokens.total(messages)).toBeLessThanOrEqual(Math.ceil(KEEP / compactor.tokens.budgetRatio(messages)) + 2_000);
      return;
    }
    const keep = Math.floor(KEEP / compactor.tokens.budgetRatio(messages));
    const facts = messages.map((m) => compactor.facts.of(m));
    const lastUser = facts.findLastIndex((f) => f.kind === "user" && !f.pinned);
    const kept = compactor.tokens.total(messages.slice(result.cut!.firstKeptIndex));
    if (compactor.tokens.total(messages.slice(lastUser)) > keep) expect(result.cut!.firstKeptIndex).toBe(lastUser);
    else {
      expect(kept).toBeLessThanOrEqual(keep);
      // Within the turn-boundary loss safeguard allows (maxTurnBoundaryLoss 0.5): not the far
      // smaller share the run's ratio would leave where the system prompt and tools are large.
      expect(kept).toBeGreaterThan(keep / 2);
    }
  });
});
