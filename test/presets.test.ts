/**
 * Every preset compacts every real transcript, through createCompactor and a .compactionrc as a
 * user would set it up, with the extractive summarizer (no model).
 */
import { type CompactionResult, createCompactor, FactsCache, type MessageAdapter } from "@compaction/core";
import { CLAUDE_FIXTURES, CODEX_FIXTURES, loadClaudeMessages, loadCodexMessages, loadPiMessages, PI_FIXTURES } from "@compaction/fixtures";
import { describe, expect, it } from "vitest";
import { tmpProject } from "./support/tmp-project.js";

const PRESETS = ["safeguard", "rolling", "layered", "sliding-window"] as const;
const FIXTURES = [
  ...PI_FIXTURES.map((file) => ({ file, adapter: "pi" as const, load: () => loadPiMessages(file) as unknown[] })),
  ...CLAUDE_FIXTURES.map((file) => ({ file, adapter: "anthropic" as const, load: () => loadClaudeMessages(file) as unknown[] })),
  ...CODEX_FIXTURES.map((file) => ({ file, adapter: "openai" as const, load: () => loadCodexMessages(file) as unknown[] })),
];

function lastUserIndex(facts: FactsCache<unknown>, messages: readonly unknown[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (facts.of(messages[i]).kind === "user") return i;
  return -1;
}

function orphanedResults(adapter: MessageAdapter<unknown>, messages: readonly unknown[]): string[] {
  const facts = new FactsCache(adapter);
  const issued = new Set<string>();
  const orphans: string[] = [];
  for (const m of messages) {
    const f = facts.of(m);
    for (const id of f.toolResultIds) if (!issued.has(id)) orphans.push(id);
    for (const c of f.toolCalls) issued.add(c.id);
  }
  return orphans;
}

describe.each(PRESETS)("preset %s", (preset) => {
  it.each(FIXTURES)("compacts $file keeping the invariants and the last user request", async ({ adapter, load }) => {
    const messages = load();
    // Pin an early user message: it must survive every preset.
    const probe = await createCompactor({ cwd: tmpProject({ ".compactionrc.json": JSON.stringify({ adapter }) }) });
    const firstUser = messages.findIndex((m) => probe.facts.of(m).kind === "user");
    const pinned = { ...(messages[firstUser] as object), pinned: true };
    const input = messages.map((m, i) => (i === firstUser ? pinned : m));
    const total = probe.tokens.total(input);
    probe.dispose();

    const contextWindow = Math.max(4_000, Math.floor(total * 0.7));
    const cwd = tmpProject({
      ".compactionrc.json": JSON.stringify({
        preset,
        adapter,
        contextWindow,
        reserveTokens: 0,
        tokenizer: { counter: "estimate" },
        options: { safeguard: { keepRecentTokens: Math.floor(contextWindow * 0.2) } },
      }),
    });
    const compactor = await createCompactor({ cwd });
    const result: CompactionResult<unknown> = await compactor.compact({ messages: input, trigger: "manual" });
    compactor.dispose();

    expect(result.status, result.reason ?? "").toBe("compacted");
    expect(result.countedTokensAfter).toBeLessThanOrEqual(contextWindow);
    expect(result.countedTokensAfter).toBeLessThan(total);
    expect(orphanedResults(compactor.adapter, result.messages)).toEqual([]);
    expect(result.messages).toContain(pinned);
    // The last user request survives: kept verbatim, or (when its turn is too large to keep
    // whole) quoted in the summary of the split turn.
    const lastUser = input[lastUserIndex(compactor.facts, input)];
    if (!result.messages.includes(lastUser)) {
      expect(result.cut?.isSplitTurn).toBe(true);
      const firstLine = compactor.facts.of(lastUser).text.trim().split("\n")[0]?.slice(0, 80) ?? "";
      expect(firstLine.length).toBeGreaterThan(0);
      expect(result.summary).toContain(firstLine);
    }
    expect(result.event?.strategy).toBeTruthy();
  });
});

describe("preset rolling includes recall", () => {
  const rc = (config: object) => tmpProject({ ".compactionrc.json": JSON.stringify({ contextWindow: 120_000, tokenizer: { counter: "estimate" }, ...config }) });

  it("evicts behind an eviction note naming memory_search, with no fallback warning", async () => {
    const compactor = await createCompactor({ cwd: rc({ preset: "rolling" }) });
    expect(compactor.provides("memory_search")).toBe(true);
    const result = await compactor.compact({ messages: loadPiMessages("pi-large-session.jsonl") });
    compactor.dispose();
    expect(result.status, result.reason ?? "").toBe("compacted");
    expect(result.event?.layer).toBe("evict");
    expect(result.summary).toMatch(/^\[Context rolled: \d+ messages evicted \(\d+ tokens\)\. Full transcript available via memory_search\./);
    expect(result.warnings.join("\n")).not.toContain("fell back");
  });

  it("falls back to a safeguard summary, with a warning, when rolling runs without recall", async () => {
    // rolling listed as the user's own plugin over the safeguard preset: no plugin provides memory_search.
    const compactor = await createCompactor({ cwd: rc({ preset: "safeguard", plugins: ["rolling"] }) });
    expect(compactor.provides("memory_search")).toBe(false);
    const result = await compactor.compact({ messages: loadPiMessages("pi-large-session.jsonl") });
    compactor.dispose();
    expect(result.status, result.reason ?? "").toBe("compacted");
    expect(result.cut?.selectedBy).toBe("rolling");
    expect(result.event?.layer).toBe("summarize");
    expect(result.warnings.join("\n")).toContain("rolling fell back to a safeguard summary instead of evicting");
  });
});
