/** The one rule for what of an entry is searchable (recall, SQLite FTS5, Postgres tsvector). */
import type { PiMessage } from "@compaction/core";
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../types.js";
import { argumentsText, entrySearchText, messageSearchText } from "./entry-search-text.js";

const entry = (fields: Record<string, unknown>) => ({ id: "e1", parentId: null, timestamp: "2026-01-02T03:04:05.000Z", ...fields }) as unknown as SessionEntry;

describe("argumentsText", () => {
  it("writes string values as they are, so their words stay words", () => {
    expect(argumentsText({ oldText: "\t\tthis.x = 1;\n", count: 2, flags: ["a"] })).toBe('oldText: \t\tthis.x = 1;\n\ncount: 2\nflags: ["a"]');
  });

  it("writes a value that is not an object as JSON, and nothing for none", () => {
    expect(argumentsText([1, "a"])).toBe('[1,"a"]');
    expect(argumentsText(undefined)).toBe("");
    expect(argumentsText("ls -la")).toBe("ls -la");
  });
});

describe("entrySearchText", () => {
  it("gives a message its text, its tool calls as name and arguments, and a tool result its tool's name", () => {
    const call = { role: "assistant", content: [{ type: "text", text: "reading" }, { type: "toolCall", id: "c1", name: "read", arguments: { path: "src/a.ts" } }], timestamp: 1 };
    expect(entrySearchText(entry({ type: "message", message: call }))).toBe("reading\nread path: src/a.ts");
    expect(messageSearchText(call as unknown as PiMessage)).toBe("reading\nread path: src/a.ts");
    const result = { role: "toolResult", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: "const a = 1;" }], isError: false, timestamp: 1 };
    expect(entrySearchText(entry({ type: "message", message: result }))).toBe("[read]\nconst a = 1;");
  });

  it("gives a compaction its summary, and a setting, a label or a blank message nothing", () => {
    expect(entrySearchText(entry({ type: "compaction", summary: "## Goal\nship it", firstKeptEntryId: "e0", tokensBefore: 1 }))).toBe("## Goal\nship it");
    expect(entrySearchText(entry({ type: "label", targetId: "e0", label: "x" }))).toBeUndefined();
    expect(entrySearchText(entry({ type: "custom", customType: "compaction.settings", data: { enabled: false } }))).toBeUndefined();
    expect(entrySearchText(entry({ type: "message", message: { role: "user", content: "   ", timestamp: 1 } }))).toBeUndefined();
  });
});
