/**
 * Issue 10 on the real transcripts: every recorded session (pi, Claude Code and Codex), continued with a
 * request whose tool call returns about 300,000 tokens, is compacted by every built-in preset in
 * a 32,000-token window, and what the context manager sends fits the window, answers every tool
 * call and holds the request; the provider's first try goes through.
 */
import { type ContextManager, createContextManager } from "@compaction/context-manager";
import { builders, type Format } from "@compaction/core/testing";
import { CLAUDE_FIXTURES, CODEX_FIXTURES, loadClaudeMessages, loadCodexMessages, loadPiMessages, PI_FIXTURES } from "@compaction/fixtures";
import { afterEach, describe, expect, it } from "vitest";
import { PRESETS, requestProblems } from "./support/never-stuck.js";
import { tmpProject } from "./support/tmp-project.js";

const WINDOW = 32_000;
const managers: Array<ContextManager<unknown>> = [];
afterEach(async () => {
  for (const manager of managers.splice(0)) await manager.dispose();
});

const FIXTURES: ReadonlyArray<readonly [string, Format, () => unknown[]]> = [
  ...PI_FIXTURES.map((file) => [file, "pi", () => loadPiMessages(file, { context: true })] as const),
  ...CLAUDE_FIXTURES.map((file) => [file, "anthropic", () => loadClaudeMessages(file)] as const),
  ...CODEX_FIXTURES.map((file) => [file, "openai", () => loadCodexMessages(file)] as const),
];

/** About `tokens` tokens by chars/4, in numbered lines. */
function output(tokens: number): string {
  const line = `testlog line 0000000 ${"x".repeat(40)}`;
  return Array.from({ length: Math.ceil((tokens * 4) / line.length) }, (_, i) => `testlog line ${String(i).padStart(7, "0")} ${"x".repeat(40)}`).join("\n");
}

describe.each(PRESETS)("a real session continued with one enormous tool output (preset %s)", (preset) => {
  it.each(FIXTURES)("%s: compacts, and the request sent fits the window and holds the user's request", async (_file, format, load) => {
    const cwd = tmpProject({ ".compactionrc.json": JSON.stringify({ preset, adapter: format, contextWindow: WINDOW, tokenizer: { counter: "estimate" } }) });
    const manager = await createContextManager<unknown>({ cwd, messages: load() });
    managers.push(manager);
    const b = builders(format);
    const request = "Run the whole test suite and tell me which tests fail.";
    await manager.append([b.user(request), b.assistant("Running it.", [{ id: "huge", name: "bash" }])]);
    await manager.afterResponse();
    await manager.append(b.toolResults([{ id: "huge", text: output(300_000) }]));
    const result = await manager.afterResponse();
    expect(result?.status, result?.reason ?? "").toBe("compacted");
    const sent = manager.requestMessages();
    expect(manager.compactor.tokens.total(sent)).toBeLessThanOrEqual(WINDOW);
    expect(requestProblems(manager.compactor.adapter, sent, request)).toEqual([]);
    const sizes: number[] = [];
    await manager.send(async (messages) => {
      sizes.push(manager.compactor.tokens.total(messages));
      if (sizes.at(-1)! > WINDOW) throw Object.assign(new Error("prompt is too long"), { status: 400 });
      return messages;
    });
    expect(sizes).toHaveLength(1);
  });
});
