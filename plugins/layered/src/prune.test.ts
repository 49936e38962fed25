import { createEstimateCounter, FactsCache, MessageTokenCounter, type MessageView } from "@compaction/core";
import { builders, FORMATS, type Format } from "@compaction/core/testing";
import { describe, expect, it } from "vitest";
import { isPrunedMarker } from "./marker.js";
import { pruneToolOutputs, toolOutputTokens } from "./prune.js";
import { text } from "./test-support/conversation.js";

function setup(format: Format) {
  const b = builders(format);
  const facts = new FactsCache<any>(b.adapter);
  const tokens = new MessageTokenCounter<any>(facts, createEstimateCounter());
  const prune = (messages: readonly unknown[], protectTokens = 0) =>
    pruneToolOutputs<any>(messages, {
      adapter: b.adapter,
      factsOf: (m) => facts.of(m),
      tokensOf: (m) => tokens.count(m),
      protectTokens,
    });
  const view = (messages: readonly unknown[]): MessageView => ({
    facts: messages.map((m) => facts.of(m)),
    tokens: messages.map((m) => tokens.count(m)),
  });
  return { b, facts, tokens, prune, view };
}

describe.each(FORMATS)("pruneToolOutputs (%s)", (format) => {
  const { b, facts, tokens, prune, view } = setup(format);

  /** user, a bash call, its result of `outputTokens`, then a newer user message of `newerTokens`. */
  function oneCall(outputTokens: number, newerTokens: number, isError = false) {
    return [
      b.user("run the tests"),
      b.assistant("running", [{ id: "t1", name: "bash", args: { command: "npm test" } }]),
      ...b.toolResults([{ id: "t1", text: text(outputTokens), isError }]),
      b.user(text(newerTokens)),
    ];
  }

  it("replaces an old output with a marker naming the tool, its arguments, the failure and the size", () => {
    const messages = oneCall(12345, 10, true);
    const result = prune(messages);
    expect(result.prunedIndices).toEqual([2]);
    expect(facts.of(result.messages[2]).text).toBe(
      `[pruned tool output: bash(command="npm test") — failed, ${tokens.count(messages[2]).toLocaleString("en-US")} tokens]`,
    );
  });

  it("leaves `failed` out of the marker of a tool that succeeded", () => {
    const result = prune(oneCall(500, 10, false));
    expect(facts.of(result.messages[2]).text).toMatch(/^\[pruned tool output: bash\(command="npm test"\) — \d+ tokens\]$/);
  });

  it("keeps the pruned message a tool result answering the same call with the same error flag", () => {
    const messages = oneCall(500, 10, true);
    const pruned = facts.of(prune(messages).messages[2]);
    expect(pruned.kind).toBe("toolResult");
    expect(pruned.toolResultIds).toEqual(["t1"]);
    expect(pruned.isError).toBe(true);
  });

  it("prunes an output whose newer messages hold exactly protectTokens tokens", () => {
    expect(prune(oneCall(1000, 40000), 40000).prunedIndices).toEqual([2]);
  });

  it("protects an output whose newer messages hold one token less than protectTokens", () => {
    expect(prune(oneCall(1000, 39999), 40000).prunedIndices).toEqual([]);
  });

  it("never prunes a pinned tool result", () => {
    const messages = oneCall(500, 10);
    messages[2] = b.pin(messages[2]);
    expect(prune(messages).prunedIndices).toEqual([]);
  });

  it("never prunes the result of a pinned tool call", () => {
    const messages = oneCall(500, 10);
    messages[1] = b.pin(messages[1]);
    expect(prune(messages).prunedIndices).toEqual([]);
  });

  it("does not prune an output that was pruned before", () => {
    const once = prune(oneCall(500, 10));
    const twice = prune(once.messages);
    expect(twice.prunedIndices).toEqual([]);
    expect(twice.messages).toBe(once.messages);
  });

  it("leaves an output that is smaller than its marker", () => {
    expect(prune(oneCall(2, 10)).prunedIndices).toEqual([]);
  });

  it("counts the tokens saved as the drop in counted tokens", () => {
    const messages = [...oneCall(800, 10), ...oneCall(300, 10)];
    const result = prune(messages);
    expect(result.prunedIndices).toHaveLength(2);
    expect(result.tokensSaved).toBe(tokens.total(messages) - tokens.total(result.messages));
  });

  it("does not change the input array or its messages, and reuses the messages it keeps", () => {
    const messages = oneCall(500, 10);
    const before = structuredClone(messages);
    const result = prune(messages);
    expect(messages).toEqual(before);
    expect(result.messages).not.toBe(messages);
    expect(result.messages[0]).toBe(messages[0]);
    expect(result.messages[3]).toBe(messages[3]);
  });

  it("returns the input array itself when nothing is pruned", () => {
    const messages = oneCall(500, 10);
    expect(prune(messages, 1e9).messages).toBe(messages);
  });

  it("never prunes user or assistant messages, however large and old", () => {
    const messages = [b.user(text(5000)), b.assistant(text(5000)), b.user("now")];
    expect(prune(messages).prunedIndices).toEqual([]);
  });

  it("names the tool from the result, or says `unknown tool`, when the issuing call is not in the messages", () => {
    const messages = [...b.toolResults([{ id: "gone", text: text(500), name: "grep" }]), b.user("next")];
    const marker = facts.of(prune(messages).messages[0]).text;
    expect(marker).toMatch(/^\[pruned tool output: (grep|unknown tool) — \d+ tokens\]$/);
    if (format === "pi") expect(marker).toContain("grep");
  });

  it("takes the arguments from the nearest earlier call when a call id is reused across turns", () => {
    const turn = (command: string) => [
      b.user("again"),
      b.assistant("", [{ id: "call_0", name: "bash", args: { command } }]),
      ...b.toolResults([{ id: "call_0", text: text(500) }]),
    ];
    const messages = [...turn("first"), ...turn("second"), b.user("done")];
    const result = prune(messages);
    expect(result.prunedIndices).toEqual([2, 5]);
    expect(facts.of(result.messages[2]).text).toContain('bash(command="first")');
    expect(facts.of(result.messages[5]).text).toContain('bash(command="second")');
  });

  it("sums tool-output tokens over tool results only", () => {
    const messages = [...oneCall(700, 100), ...oneCall(300, 100)];
    expect(toolOutputTokens(view(messages))).toBe(tokens.count(messages[2]) + tokens.count(messages[6]));
  });
});

describe("pruneToolOutputs on Anthropic messages", () => {
  const { b, facts, prune } = setup("anthropic");

  it("lists both calls when one message answers two, and keeps the user text beside the results", () => {
    const results = b.toolResults([
      { id: "r1", text: text(400) },
      { id: "r2", text: text(400), isError: true },
    ])[0];
    const withText = { ...results, content: [...results.content, { type: "text", text: "and please hurry" }] };
    const messages = [
      b.user("look"),
      b.assistant("", [
        { id: "r1", name: "read", args: { path: "a.ts" } },
        { id: "r2", name: "bash", args: { command: "make" } },
      ]),
      withText,
      b.user("next"),
    ];
    const pruned = prune(messages).messages[2] as any;
    const f = facts.of(pruned);
    expect(f.toolResultIds).toEqual(["r1", "r2"]);
    expect(f.text).toContain('read(path="a.ts"), bash(command="make") — failed,');
    expect(pruned.content.at(-1)).toEqual({ type: "text", text: "and please hurry" });
    expect(isPrunedMarker(f.text)).toBe(true);
    expect(prune([...messages.slice(0, 2), pruned, messages[3]]).prunedIndices).toEqual([]);
  });
});
