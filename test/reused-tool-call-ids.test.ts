/**
 * Tool-call ids reused every turn (`call_0` in each turn, as some OpenAI-compatible servers
 * send): every strategy plans with the core's pairing (by position), so each preset compacts
 * such a conversation within its budget, keeps every kept result's own call, and rolling meets
 * its target instead of evicting one message.
 */
import { createCompactor, FactsCache, toolPairs } from "@compaction/core";
import { builders, type Format, FORMATS } from "@compaction/core/testing";
import { describe, expect, it } from "vitest";
import { tmpProject } from "./support/tmp-project.js";

const PRESETS = ["safeguard", "rolling", "layered", "sliding-window"] as const;

function conversation(format: Format, turns: number): unknown[] {
  const b = builders(format);
  const messages: unknown[] = [];
  for (let t = 0; t < turns; t++) {
    messages.push(
      b.user(`step ${t}: ${"please look at the build output ".repeat(20)}`),
      b.assistant("", [{ id: "call_0", name: "bash", args: { command: `make step-${t}` } }]),
      ...b.toolResults([{ id: "call_0", text: `output of step ${t}: ${"compiler line ".repeat(150)}` }]),
      b.assistant(`step ${t} done: ${"the build passed ".repeat(15)}`),
    );
  }
  return messages;
}

describe.each(PRESETS)("preset %s with tool-call ids reused every turn", (preset) => {
  it.each(FORMATS)("compacts a %s conversation within its budget, every kept result with its own call", async (format) => {
    const adapter = format === "pi" ? "pi" : format;
    const messages = conversation(format, 40);
    const probe = await createCompactor({ cwd: tmpProject({ ".compactionrc.json": JSON.stringify({ adapter, tokenizer: { counter: "estimate" } }) }) });
    const total = probe.tokens.total(messages);
    probe.dispose();
    const contextWindow = Math.floor(total / 2);
    const cwd = tmpProject({
      ".compactionrc.json": JSON.stringify({ preset, adapter, contextWindow, reserveTokens: 0, tokenizer: { counter: "estimate" } }),
    });
    const compactor = await createCompactor({ cwd });
    const result = await compactor.compact({ messages, trigger: "manual" });
    const facts = new FactsCache(compactor.adapter);
    compactor.dispose();

    expect(result.status, `${result.reason ?? ""} ${result.warnings.join(" | ")}`).toBe("compacted");
    expect(result.countedTokensAfter).toBeLessThanOrEqual(contextWindow);
    // Far more than one message goes: the plan is not blocked by the repeated id.
    expect(result.cut?.compactedIndices.length ?? 0).toBeGreaterThan(20);

    const pairs = toolPairs(messages.map((m) => facts.of(m)));
    const kept = new Set(result.messages);
    messages.forEach((message, i) => {
      if (!kept.has(message)) return;
      for (const call of pairs.callsOf[i] ?? []) expect(kept.has(messages[call]), `result ${i} kept without its call ${call}`).toBe(true);
    });
    if (preset === "rolling") expect(result.warnings.filter((w) => w.includes("over the target"))).toEqual([]);
  });
});
