/**
 * The core's Responses adapter and the Codex importer read the same items the same way: a Codex
 * rollout's response items, read directly as Responses items, issue and answer the same tool-call
 * ids and carry the same tool output text as the Chat messages the importer rebuilds (before the
 * rollout's compaction, which the importer applies and raw items do not).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createOpenAIAdapter, createResponsesAdapter, type ResponsesItem } from "@compaction/core";
import { importCodexRollout } from "@compaction/transcript";
import { describe, expect, it } from "vitest";

const ROLLOUT = fileURLToPath(new URL("../transcript/src/__fixtures__/codex-rollout.jsonl", import.meta.url));

/** The response items written before the first `compacted` line. */
function itemsBeforeCompaction(): ResponsesItem[] {
  const items: ResponsesItem[] = [];
  for (const line of readFileSync(ROLLOUT, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const value = JSON.parse(line) as { type?: string; payload?: ResponsesItem };
    if (value.type === "compacted") break;
    if (value.type === "response_item" && value.payload !== undefined) items.push(value.payload);
  }
  return items;
}

describe("Codex rollout items through the Responses adapter", () => {
  it("finds the tool calls, their outputs and the reasoning the importer finds", () => {
    const items = itemsBeforeCompaction();
    const responses = createResponsesAdapter();
    const facts = items.map((item) => responses.readFacts(item));
    const calls = facts.flatMap((f) => f.toolCalls.map((call) => call.id));
    const results = facts.flatMap((f) => f.toolResultIds);
    expect(calls.length).toBeGreaterThan(0);
    // Every output answers a call made before it.
    const seen = new Set<string>();
    for (const f of facts) {
      for (const id of f.toolResultIds) expect(seen.has(id), `output ${id} before its call`).toBe(true);
      for (const call of f.toolCalls) seen.add(call.id);
    }
    // The importer, reading the whole rollout (with its compaction), keeps calls that are all among these.
    const imported = importCodexRollout(ROLLOUT).messages.map((m) => createOpenAIAdapter().readFacts(m));
    const importedCalls = imported.flatMap((f) => f.toolCalls.map((call) => call.id));
    for (const id of importedCalls) if (calls.includes(id)) expect(results).toContain(id);
    expect(facts.some((f) => f.thinking !== "")).toBe(true);
    expect(facts.filter((f) => f.kind === "toolResult").every((f) => typeof f.text === "string")).toBe(true);
  });

  it("reads each output's text as the importer does", () => {
    const items = itemsBeforeCompaction();
    const responses = createResponsesAdapter();
    const importer = createOpenAIAdapter();
    const importedById = new Map<string, string>();
    const importedErrors = new Map<string, boolean>();
    // The rollout up to its compaction, as a file of its own for the importer.
    const lines = readFileSync(ROLLOUT, "utf8").split("\n");
    const dir = mkdtempSync(join(tmpdir(), "codex-"));
    const before = join(dir, "rollout.jsonl");
    writeFileSync(before, lines.slice(0, lines.findIndex((line) => line.includes('"type":"compacted"'))).join("\n") + "\n");
    const imported = importCodexRollout(before).messages;
    rmSync(dir, { recursive: true, force: true });
    for (const message of imported) {
      const f = importer.readFacts(message);
      for (const id of f.toolResultIds) {
        importedById.set(id, f.text);
        importedErrors.set(id, f.isError);
      }
    }
    let compared = 0;
    for (const item of items) {
      const f = responses.readFacts(item);
      for (const id of f.toolResultIds) {
        const theirs = importedById.get(id);
        if (theirs === undefined) continue;
        compared += 1;
        expect(f.isError).toBe(importedErrors.get(id));
        // The adapter reads a shell output's `output` field; the importer keeps the JSON around it.
        const shell = theirs.startsWith("{") ? (JSON.parse(theirs) as { output?: unknown }).output : undefined;
        expect(typeof shell === "string" ? shell : theirs).toBe(f.text);
      }
    }
    expect(compared).toBeGreaterThan(0);
  });
});
