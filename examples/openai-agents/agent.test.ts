/**
 * The @openai/agents example, run with the SDK's ScriptedModel: every model call it makes is
 * within the window, sends no function result without its call, and carries the user's request.
 */
import { existsSync } from "node:fs";
import { createResponsesAdapter, createTiktokenCounter, messageTokenText, type ResponsesItem } from "@compaction/core";
import { expect, it } from "vitest";

/**
 * The SDK is not part of the repository's `npm ci` (about 85 MB): scripts/host-install.mjs puts it
 * in a cache and links it into this folder's node_modules, and `npm test` runs it first. Where it
 * is missing the test says so: under CI (CI=true) the run fails, elsewhere it skips naming the
 * command that installs it.
 */
const MISSING = existsSync(new URL("./node_modules/@openai/agents/package.json", import.meta.url))
  ? undefined
  : "the OpenAI Agents SDK (@openai/agents) is not installed: it is not part of npm ci; run `node scripts/host-install.mjs openai-agents` at the repository root (npm test does)";
if (MISSING !== undefined) {
  if (process.env.CI !== undefined && !["", "0", "false"].includes(process.env.CI)) throw new Error(`CI must run the OpenAI Agents example, but ${MISSING}`);
  console.warn(`examples/openai-agents: skipped: ${MISSING}`);
}

const WINDOW = 16_000;
const REQUEST = "Read tickets 1 to 10 and tell me what they have in common.";

it.skipIf(MISSING !== undefined)("compacts the Agents SDK's input items before each model call, within the window and with every pair whole", async () => {
  const { runExample } = await import("./agent.js");
  const { model, finalOutput, compactions } = await runExample();
  expect(finalOutput).toContain("CSV export timeout");
  expect(model.calls).toHaveLength(11);
  expect(compactions.length).toBeGreaterThan(0);
  expect(compactions.some((result) => result.status === "compacted")).toBe(true);
  expect(compactions.filter((result) => result.status === "failed" || result.status === "cancelled")).toEqual([]);

  const adapter = createResponsesAdapter();
  const counter = createTiktokenCounter();
  try {
    for (const call of model.calls) {
      const input = call.request.input as ResponsesItem[];
      expect(Array.isArray(input)).toBe(true);
      const tokens = input.reduce((sum, item) => sum + counter.count(messageTokenText(adapter.readFacts(item))), counter.count(call.request.systemInstructions ?? ""));
      expect(tokens).toBeLessThanOrEqual(WINDOW);
      const issued = new Set<string>();
      for (const item of input) {
        const facts = adapter.readFacts(item);
        for (const id of facts.toolResultIds) expect(issued.has(id), `result ${id} without its call`).toBe(true);
        for (const toolCall of facts.toolCalls) issued.add(toolCall.id);
      }
      expect(input.map((item) => adapter.readFacts(item).text).join("\n")).toContain(REQUEST);
    }
    // Uncompacted, the last call would carry ~23k tokens; every compaction brought it under 16k.
    for (const result of compactions.filter((r) => r.status === "compacted")) expect(result.tokensAfter).toBeLessThan(Math.min(result.tokensBefore, WINDOW));
  } finally {
    counter.dispose();
  }
});
