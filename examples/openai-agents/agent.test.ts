/**
 * The @openai/agents example, run with the SDK's ScriptedModel: every model call it makes is
 * within the window, sends no function result without its call, and carries the user's request.
 */
import { createResponsesAdapter, createTiktokenCounter, messageTokenText, type ResponsesItem } from "@compaction/core";
import { expect, it } from "vitest";
import { runExample } from "./agent.js";

const WINDOW = 16_000;
const REQUEST = "Read tickets 1 to 10 and tell me what they have in common.";

it("compacts the Agents SDK's input items before each model call, within the window and with every pair whole", async () => {
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
