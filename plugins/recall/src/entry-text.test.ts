import type { SessionEntry } from "@compaction/transcript";
import { describe, expect, it } from "vitest";
import { entryText, entryTimestamp } from "./entry-text.js";

const base = { id: "e1", parentId: null, timestamp: "2026-01-02T03:04:05.000Z" };
const entry = (fields: Record<string, unknown>) => ({ ...base, ...fields }) as unknown as SessionEntry;

describe("entryText", () => {
  it.each([
    ["a user message", { type: "message", message: { role: "user", content: "hello there", timestamp: 1 } }, { role: "user", text: "hello there" }],
    [
      "an assistant message with a tool call",
      { type: "message", message: { role: "assistant", content: [{ type: "text", text: "reading" }, { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.ts" } }], timestamp: 1 } },
      { role: "assistant", text: "reading\nread path: a.ts" },
    ],
    [
      "a tool result",
      { type: "message", message: { role: "toolResult", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: "const a = 1;" }], isError: false, timestamp: 1 } },
      { role: "toolResult", text: "[read]\nconst a = 1;" },
    ],
    [
      "a bash execution",
      { type: "message", message: { role: "bashExecution", command: "ls", output: "a.ts", cancelled: false, timestamp: 1 } },
      { role: "bashExecution", text: "Ran `ls`\n```\na.ts\n```" },
    ],
    ["a compaction", { type: "compaction", summary: "## Goal\nship it", firstKeptEntryId: "e0", tokensBefore: 1 }, { role: "compaction", text: "## Goal\nship it" }],
    ["a branch summary", { type: "branch_summary", summary: "tried x", fromId: "e0" }, { role: "branch_summary", text: "tried x" }],
    ["a custom message", { type: "custom_message", customType: "n", content: "remember y", display: true }, { role: "custom_message", text: "remember y" }],
  ])("reads %s", (_name, fields, expected) => {
    expect(entryText(entry(fields))).toEqual(expected);
  });

  it.each([
    ["a model change", { type: "model_change", provider: "p", modelId: "m" }],
    ["a label", { type: "label", targetId: "e0", label: "x" }],
    ["an aborted assistant message with no content", { type: "message", message: { role: "assistant", content: [], stopReason: "aborted", timestamp: 1 } }],
    ["a user message whose content is not text", { type: "message", message: { role: "user", content: 42 } }],
  ])("leaves out %s", (_name, fields) => {
    expect(entryText(entry(fields))).toBeUndefined();
  });
});

describe("entryTimestamp", () => {
  it("uses the entry's timestamp, else its message's milliseconds", () => {
    expect(entryTimestamp(entry({ type: "label" }))).toBe("2026-01-02T03:04:05.000Z");
    expect(entryTimestamp({ ...entry({ type: "message", message: { role: "user", content: "x", timestamp: 0 } }), timestamp: "" } as SessionEntry)).toBe("1970-01-01T00:00:00.000Z");
  });
});
