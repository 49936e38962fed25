/**
 * The LangChain adapter and middleware on real Claude Code sessions (as LangChain messages) and
 * on generated tool loops (fast-check): the call never exceeds the window, no ToolMessage is
 * sent without the AIMessage that called it, and the user's request is always there.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createAnthropicAdapter, createCompactor, type Compactor, messageTokenText } from "@compaction/core";
import { CLAUDE_FIXTURES, loadClaudeMessages } from "@compaction/fixtures";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import fc from "fast-check";
import { createAgent, tool } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { compactionMiddleware } from "./compaction-middleware.js";
import { createLangChainAdapter } from "./langchain-adapter.js";
import { toLangChain } from "./test-support/from-anthropic.js";

const TMP = fileURLToPath(new URL("../.tmp/", import.meta.url));
let cwd: string;
beforeAll(() => {
  mkdirSync(TMP, { recursive: true });
  cwd = mkdtempSync(join(TMP, "real-"));
  writeFileSync(join(cwd, "package.json"), JSON.stringify({ name: "user-project", private: true }));
  writeFileSync(join(cwd, ".compactionrc.json"), JSON.stringify({ preset: "safeguard", reserveTokens: 2000, tokenizer: { counter: "estimate" } }));
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const adapter = createLangChainAdapter();

function orphanResults(messages: readonly BaseMessage[]): string[] {
  const issued = new Set<string>();
  const orphans: string[] = [];
  for (const message of messages) {
    const facts = adapter.readFacts(message);
    for (const id of facts.toolResultIds) if (!issued.has(id)) orphans.push(id);
    for (const call of facts.toolCalls) issued.add(call.id);
  }
  return orphans;
}

describe("real Claude Code sessions as LangChain messages", () => {
  it.each(CLAUDE_FIXTURES)("%s: the adapter reads the same text and tool pairs as the Anthropic adapter", (file) => {
    const anthropic = loadClaudeMessages(file);
    const messages = toLangChain(anthropic);
    const calls = (facts: { toolCalls: readonly { id: string }[] }[]) => facts.flatMap((f) => f.toolCalls.map((c) => c.id));
    const results = (facts: { toolResultIds: readonly string[] }[]) => facts.flatMap((f) => f.toolResultIds).sort();
    const ours = messages.map((m) => adapter.readFacts(m));
    const theirs = anthropic.map((m) => createAnthropicAdapter().readFacts(m));
    expect(calls(ours)).toEqual(calls(theirs));
    expect(results(ours)).toEqual(results(theirs));
    expect(ours.map((f) => f.text).join("").length).toBeGreaterThan(0);
  });

  it.each(CLAUDE_FIXTURES)("%s: compacted for a 32k window, every result keeps its call and real BaseMessages come out", async (file) => {
    const messages = toLangChain(loadClaudeMessages(file));
    const compactor: Compactor<BaseMessage> = await createCompactor<BaseMessage>({ cwd, adapter });
    try {
      const window = 32_000;
      const before = compactor.tokens.total(messages);
      const result = await compactor.compact({ messages, contextWindow: window, trigger: "auto" });
      if (before <= window - 2000) {
        expect(result.status).not.toBe("failed");
        return;
      }
      expect(result.status, result.reason ?? "").toBe("compacted");
      expect(orphanResults(result.messages)).toEqual([]);
      expect(compactor.tokens.total(result.messages)).toBeLessThanOrEqual(window);
      for (const message of result.messages) expect(typeof message.type).toBe("string");
    } finally {
      compactor.dispose();
    }
  });
});

describe("generated tool loops through createAgent", () => {
  const REQUEST = "Collect every log line that mentions a timeout.";

  it("never sends more than the window, no result without its call, the request in every call", async () => {
    const readLog = tool(async ({ name, lines }: { name: string; lines: number }) => Array.from({ length: lines }, (_, i) => `${name}:${i}: request ${i} finished in ${i * 7} ms`).join("\n"), {
      name: "read_log",
      description: "Read a log file.",
      schema: z.object({ name: z.string(), lines: z.number() }),
    });
    const step = fc.record({ parallel: fc.integer({ min: 1, max: 3 }), lines: fc.integer({ min: 5, max: 220 }) });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 12 }), fc.integer({ min: 6_000, max: 20_000 }), async (steps, window) => {
        const model = fakeModel();
        steps.forEach((s, i) =>
          model.respond(
            new AIMessage({
              content: `step ${i}`,
              tool_calls: Array.from({ length: s.parallel }, (_, j) => ({ id: `c${i}_${j}`, name: "read_log", args: { name: `log${i}_${j}`, lines: s.lines }, type: "tool_call" as const })),
            }),
          ),
        );
        model.respond(new AIMessage("done"));
        const agent = createAgent({ model, tools: [readLog], middleware: [compactionMiddleware({ cwd, contextWindow: window })] });
        await agent.invoke({ messages: [new HumanMessage(REQUEST)] }, { recursionLimit: 100 });
        const counter = (await createCompactor<BaseMessage>({ cwd, adapter })).tokens.counter;
        for (const call of model.calls) {
          const sent = call.messages as BaseMessage[];
          const tokens = sent.reduce((sum, m) => sum + counter.count(messageTokenText(adapter.readFacts(m))), 0);
          expect(tokens).toBeLessThanOrEqual(window);
          expect(orphanResults(sent)).toEqual([]);
          expect(sent.map((m) => adapter.readFacts(m).text).join("\n")).toContain(REQUEST);
        }
        counter.dispose();
      }),
      { numRuns: 12 },
    );
  }, 120_000);
});
