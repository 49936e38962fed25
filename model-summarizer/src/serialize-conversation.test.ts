import { describe, expect, it } from "vitest";
import { fact } from "@compaction/core/testing";
import { clipMiddle, serializeConversation, serializeMessage } from "./serialize-conversation.js";

describe("serializeConversation", () => {
  it("writes each message as a labelled transcript entry, separated by blank lines", () => {
    const text = serializeConversation([
      fact("system", { text: "You are helpful." }),
      fact("user", { text: "Fix the test" }),
      fact("assistant", { text: "Reading it", toolCalls: [{ id: "c1", name: "read", arguments: { path: "src/a.ts" } }] }),
      fact("toolResult", { text: "export const a = 1;", toolResultIds: ["c1"], toolName: "read" }),
    ]);
    expect(text).toBe(
      [
        "[System]: You are helpful.",
        "[User]: Fix the test",
        '[Assistant]: Reading it\n[Tool call] read({"path":"src/a.ts"})',
        "[Tool result] read: export const a = 1;",
      ].join("\n\n"),
    );
  });

  it("marks failed tool results and tool results with no output", () => {
    expect(serializeMessage(fact("toolResult", { text: "boom", toolName: "bash", isError: true }))).toBe("[Tool result] bash (error): boom");
    expect(serializeMessage(fact("toolResult", { text: "" }))).toBe("[Tool result]: (no output)");
  });

  it("includes the assistant's reasoning, images, earlier summaries and other messages", () => {
    expect(serializeMessage(fact("assistant", { thinking: "hmm", text: "ok" }))).toBe("[Assistant thinking]: hmm\n[Assistant]: ok");
    expect(serializeMessage(fact("user", { text: "look", imageCount: 2 }))).toBe("[User]: look [2 images]");
    expect(serializeMessage(fact("summary", { text: "## Goal\n- x" }))).toBe("[Earlier summary]: ## Goal\n- x");
    expect(serializeMessage(fact("other", { text: "note" }))).toBe("[Other]: note");
  });

  it("leaves out messages with nothing to show", () => {
    expect(serializeMessage(fact("user", { text: "  " }))).toBeUndefined();
    expect(serializeConversation([fact("assistant"), fact("user", { text: "hi" })])).toBe("[User]: hi");
  });

  it("clips the middle of long tool outputs and tool-call arguments", () => {
    const output = `START ${"x".repeat(5000)} END`;
    const entry = serializeMessage(fact("toolResult", { text: output, toolName: "bash" }), { maxToolResultChars: 300 }) ?? "";
    expect(entry.startsWith("[Tool result] bash: START ")).toBe(true);
    expect(entry.endsWith(" END")).toBe(true);
    expect(entry).toMatch(/\[… \d+ characters clipped …\]/);
    expect(entry.length).toBeLessThan(400);
    const call = serializeMessage(
      fact("assistant", { toolCalls: [{ id: "c", name: "write", arguments: { content: "y".repeat(4000) } }] }),
      { maxToolArgumentChars: 100 },
    );
    expect(call?.length).toBeLessThan(200);
  });
});

describe("clipMiddle", () => {
  it("keeps text that fits as it is", () => {
    expect(clipMiddle("short", 10)).toBe("short");
  });

  it("keeps the start and the end and says how many characters went", () => {
    const clipped = clipMiddle("a".repeat(60) + "b".repeat(40), 30);
    expect(clipped).toBe(`${"a".repeat(20)}\n[… 70 characters clipped …]\n${"b".repeat(10)}`);
  });

  it("never splits a surrogate pair", () => {
    const clipped = clipMiddle("😀".repeat(50), 31);
    expect(clipped).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(clipped).not.toMatch(/(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });
});
