import { rmSync } from "node:fs";
import type { AgentTool } from "@mariozechner/pi-agent-core";
import { validateToolArguments } from "@mariozechner/pi-ai";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { memorySearchTool } from "./memory-search-tool.js";
import { openRecallIndex } from "./recall-index.js";
import { append, assistant, sessionWith, user } from "./test-support/sessions.js";

async function setup(options: Parameters<typeof memorySearchTool>[1] = {}) {
  const { path, ids } = await sessionWith([
    user("the deploy script fails with EACCES on /var/run"),
    assistant("checking permissions", [{ id: "c1", name: "bash", args: { command: "ls -l /var/run" } }]),
    user(`a long log: ${"noise ".repeat(100)}`),
  ]);
  const index = await openRecallIndex(path);
  return { path, ids, index, tool: memorySearchTool(index, options) };
}

describe("memorySearchTool: definitions", () => {
  it("gives the same JSON Schema to OpenAI, Anthropic and pi, under the configured name", async () => {
    const { tool } = await setup({ name: "recall_history" });
    const { openai, anthropic, pi } = tool.definition;
    expect(openai).toEqual({ type: "function", function: { name: "recall_history", description: tool.description, parameters: tool.parameters } });
    expect(anthropic).toEqual({ name: "recall_history", description: tool.description, input_schema: tool.parameters });
    expect(pi).toMatchObject({ name: "recall_history", label: "Memory search", description: tool.description, parameters: tool.parameters });
    expect(tool.description).toContain('recall_history with {"entryId"');
  });

  it("has parameters that compile as strict JSON Schema and accept exactly the documented arguments", async () => {
    const { tool } = await setup({ maxLimit: 10 });
    const validate = new Ajv({ strict: true }).compile(tool.parameters);
    expect(validate({ query: "deploy" })).toBe(true);
    expect(validate({ query: "deploy", limit: 10 })).toBe(true);
    expect(validate({ entryId: "abc" })).toBe(true);
    expect(validate({ query: "" })).toBe(false);
    expect(validate({ query: "deploy", limit: 11 })).toBe(false);
    expect(validate({ query: "deploy", extra: 1 })).toBe(false);
  });

  it("is a pi AgentTool whose plain JSON Schema pi's own argument check applies", async () => {
    const { tool } = await setup();
    const agentTool: AgentTool = tool.definition.pi;
    expect(validateToolArguments(agentTool, { type: "toolCall", id: "t1", name: agentTool.name, arguments: { query: "deploy", limit: 2 } })).toEqual({ query: "deploy", limit: 2 });
    expect(() => validateToolArguments(agentTool, { type: "toolCall", id: "t1", name: agentTool.name, arguments: { limit: 0 } })).toThrow(/limit/);
  });
});

describe("memorySearchTool: handle", () => {
  it("returns the best matches with entry id, role, time and snippet, and how to read one whole", async () => {
    const { tool, ids } = await setup();
    const result = await tool.handle({ query: "EACCES deploy" });
    expect(result.kind).toBe("search");
    if (result.kind !== "search") return;
    expect(result.hits.map((hit) => hit.entryId)).toEqual([ids[0]]);
    expect(result.text).toContain(`1. entry ${ids[0]} · user · `);
    expect(result.text).toContain("the deploy script fails with EACCES on /var/run");
    expect(result.text).toContain('Read a whole entry with memory_search({"entryId": "<id>"})');
  });

  it("accepts the arguments as JSON text", async () => {
    const { tool } = await setup();
    expect((await tool.handle('{"query":"permissions"}')).kind).toBe("search");
  });

  it("uses the default limit, and caps a larger one at maxLimit with a note", async () => {
    const { tool } = await setup({ limit: 1, maxLimit: 2 });
    const one = await tool.handle({ query: "var run deploy permissions" });
    expect(one.kind === "search" && one.hits.length).toBe(1);
    const capped = await tool.handle({ query: "var run deploy permissions", limit: 50 });
    expect(capped.kind === "search" && capped.hits.length).toBe(2);
    expect(capped.text).toContain("(limit capped at 2)");
  });

  it("says so, without failing, when nothing matches", async () => {
    const { tool } = await setup();
    expect(await tool.handle({ query: "kubernetes" })).toMatchObject({ kind: "search", isError: false, hits: [], text: expect.stringContaining('No entries on the current branch match "kubernetes"') });
  });

  it("returns a whole entry by entryId", async () => {
    const { tool, ids } = await setup();
    const result = await tool.handle({ entryId: ids[1] });
    expect(result.kind).toBe("entry");
    expect(result.text).toMatch(new RegExp(`^Entry ${ids[1]} · assistant · .* · line 3\\nchecking permissions\\nbash command: ls -l /var/run$`));
  });

  it("cuts a long entry at maxEntryChars and says how much was left out", async () => {
    const { tool, ids } = await setup({ maxEntryChars: 200 });
    const result = await tool.handle({ entryId: ids[2] });
    const text = `a long log: ${"noise ".repeat(100)}`;
    expect(result.text).toContain(`[… ${text.length - 200} more characters not shown]`);
  });

  it("refuses an entry on another branch, and finds it from that branch's leaf", async () => {
    const { path, ids, index } = await setup();
    const [other] = await append(path, [user("abandoned idea")], ids[0]);
    await append(path, [user("current line of work")], ids[2]);
    const onCurrent = memorySearchTool(index);
    expect(await onCurrent.handle({ entryId: other })).toMatchObject({ isError: true, text: expect.stringContaining("on another branch") });
    expect(await onCurrent.handle({ query: "abandoned" })).toMatchObject({ hits: [] });
    const onOther = memorySearchTool(index, { leafId: () => other });
    expect(await onOther.handle({ entryId: other })).toMatchObject({ kind: "entry" });
    expect(await onOther.handle({ query: "abandoned" })).toMatchObject({ kind: "search", hits: [{ entryId: other }] });
  });

  it.each([
    ["not an object", 42, "must be an object"],
    ["JSON text that does not parse", "{query", "must be a JSON object"],
    ["an unknown argument", { query: "x", q: "y" }, "Unknown argument 'q'"],
    ["neither query nor entryId", {}, "Missing 'query'"],
    ["both query and entryId", { query: "x", entryId: "y" }, "not both"],
    ["an empty query", { query: "  " }, "'query' must be a non-empty string"],
    ["a query that is not a string", { query: ["x"] }, "'query' must be a non-empty string"],
    ["an entryId that is not a string", { entryId: 7 }, "'entryId' must be a non-empty string"],
    ["a limit of 0", { query: "x", limit: 0 }, "'limit' must be a whole number from 1 to 20"],
    ["a fractional limit", { query: "x", limit: 2.5 }, "'limit' must be a whole number"],
    ["a limit that is not a number", { query: "x", limit: "many" }, "'limit' must be a whole number"],
    ["an unknown entryId", { entryId: "nope1234" }, 'No entry "nope1234"'],
  ])("answers %s with an error text the agent can act on", async (_case, args, message) => {
    const { tool } = await setup();
    expect(await tool.handle(args)).toMatchObject({ kind: "error", isError: true, text: expect.stringContaining(message) });
  });

  it("accepts a limit written as a number in a string", async () => {
    const { tool } = await setup();
    const result = await tool.handle({ query: "var run deploy", limit: "1" });
    expect(result.kind === "search" && result.hits.length).toBe(1);
  });

  it("answers with an error text, not a throw, when the transcript is gone", async () => {
    const { tool, path } = await setup();
    rmSync(path);
    expect(await tool.handle({ query: "deploy" })).toMatchObject({ isError: true, text: expect.stringContaining("could not read the session's history") });
  });
});

describe("memorySearchTool: pi execute", () => {
  it("returns the text as content and the hits as details", async () => {
    const { tool, ids } = await setup();
    const result = await tool.definition.pi.execute("call-1", { query: "EACCES" });
    expect(result.content).toEqual([{ type: "text", text: expect.stringContaining(`entry ${ids[0]}`) }]);
    expect(result.details).toMatchObject({ hits: [{ entryId: ids[0] }] });
  });

  it("returns an entry's fields without the raw entry as details", async () => {
    const { tool, ids } = await setup();
    const result = await tool.definition.pi.execute("call-1", { entryId: ids[0] });
    expect(result.details).toEqual({ entry: expect.objectContaining({ entryId: ids[0], role: "user" }) });
    expect("entry" in result.details && "entry" in result.details.entry).toBe(false);
  });

  it("throws the error text, which pi turns into an error result for the model", async () => {
    const { tool } = await setup();
    await expect(tool.definition.pi.execute("call-1", { entryId: 5 })).rejects.toThrow("'entryId' must be a non-empty string");
  });
});
