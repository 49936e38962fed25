import { Compactor, createEstimateCounter, ErrorCodes, toolPairs } from "@compaction/core";
import { keepRecent } from "@compaction/core/testing";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import { type AssistantContent, type ModelMessage, modelMessageSchema } from "ai";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { COMPACTION_PROVIDER_KEY, createAiSdkAdapter } from "./ai-sdk-adapter.js";

const adapter = createAiSdkAdapter();
const NODE_MAJOR = Number(process.versions.node.split(".")[0]);

const system: ModelMessage = { role: "system", content: "You are a careful code auditor." };
const userParts: ModelMessage = {
  role: "user",
  content: [
    { type: "text", text: "What is in these?" },
    { type: "image", image: new URL("https://example.com/a.png") },
    { type: "file", data: new Uint8Array([1, 2, 3]), mediaType: "image/png" },
    { type: "file", data: "aGk=", mediaType: "application/pdf", filename: "spec.pdf" },
  ],
};
const assistantCalls: ModelMessage = {
  role: "assistant",
  content: [
    { type: "reasoning", text: "Read both files first." },
    { type: "text", text: "Reading." },
    { type: "tool-call", toolCallId: "c1", toolName: "read_file", input: { path: "a.ts" } },
    { type: "tool-call", toolCallId: "c2", toolName: "bash", input: { command: "rm -rf build" } },
    { type: "tool-approval-request", approvalId: "ap1", toolCallId: "c2" },
  ],
};
const approvals: ModelMessage = { role: "tool", content: [{ type: "tool-approval-response", approvalId: "ap1", approved: false, reason: "not now" }] };
const results: ModelMessage = {
  role: "tool",
  content: [
    { type: "tool-result", toolCallId: "c1", toolName: "read_file", output: { type: "text", value: "export const a = 1;" } },
    { type: "tool-result", toolCallId: "c2", toolName: "bash", output: { type: "execution-denied", reason: "not now" } },
  ],
};
const failed: ModelMessage = {
  role: "tool",
  content: [{ type: "tool-result", toolCallId: "c3", toolName: "bash", output: { type: "error-json", value: { exitCode: 2 } } }],
};
const providerExecuted: ModelMessage = {
  role: "assistant",
  content: [
    { type: "tool-call", toolCallId: "ws1", toolName: "web_search", input: { query: "fetchLegacy" }, providerExecuted: true },
    { type: "tool-result", toolCallId: "ws1", toolName: "web_search", output: { type: "json", value: [{ url: "https://example.com" }] } },
    { type: "text", text: "Found one page." },
  ],
};

describe("createAiSdkAdapter: reading ModelMessage", () => {
  it("reads a system message", () => {
    expect(adapter.readFacts(system)).toMatchObject({ kind: "system", text: "You are a careful code auditor." });
  });

  it("reads a user message's text, counts its images (image parts and image files) and names other files", () => {
    expect(adapter.readFacts(userParts)).toMatchObject({ kind: "user", text: "What is in these?\n[file spec.pdf (application/pdf)]", imageCount: 2 });
  });

  it("reads an assistant message's text, reasoning and tool calls with their ids, names and inputs", () => {
    expect(adapter.readFacts(assistantCalls)).toMatchObject({
      kind: "assistant",
      text: "Reading.",
      thinking: "Read both files first.",
      toolCalls: [
        { id: "c1", name: "read_file", arguments: { path: "a.ts" } },
        { id: "c2", name: "bash", arguments: { command: "rm -rf build" } },
      ],
      toolResultIds: [],
    });
  });

  it("reads a tool message's results by toolCallId, with their output as text (denials included)", () => {
    expect(adapter.readFacts(results)).toMatchObject({
      kind: "toolResult",
      text: "export const a = 1;\nExecution denied: not now",
      toolResultIds: ["c1", "c2"],
      toolName: "read_file",
      isError: false,
    });
  });

  it("marks error outputs as errors", () => {
    expect(adapter.readFacts(failed)).toMatchObject({ kind: "toolResult", text: '{"exitCode":2}', toolResultIds: ["c3"], isError: true });
  });

  it("reads a tool message of approval responses as a result with no ids (the core pairs it with the message that asked)", () => {
    expect(adapter.readFacts(approvals)).toMatchObject({ kind: "toolResult", text: "Denied: not now", toolResultIds: [] });
    const pairs = toolPairs([assistantCalls, approvals, results].map((message) => adapter.readFacts(message)));
    expect(pairs.callsOf).toEqual([[], [0], [0]]);
  });

  it("keeps a provider-executed tool's call and result in one assistant message as one unit", () => {
    const facts = adapter.readFacts(providerExecuted);
    expect(facts).toMatchObject({ kind: "assistant", toolCalls: [{ id: "ws1", name: "web_search" }], toolResultIds: [] });
    expect(facts.text).toContain("example.com");
  });

  it("takes the provider's usage from usageOf for assistant messages only", () => {
    const withUsage = createAiSdkAdapter({ usageOf: () => 1234 });
    expect(withUsage.readFacts(assistantCalls).usageContextTokens).toBe(1234);
    expect(withUsage.readFacts(results).usageContextTokens).toBeUndefined();
  });

  it("pins what isPinned says", () => {
    const pinning = createAiSdkAdapter({ isPinned: (message) => message === system });
    expect(pinning.readFacts(system).pinned).toBe(true);
    expect(pinning.readFacts(userParts).pinned).toBe(false);
  });

  it("reads an unknown role as kind other, and rejects a non-object with COMPACTION_MESSAGE_UNREADABLE", () => {
    expect(adapter.readFacts({ role: "narrator", content: "x" } as never).kind).toBe("other");
    expect(() => adapter.readFacts("hello" as never)).toThrowError(
      expect.objectContaining({ code: ErrorCodes.MESSAGE_UNREADABLE, message: expect.stringContaining('found string "hello"') }),
    );
  });
});

describe("createAiSdkAdapter: summaries, notes and pruning", () => {
  const summary = adapter.createSummary("## Goal\n- audit fetchLegacy()");
  const note = adapter.createNote("Older messages were removed.");

  it("writes a summary as a user message with one text part, marked in providerOptions, that reads back as the summary", () => {
    expect(summary).toMatchObject({ role: "user", providerOptions: { [COMPACTION_PROVIDER_KEY]: { kind: "summary" } } });
    expect(adapter.readFacts(summary)).toMatchObject({ kind: "summary", text: "## Goal\n- audit fetchLegacy()" });
    expect(adapter.readFacts(note)).toMatchObject({ kind: "other", text: "Older messages were removed." });
  });

  it("still reads a summary whose providerOptions a host dropped, by its words", () => {
    const { providerOptions: _dropped, ...bare } = summary as { providerOptions: unknown } & ModelMessage;
    expect(adapter.readFacts(bare as ModelMessage)).toMatchObject({ kind: "summary", text: "## Goal\n- audit fetchLegacy()" });
  });

  it("writes summaries and notes the AI SDK's own ModelMessage schema accepts unchanged (ai 6)", () => {
    expect(modelMessageSchema.safeParse(summary).success).toBe(true);
    expect(modelMessageSchema.safeParse(note).success).toBe(true);
  });

  it.skipIf(NODE_MAJOR < 22)("writes summaries and notes the AI SDK's own ModelMessage schema accepts unchanged (ai 7)", async () => {
    const ai7 = await import("ai7");
    expect(ai7.modelMessageSchema.safeParse(summary).success).toBe(true);
    expect(ai7.modelMessageSchema.safeParse(note).success).toBe(true);
  });

  it("replaces a tool message's outputs, keeping ids, tool names, error flags and approval responses", () => {
    const mixed: ModelMessage = { role: "tool", content: [...(failed.content as never[]), ...(approvals.content as never[]), ...(results.content as never[])] };
    const pruned = adapter.replaceToolOutput(mixed, "[pruned]");
    expect(pruned.content).toEqual([
      { type: "tool-result", toolCallId: "c3", toolName: "bash", output: { type: "error-text", value: "[pruned]" } },
      approvals.content[0],
      { type: "tool-result", toolCallId: "c1", toolName: "read_file", output: { type: "text", value: "[pruned]" } },
      { type: "tool-result", toolCallId: "c2", toolName: "bash", output: { type: "text", value: "[pruned]" } },
    ]);
    expect(adapter.readFacts(pruned)).toMatchObject({ toolResultIds: ["c3", "c1", "c2"], isError: true });
    expect(modelMessageSchema.safeParse(pruned).success).toBe(true);
  });

  it("refuses to replace the output of a message that is not a tool message", () => {
    expect(() => adapter.replaceToolOutput(assistantCalls, "x")).toThrowError(expect.objectContaining({ code: ErrorCodes.INPUT_INVALID }));
  });
});

describe("createAiSdkAdapter: mapText", () => {
  const jsonResult: ModelMessage = {
    role: "tool",
    content: [{ type: "tool-result", toolCallId: "c4", toolName: "list", output: { type: "json", value: { files: ["a.ts"] } } }],
  };
  const contentResult: ModelMessage = {
    role: "tool",
    content: [{ type: "tool-result", toolCallId: "c5", toolName: "shot", output: { type: "content", value: [{ type: "text", text: "a screenshot" }] } }],
  };
  const samples: ModelMessage[] = [
    system,
    { role: "user", content: "fix the build" },
    userParts,
    assistantCalls,
    approvals,
    results,
    failed,
    providerExecuted,
    jsonResult,
    contentResult,
    adapter.createSummary("## Goal\n- audit"),
  ];

  it.each(samples.map((message) => [message.role, message] as const))("rewrites only the readable text of a %s message, every other fact equal", (_role, message) => {
    const before = JSON.stringify(message);
    const mapped = adapter.mapText(message, (text) => text.toUpperCase());
    expect(JSON.stringify(message)).toBe(before);
    const { text: oldText, ...oldFacts } = adapter.readFacts(message);
    const { text: newText, ...newFacts } = adapter.readFacts(mapped);
    expect(newFacts).toEqual(oldFacts);
    // Only the pieces changed (labels the adapter writes for files, denials and approvals are not pieces).
    expect(newText.toUpperCase()).toBe(oldText.toUpperCase());
    // Every sample but the approval responses (labels only) has a piece with lower-case letters.
    if (message !== approvals) expect(newText).not.toBe(oldText);
    expect(modelMessageSchema.safeParse(mapped).success).toBe(true);
  });

  it("sees the pieces in order, and keeps a JSON output as it is when the rewrite leaves it", () => {
    const seen: string[] = [];
    adapter.mapText(results, (text) => {
      seen.push(text);
      return text;
    });
    expect(seen).toEqual(["export const a = 1;"]);
    expect(adapter.mapText(jsonResult, (text) => text)).toEqual(jsonResult);
  });
});

describe("createAiSdkAdapter: what the core's shrinking may shorten beyond text", () => {
  const written = "line of the file\n".repeat(200);
  const writing: ModelMessage = {
    role: "assistant",
    content: [
      { type: "reasoning", text: "the file needs a header" },
      { type: "text", text: "Writing it." },
      { type: "tool-call", toolCallId: "w1", toolName: "write", input: { path: "src/a.ts", content: written, mode: 420 } },
      { type: "tool-call", toolCallId: "w2", toolName: "write", input: JSON.stringify({ path: "src/b.ts", content: written }) },
    ],
  };

  it("rewrites every string inside a tool call's input, keys, numbers, ids and a JSON string's form kept", () => {
    const mapped = adapter.mapToolArguments!(writing, (text) => (text.length > 100 ? "[cut]" : text)) as { content: Array<Record<string, unknown>> };
    expect(mapped.content[2]).toEqual({ type: "tool-call", toolCallId: "w1", toolName: "write", input: { path: "src/a.ts", content: "[cut]", mode: 420 } });
    expect(JSON.parse(mapped.content[3]!["input"] as string)).toEqual({ path: "src/b.ts", content: "[cut]" });
    expect(mapped.content.slice(0, 2)).toEqual((writing as { content: unknown[] }).content.slice(0, 2));
    expect(modelMessageSchema.safeParse(mapped).success).toBe(true);
    expect(adapter.mapToolArguments!(results, () => "x")).toBe(results);
  });

  it("drops an assistant message's reasoning and nothing else; a message with none is returned as it is", () => {
    const dropped = adapter.dropThinking!(writing) as { content: Array<Record<string, unknown>> };
    expect(dropped.content.map((part) => part["type"])).toEqual(["text", "tool-call", "tool-call"]);
    const plain: ModelMessage = { role: "assistant", content: [{ type: "text", text: "Done." }] };
    expect(adapter.dropThinking!(plain)).toBe(plain);
    expect(adapter.dropThinking!(results)).toBe(results);
  });

  it("lets a compaction bring a newest turn whose tool call wrote a large file under a small budget", async () => {
    const history: ModelMessage[] = [
      { role: "user", content: "write both files" },
      writing,
      { role: "tool", content: [{ type: "tool-result", toolCallId: "w1", toolName: "write", output: { type: "text", value: "ok" } }, { type: "tool-result", toolCallId: "w2", toolName: "write", output: { type: "text", value: "ok" } }] },
    ];
    const compactor = new Compactor<ModelMessage>({ adapter, tokenCounter: createEstimateCounter(), summarizer: createExtractiveSummarizer() });
    const shaped = compactor.shapeRequest(history, { contextWindow: 1_000, budget: 600 });
    expect(shaped.tokens).toBeLessThanOrEqual(600);
    expect(JSON.stringify(shaped.messages)).toContain("src/a.ts");
  });
});

/**
 * A generated conversation: turns of a user request, then steps of tool calls (some asking for
 * approval) and results; it may end waiting on an approved call whose result is not there yet
 * (what a host holds right after the user answers an approval request).
 */
const conversation = fc
  .tuple(
    fc.array(
    fc.record({
      request: fc.lorem({ maxCount: 30 }),
      steps: fc.array(
        fc.record({
          calls: fc.integer({ min: 0, max: 3 }),
          approval: fc.boolean(),
          providerTool: fc.boolean(),
          splitResults: fc.boolean(),
          output: fc.lorem({ maxCount: 200 }),
        }),
        { maxLength: 5 },
      ),
    }),
    { minLength: 1, maxLength: 6 },
    ),
    fc.boolean(),
  )
  .map(([turns, pending]) => {
    const messages: ModelMessage[] = [];
    let id = 0;
    for (const turn of turns) {
      messages.push({ role: "user", content: turn.request });
      for (const step of turn.steps) {
        const ids = Array.from({ length: step.calls }, () => `call_${id++}`);
        const content: Exclude<AssistantContent, string> = [{ type: "text", text: "Working." }];
        for (const callId of ids) content.push({ type: "tool-call", toolCallId: callId, toolName: "read_file", input: { path: callId } });
        if (step.providerTool) {
          const ws = `ws_${id++}`;
          content.push({ type: "tool-call", toolCallId: ws, toolName: "web_search", input: {}, providerExecuted: true });
          content.push({ type: "tool-result", toolCallId: ws, toolName: "web_search", output: { type: "text", value: step.output } });
        }
        const asked = step.approval && ids.length > 0 ? `ap_${id++}` : undefined;
        if (asked !== undefined) content.push({ type: "tool-approval-request", approvalId: asked, toolCallId: ids[0] as string });
        messages.push({ role: "assistant", content } as ModelMessage);
        if (asked !== undefined) messages.push({ role: "tool", content: [{ type: "tool-approval-response", approvalId: asked, approved: true }] });
        const parts = ids.map((callId) => ({ type: "tool-result" as const, toolCallId: callId, toolName: "read_file", output: { type: "text" as const, value: step.output } }));
        if (step.splitResults) for (const part of parts) messages.push({ role: "tool", content: [part] });
        else if (parts.length > 0) messages.push({ role: "tool", content: parts });
      }
      messages.push({ role: "assistant", content: "Done." });
    }
    if (pending) {
      messages.push({ role: "user", content: "Clean the build folder." });
      messages.push({
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: "call_pending", toolName: "bash", input: { command: "rm -rf build" } },
          { type: "tool-approval-request", approvalId: "ap_pending", toolCallId: "call_pending" },
        ],
      });
      messages.push({ role: "tool", content: [{ type: "tool-approval-response", approvalId: "ap_pending", approved: true }] });
    }
    return messages;
  });

/** Tool results, and approval responses, whose call (or request) is not before them. */
function orphans(messages: readonly ModelMessage[]): string[] {
  const calls = new Set<string>();
  const requests = new Set<string>();
  const found: string[] = [];
  for (const message of messages) {
    if (typeof message.content === "string") continue;
    for (const part of message.content) {
      if (part.type === "tool-call") calls.add(part.toolCallId);
      if (part.type === "tool-approval-request") requests.add(part.approvalId);
      if (part.type === "tool-result" && !calls.has(part.toolCallId)) found.push(part.toolCallId);
      if (part.type === "tool-approval-response" && !requests.has(part.approvalId)) found.push(part.approvalId);
    }
  }
  return found;
}

describe("createAiSdkAdapter in a compaction", () => {
  it("never leaves a tool result without its call, nor an approval response without its request, wherever the cut falls", async () => {
    await fc.assert(
      fc.asyncProperty(conversation, fc.integer({ min: 0, max: 4000 }), async (messages, keep) => {
        const compactor = new Compactor({ summarizer: createExtractiveSummarizer(), adapter: createAiSdkAdapter(), tokenCounter: createEstimateCounter(), plugins: [keepRecent(keep)] });
        const result = await compactor.compact({ messages, contextWindow: 1_000_000 });
        expect(result.status === "failed" ? result.reason : "ok").toBe("ok");
        expect(orphans(result.messages)).toEqual([]);
        expect(result.messages.every((message) => modelMessageSchema.safeParse(message).success)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
