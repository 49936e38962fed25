/**
 * The OpenAI Responses adapter: a table of item shapes (as the API documents them) and their
 * facts, what it builds, mapText, dropThinking and mapToolArguments (and the core's shrinking
 * through them), and a compaction over items that never splits a call from its output.
 */
import { describe, expect, it } from "vitest";
import { Compactor } from "../compactor/compactor.js";
import { keepRecent } from "../testing/keep-recent.js";
import { listingSummarizer } from "../testing/summarizer.js";
import { createEstimateCounter } from "../tokens/estimate-counter.js";
import { SHRINK_MARKER_PATTERN } from "../shrink/head-and-tail.js";
import { shrinkToBudget } from "../shrink/shrink-to-budget.js";
import { MessageTokenCounter } from "../tokens/message-tokens.js";
import { FactsCache, type MessageFacts } from "./adapter.js";
import { createResponsesAdapter, RESPONSES_NOTE_PREFIX, type ResponsesFunctionCallItem, type ResponsesItem } from "./responses-adapter.js";

const adapter = createResponsesAdapter();

type Expected = Partial<Pick<MessageFacts, "kind" | "text" | "thinking" | "toolCalls" | "toolResultIds" | "isError" | "imageCount" | "toolName" | "id">>;

const table: Array<[string, ResponsesItem, Expected]> = [
  ["an easy input message", { role: "user", content: "fix the build" }, { kind: "user", text: "fix the build" }],
  [
    "a user message with input_text and input_image parts",
    {
      type: "message",
      role: "user",
      content: [
        { type: "input_text", text: "what is in this image?" },
        { type: "input_image", image_url: "data:image/png;base64,aGk=", detail: "auto" },
        { type: "input_file", file_id: "file-abc" },
      ],
    },
    { kind: "user", text: "what is in this image?", imageCount: 1 },
  ],
  ["a developer message", { type: "message", role: "developer", content: [{ type: "input_text", text: "be terse" }] }, { kind: "system", text: "be terse" }],
  ["a system message", { role: "system", content: "policy" }, { kind: "system", text: "policy" }],
  [
    "an output message with output_text and a refusal",
    {
      type: "message",
      id: "msg_67ccd3acc8d48190a77525dc6de64b4104becb25c45c1d41",
      status: "completed",
      role: "assistant",
      content: [
        { type: "output_text", text: "Here you go.", annotations: [] },
        { type: "refusal", refusal: "I can't share that part." },
      ],
    },
    { kind: "assistant", text: "Here you go.\nI can't share that part.", id: "msg_67ccd3acc8d48190a77525dc6de64b4104becb25c45c1d41" },
  ],
  [
    "a function_call (arguments parsed)",
    { type: "function_call", id: "fc_12345xyz", call_id: "call_12345xyz", name: "get_weather", arguments: '{"location":"Paris, France"}', status: "completed" },
    { kind: "assistant", toolCalls: [{ id: "call_12345xyz", name: "get_weather", arguments: { location: "Paris, France" } }], id: "fc_12345xyz" },
  ],
  [
    "a function_call with arguments that are not JSON",
    { type: "function_call", call_id: "call_bad", name: "f", arguments: "{not json" },
    { kind: "assistant", toolCalls: [{ id: "call_bad", name: "f", arguments: "{not json" }] },
  ],
  [
    "a function_call_output",
    { type: "function_call_output", call_id: "call_12345xyz", output: '{"temperature": 22}' },
    { kind: "toolResult", text: '{"temperature": 22}', toolResultIds: ["call_12345xyz"], isError: false },
  ],
  [
    "a function_call_output with content parts",
    { type: "function_call_output", call_id: "call_2", output: [{ type: "input_text", text: "see" }, { type: "input_image", image_url: "data:x" }] },
    { kind: "toolResult", text: "see", imageCount: 1, toolResultIds: ["call_2"] },
  ],
  [
    "a shell output whose exit code failed (as Codex writes it)",
    { type: "function_call_output", call_id: "call_3", output: '{"output":"make: *** [all] Error 2","metadata":{"exit_code":2,"duration_seconds":0.4}}' },
    { kind: "toolResult", text: "make: *** [all] Error 2", isError: true, toolResultIds: ["call_3"] },
  ],
  [
    "a custom_tool_call (freeform input)",
    { type: "custom_tool_call", call_id: "call_patch", name: "apply_patch", input: "*** Begin Patch\n*** End Patch" },
    { kind: "assistant", toolCalls: [{ id: "call_patch", name: "apply_patch", arguments: "*** Begin Patch\n*** End Patch" }] },
  ],
  [
    "a custom_tool_call_output",
    { type: "custom_tool_call_output", call_id: "call_patch", output: "Done!" },
    { kind: "toolResult", text: "Done!", toolResultIds: ["call_patch"] },
  ],
  [
    "a reasoning item (summary and content are thinking; encrypted content is not)",
    {
      type: "reasoning",
      id: "rs_6820f383d7c08191846711c5df8233bc0ac5ba57aafcbac7",
      summary: [{ type: "summary_text", text: "**Checking the weather**" }],
      content: [{ type: "reasoning_text", text: "The user wants Paris." }],
      encrypted_content: "gAAAAABo...",
    },
    { kind: "assistant", text: "", thinking: "**Checking the weather**\nThe user wants Paris." },
  ],
  [
    "a computer_call and its output pair by call_id",
    { type: "computer_call", id: "cu_1", call_id: "call_comp", action: { type: "click", x: 1, y: 2 }, pending_safety_checks: [], status: "completed" },
    { kind: "assistant", toolCalls: [{ id: "call_comp", name: "computer", arguments: { type: "click", x: 1, y: 2 } }] },
  ],
  [
    "a computer_call_output",
    { type: "computer_call_output", call_id: "call_comp", output: { type: "computer_screenshot", image_url: "data:x" } },
    { kind: "toolResult", toolResultIds: ["call_comp"], toolName: "computer" },
  ],
  [
    "the Agents SDK's function_call (callId)",
    { type: "function_call", callId: "call_sdk", name: "lookup", arguments: '{"q":"x"}', status: "completed", providerData: {} },
    { kind: "assistant", toolCalls: [{ id: "call_sdk", name: "lookup", arguments: { q: "x" } }] },
  ],
  [
    "the Agents SDK's function_call_result (text output)",
    { type: "function_call_result", callId: "call_sdk", name: "lookup", status: "completed", output: { type: "text", text: "found it" } },
    { kind: "toolResult", text: "found it", toolResultIds: ["call_sdk"], toolName: "lookup" },
  ],
  [
    "the Agents SDK's reasoning item (content and rawContent)",
    { type: "reasoning", content: [{ type: "input_text", text: "plan" }], rawContent: [{ type: "reasoning_text", text: "raw plan" }] },
    { kind: "assistant", thinking: "plan\nraw plan" },
  ],
  ["OpenAI's own compaction item", { type: "compaction", id: "cmp_1", encrypted_content: "gAAAA..." }, { kind: "summary", text: "" }],
  [
    "an mcp_call (self-contained: its output is its text)",
    { type: "mcp_call", id: "mcp_1", name: "roll", server_label: "dice", arguments: '{"n":2}', output: "4" },
    { kind: "other", text: "4" },
  ],
  ["a web_search_call", { type: "web_search_call", id: "ws_1", status: "completed" }, { kind: "other", text: "" }],
  ["a summary this adapter wrote", createResponsesAdapter().createSummary("## Goal\nship it"), { kind: "summary", text: "## Goal\nship it" }],
  ["a note this adapter wrote", createResponsesAdapter().createNote("3 items evicted"), { kind: "other", text: "3 items evicted" }],
];

describe("createResponsesAdapter: facts", () => {
  it.each(table)("reads %s", (_label, item, expected) => {
    expect(adapter.readFacts(item)).toMatchObject(expected);
  });

  it("throws COMPACTION_MESSAGE_UNREADABLE for what is not an item", () => {
    expect(() => adapter.readFacts(42 as unknown as ResponsesItem)).toThrow(expect.objectContaining({ code: "COMPACTION_MESSAGE_UNREADABLE" }));
  });

  it("builds summaries and notes the API accepts: input messages with no extra fields", () => {
    expect(adapter.createSummary("s")).toEqual({ type: "message", role: "user", content: [{ type: "input_text", text: expect.stringContaining("<summary>\ns\n</summary>") }] });
    expect(adapter.createNote("n")).toEqual({ type: "message", role: "user", content: [{ type: "input_text", text: `${RESPONSES_NOTE_PREFIX}n` }] });
  });

  it("replaces the output of any *_call_output item, keeping its call_id", () => {
    const output = { type: "function_call_output", call_id: "c", output: "x".repeat(1000) } as ResponsesItem;
    expect(adapter.replaceToolOutput(output, "[pruned]")).toEqual({ type: "function_call_output", call_id: "c", output: "[pruned]" });
    expect(() => adapter.replaceToolOutput({ role: "user", content: "x" }, "y")).toThrow(expect.objectContaining({ code: "COMPACTION_INPUT_INVALID" }));
  });
});

describe("createResponsesAdapter: mapText", () => {
  const withText = table.filter(([, item]) => adapter.readFacts(item).text !== "");
  it.each(withText)("rewrites only the text of %s", (_label, item) => {
    const before = adapter.readFacts(item);
    const copy = structuredClone(item);
    const mapped = adapter.mapText(item, (text) => text.toUpperCase());
    const after = adapter.readFacts(mapped);
    expect(after.text).toBe(before.text.toUpperCase());
    expect({ ...after, text: "" }).toEqual({ ...before, text: "" });
    expect(item).toEqual(copy);
  });
});

describe("createResponsesAdapter: compacting an agent's items", () => {
  function items(): ResponsesItem[] {
    const out: ResponsesItem[] = [{ role: "user", content: "Find the failing test and fix it." }];
    for (let step = 0; step < 15; step++) {
      // Three requests: the core never compacts the newest one, so the earlier turns are summarised.
      if (step === 5 || step === 10) out.push({ role: "user", content: `Now the next package (part ${step / 5 + 1}).` });
      out.push({ type: "reasoning", id: `rs_${step}`, summary: [{ type: "summary_text", text: `step ${step}: look at the next file` }] });
      out.push({ type: "function_call", call_id: `call_${step}`, name: "read_file", arguments: JSON.stringify({ path: `src/f${step}.ts` }) });
      out.push({ type: "function_call_output", call_id: `call_${step}`, output: `// file ${step}\n` + "export const value = compute(); // long line of code\n".repeat(40) });
    }
    out.push({ type: "message", role: "assistant", content: [{ type: "output_text", text: "Fixed." }] });
    return out;
  }

  it("compacts to a summary and a suffix in which every output has its call", async () => {
    const compactor = new Compactor<ResponsesItem>({ adapter, tokenCounter: createEstimateCounter(), summarizer: listingSummarizer, plugins: [keepRecent(2000)], contextWindow: 5000 });
    const result = await compactor.compact({ messages: items() });
    expect(result.status, result.reason ?? "").toBe("compacted");
    expect(adapter.readFacts(result.messages[0] as ResponsesItem).kind).toBe("summary");
    const issued = new Set<string>();
    for (const item of result.messages) {
      const facts = adapter.readFacts(item);
      for (const call of facts.toolCalls) issued.add(call.id);
      for (const id of facts.toolResultIds) expect(issued.has(id), `output ${id} without its call`).toBe(true);
    }
    expect(result.summary).toContain("Find the failing test");
    compactor.dispose();
  });
});

/** `value` with every string in it (not the keys) wrapped in angle brackets: what the tests' rewrite does to arguments. */
function bracketed(value: unknown): unknown {
  if (typeof value === "string") return `<${value}>`;
  if (Array.isArray(value)) return value.map(bracketed);
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, bracketed(item)]));
  return value;
}

describe("createResponsesAdapter: dropThinking", () => {
  it.each(table)("leaves no thinking in %s and keeps every other fact, the item unchanged", (_label, item) => {
    const copy = structuredClone(item);
    const before = adapter.readFacts(item);
    const dropped = adapter.dropThinking!(item);
    const after = adapter.readFacts(dropped);
    expect(after.thinking).toBe("");
    expect({ ...after, thinking: "" }).toEqual({ ...before, thinking: "" });
    expect(item).toEqual(copy);
    if (before.thinking === "") expect(dropped).toBe(item);
  });

  it("keeps a reasoning item with its id and encrypted content, its summary and content emptied", () => {
    const reasoning: ResponsesItem = {
      type: "reasoning",
      id: "rs_6820f383d7c08191846711c5df8233bc0ac5ba57aafcbac7",
      summary: [{ type: "summary_text", text: "**Checking the weather**" }],
      content: [{ type: "reasoning_text", text: "The user wants Paris." }],
      encrypted_content: "gAAAAABo...",
    };
    expect(adapter.dropThinking!(reasoning)).toEqual({ type: "reasoning", id: reasoning.id, summary: [], content: [], encrypted_content: "gAAAAABo..." });
    // The Agents SDK's reasoning item: its `content` is required, so it stays, empty.
    const sdk: ResponsesItem = { type: "reasoning", content: [{ type: "input_text", text: "plan" }], rawContent: [{ type: "reasoning_text", text: "raw plan" }], providerData: { id: "rs_1" } };
    expect(adapter.dropThinking!(sdk)).toEqual({ type: "reasoning", content: [], rawContent: [], providerData: { id: "rs_1" } });
    const empty: ResponsesItem = { type: "reasoning", id: "rs_2", summary: [], encrypted_content: "gAAAA" };
    expect(adapter.dropThinking!(empty)).toBe(empty);
  });
});

describe("createResponsesAdapter: mapToolArguments", () => {
  const rewrite = (text: string) => `<${text}>`;

  it.each(table)("rewrites only the argument strings of %s, the item unchanged", (_label, item) => {
    const copy = structuredClone(item);
    const before = adapter.readFacts(item);
    const mapped = adapter.mapToolArguments!(item, rewrite);
    const after = adapter.readFacts(mapped);
    expect(item).toEqual(copy);
    expect({ ...after, toolCalls: [] }).toEqual({ ...before, toolCalls: [] });
    expect(after.toolCalls.map((call) => [call.id, call.name])).toEqual(before.toolCalls.map((call) => [call.id, call.name]));
    after.toolCalls.forEach((call, k) => expect(call.arguments).toEqual(bracketed(before.toolCalls[k]?.arguments)));
    if (before.toolCalls.length === 0) expect(mapped).toBe(item);
  });

  it("keeps a function call's arguments a JSON string of the same shape, with every other field", () => {
    const call: ResponsesFunctionCallItem = {
      type: "function_call",
      id: "fc_12345xyz",
      call_id: "call_12345xyz",
      name: "write_file",
      arguments: JSON.stringify({ path: "src/a.ts", content: "export {}\n", mode: 420, flags: ["create"] }),
      status: "completed",
    };
    const mapped = adapter.mapToolArguments!(call, rewrite) as typeof call;
    expect(typeof mapped.arguments).toBe("string");
    expect(JSON.parse(mapped.arguments)).toEqual({ path: "<src/a.ts>", content: "<export {}\n>", mode: 420, flags: ["<create>"] });
    expect({ ...mapped, arguments: "" }).toEqual({ ...call, arguments: "" });
  });

  it("rewrites a custom tool's freeform input whole, and arguments that are not JSON whole", () => {
    const patch: ResponsesItem = { type: "custom_tool_call", call_id: "call_patch", name: "apply_patch", input: "*** Begin Patch\n*** End Patch" };
    expect(adapter.mapToolArguments!(patch, rewrite)).toEqual({ ...patch, input: "<*** Begin Patch\n*** End Patch>" });
    const bad: ResponsesItem = { type: "function_call", call_id: "call_bad", name: "f", arguments: "{not json" };
    expect(adapter.mapToolArguments!(bad, rewrite)).toEqual({ ...bad, arguments: "<{not json>" });
  });
});

describe("createResponsesAdapter: shrinking what does not fit", () => {
  const written = "export const value = compute(); // a line of the file being written\n".repeat(300);
  const thought = "I should look at how the module is imported before writing it.\n".repeat(50);
  const items: ResponsesItem[] = [
    { role: "user", content: "Write the two files." },
    { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: thought }], encrypted_content: "gAAAA1" },
    { type: "function_call", id: "fc_1", call_id: "call_1", name: "write_file", arguments: JSON.stringify({ path: "src/a.ts", content: written }), status: "completed" },
    { type: "function_call_output", call_id: "call_1", output: "ok" },
    { type: "reasoning", id: "rs_2", summary: [{ type: "summary_text", text: "Now the second one." }], encrypted_content: "gAAAA2" },
    { type: "function_call", id: "fc_2", call_id: "call_2", name: "write_file", arguments: JSON.stringify({ path: "src/b.ts", content: "export {}\n" }), status: "completed" },
    { type: "function_call_output", call_id: "call_2", output: "ok" },
  ];

  it("drops the old reasoning's thinking and cuts the large argument to head and tail, the arguments still JSON", () => {
    const tokens = new MessageTokenCounter(new FactsCache(adapter), createEstimateCounter());
    const before = items.reduce((sum, item) => sum + tokens.count(item), 0);
    const result = shrinkToBudget(items, tokens, { budget: 1500 });
    expect(before).toBeGreaterThan(5000);
    expect(result.fits).toBe(true);
    expect(result.shrunk.map((s) => [s.index, s.what])).toEqual(expect.arrayContaining([[1, "thinking"], [2, "tool-call arguments"]]));
    const reasoning = result.messages[1] as ResponsesItem;
    expect(adapter.readFacts(reasoning).thinking).toBe("");
    expect(reasoning).toMatchObject({ type: "reasoning", id: "rs_1", encrypted_content: "gAAAA1" });
    const call = result.messages[2] as { arguments: string };
    const args = JSON.parse(call.arguments) as { path: string; content: string };
    expect(args.path).toBe("src/a.ts");
    expect(args.content.length).toBeLessThan(written.length / 2);
    expect(args.content).toMatch(SHRINK_MARKER_PATTERN);
    expect(items[2]).toMatchObject({ arguments: JSON.stringify({ path: "src/a.ts", content: written }) });
  });
});
