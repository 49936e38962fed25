import { describe, expect, it } from "vitest";
import { CompactionError, ErrorCodes } from "../errors.js";
import type { MessageKind } from "./adapter.js";
import { createPiAdapter, PI_NOTE_CUSTOM_TYPE, type PiMessage, type PiToolResultMessage } from "./pi-adapter.js";

const adapter = createPiAdapter();
const T = 1_760_000_000_000;
const usage = { input: 10, output: 20, cacheRead: 300, cacheWrite: 4000 };

const userText: PiMessage = { role: "user", content: "hello there", timestamp: T };
const userBlocks: PiMessage = {
  role: "user",
  content: [
    { type: "text", text: "look at" },
    { type: "image", data: "aGk=", mimeType: "image/png" },
    { type: "text", text: "this picture" },
  ],
  timestamp: T,
};
const assistantWithCalls: PiMessage = {
  role: "assistant",
  content: [
    { type: "thinking", thinking: "I should read it" },
    { type: "text", text: "Reading the file." },
    { type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.ts" } },
    { type: "toolCall", id: "call_2", name: "bash", arguments: { command: "ls" } },
  ],
  usage: { ...usage, totalTokens: 5000 },
  stopReason: "toolUse",
  timestamp: T,
};
const toolResultOk: PiMessage = {
  role: "toolResult",
  toolCallId: "call_1",
  toolName: "read",
  content: [
    { type: "text", text: "file body" },
    { type: "image", data: "aGk=", mimeType: "image/png" },
  ],
  isError: false,
  timestamp: T,
};
const toolResultFailed: PiMessage = {
  role: "toolResult",
  toolCallId: "call_2",
  toolName: "bash",
  content: [{ type: "text", text: "command not found" }],
  isError: true,
  timestamp: T,
};
const bash: PiMessage = {
  role: "bashExecution",
  command: "git status",
  output: "clean",
  exitCode: 2,
  cancelled: false,
  timestamp: T,
};
const bashExcluded: PiMessage = { ...bash, excludeFromContext: true };
const custom: PiMessage = { role: "custom", customType: "ext", content: "from an extension", display: true, timestamp: T };
const branchSummary: PiMessage = { role: "branchSummary", summary: "branch work", fromId: "abc", timestamp: T };
const compactionSummary: PiMessage = {
  role: "compactionSummary",
  summary: "earlier work",
  tokensBefore: 1000,
  timestamp: T,
};

describe("pi adapter: kinds and text", () => {
  const cases: Array<[string, PiMessage, MessageKind, string]> = [
    ["user with string content", userText, "user", "hello there"],
    ["user with text and image blocks", userBlocks, "user", "look at\nthis picture"],
    ["assistant (text only, no thinking or arguments)", assistantWithCalls, "assistant", "Reading the file."],
    ["toolResult", toolResultOk, "toolResult", "file body"],
    ["bashExecution as user-initiated input", bash, "user", "Ran `git status`\n```\nclean\n```\n\nCommand exited with code 2"],
    ["bashExecution excluded from context (!!), which never reaches the model", bashExcluded, "other", ""],
    ["custom", custom, "other", "from an extension"],
    ["branchSummary", branchSummary, "summary", "branch work"],
    ["compactionSummary", compactionSummary, "summary", "earlier work"],
    ["unknown role", { role: "hookMessage", content: "x", timestamp: T } as unknown as PiMessage, "other", ""],
    ["missing role", { content: "x" } as unknown as PiMessage, "other", ""],
  ];
  it.each(cases)("%s reads as kind and text", (_name, message, kind, text) => {
    const facts = adapter.readFacts(message);
    expect(facts.kind).toBe(kind);
    expect(facts.text).toBe(text);
  });
});

describe("pi adapter: tool links, thinking, images, timestamps", () => {
  it("lists the tool calls an assistant message issues, with names and arguments", () => {
    expect(adapter.readFacts(assistantWithCalls).toolCalls).toEqual([
      { id: "call_1", name: "read", arguments: { path: "a.ts" } },
      { id: "call_2", name: "bash", arguments: { command: "ls" } },
    ]);
  });

  it("reads thinking separately from text", () => {
    expect(adapter.readFacts(assistantWithCalls).thinking).toBe("I should read it");
  });

  it("gives a tool result the id it answers and its tool name", () => {
    const facts = adapter.readFacts(toolResultOk);
    expect(facts.toolResultIds).toEqual(["call_1"]);
    expect(facts.toolName).toBe("read");
  });

  it.each([
    ["successful", toolResultOk, false],
    ["failed", toolResultFailed, true],
  ] as const)("reads isError of a %s tool result", (_name, message, isError) => {
    expect(adapter.readFacts(message).isError).toBe(isError);
  });

  it.each([
    ["user blocks", userBlocks, 1],
    ["tool result", toolResultOk, 1],
    ["string user content", userText, 0],
  ] as const)("counts images in %s", (_name, message, count) => {
    expect(adapter.readFacts(message).imageCount).toBe(count);
  });

  it("reads the message timestamp", () => {
    expect(adapter.readFacts(userText).timestamp).toBe(T);
  });

  it("ignores tool calls without an id and non-object blocks", () => {
    const message = {
      role: "assistant",
      content: [null, "text", { type: "toolCall", name: "bash", arguments: {} }, { type: "text", text: "ok" }],
      timestamp: T,
    } as unknown as PiMessage;
    const facts = adapter.readFacts(message);
    expect(facts.toolCalls).toEqual([]);
    expect(facts.text).toBe("ok");
  });
});

describe("pi adapter: usage", () => {
  const withUsage = (extra: Record<string, unknown>) =>
    ({ role: "assistant", content: [], timestamp: T, ...extra }) as unknown as PiMessage;
  const cases: Array<[string, PiMessage, number | undefined]> = [
    ["totalTokens when present", withUsage({ usage: { ...usage, totalTokens: 5000 }, stopReason: "stop" }), 5000],
    ["sum of the parts when totalTokens is missing", withUsage({ usage, stopReason: "stop" }), 4330],
    ["sum of the parts when totalTokens is 0", withUsage({ usage: { ...usage, totalTokens: 0 }, stopReason: "toolUse" }), 4330],
    ["nothing for an aborted response", withUsage({ usage, stopReason: "aborted" }), undefined],
    ["nothing for an error response", withUsage({ usage, stopReason: "error" }), undefined],
    ["nothing for all-zero usage", withUsage({ usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }), undefined],
    ["nothing without usage", withUsage({ stopReason: "stop" }), undefined],
    ["nothing on a user message carrying usage", { ...userText, usage } as unknown as PiMessage, undefined],
  ];
  it.each(cases)("usageContextTokens is %s", (_name, message, expected) => {
    expect(adapter.readFacts(message).usageContextTokens).toBe(expected);
  });
});

describe("pi adapter: pinned", () => {
  it.each([
    ["pinned: true on the message", { ...userText, pinned: true }, true],
    ["pinned: true in details", { ...toolResultOk, details: { pinned: true } }, true],
    ["pinned: false", { ...userText, pinned: false }, false],
    ["no pin flag", userText, false],
  ] as const)("default rule: %s", (_name, message, pinned) => {
    expect(adapter.readFacts(message as PiMessage).pinned).toBe(pinned);
  });

  it("uses a custom isPinned instead of the default rule", () => {
    const custom = createPiAdapter({ isPinned: (m) => m.role === "user" });
    expect(custom.readFacts(userText).pinned).toBe(true);
    expect(custom.readFacts({ ...toolResultOk, pinned: true } as PiMessage).pinned).toBe(false);
  });
});

describe("pi adapter: created messages", () => {
  it("createSummary builds a compactionSummary that reads back as the summary text", () => {
    const summary = adapter.createSummary("what happened", { tokensBefore: 1234, timestamp: T });
    expect(summary).toEqual({ role: "compactionSummary", summary: "what happened", tokensBefore: 1234, timestamp: T });
    const facts = adapter.readFacts(summary);
    expect(facts.kind).toBe("summary");
    expect(facts.text).toBe("what happened");
  });

  it("createSummary stamps the current time when no timestamp is given", () => {
    const before = Date.now();
    const summary = adapter.createSummary("s") as { timestamp: number };
    expect(summary.timestamp).toBeGreaterThanOrEqual(before);
  });

  it("createNote builds a displayed custom message that reads back as kind other with its text", () => {
    const note = adapter.createNote("12 messages were evicted", { timestamp: T });
    expect(note).toEqual({
      role: "custom",
      customType: PI_NOTE_CUSTOM_TYPE,
      content: "12 messages were evicted",
      display: true,
      timestamp: T,
    });
    const facts = adapter.readFacts(note);
    expect(facts.kind).toBe("other");
    expect(facts.text).toBe("12 messages were evicted");
  });

  it("replaceToolOutput keeps id, tool name and error flag and replaces the content", () => {
    const replaced = adapter.replaceToolOutput(toolResultFailed, "[output pruned]") as PiToolResultMessage;
    expect(replaced.content).toEqual([{ type: "text", text: "[output pruned]" }]);
    const facts = adapter.readFacts(replaced);
    expect(facts.toolResultIds).toEqual(["call_2"]);
    expect(facts.toolName).toBe("bash");
    expect(facts.isError).toBe(true);
    expect(facts.text).toBe("[output pruned]");
  });

  it("replaceToolOutput leaves the original message unchanged", () => {
    const original = structuredClone(toolResultOk);
    adapter.replaceToolOutput(toolResultOk, "x");
    expect(toolResultOk).toEqual(original);
  });

  it("replaceToolOutput refuses a message that is not a tool result", () => {
    expect(() => adapter.replaceToolOutput(userText, "x")).toThrow(
      expect.objectContaining({ code: ErrorCodes.INPUT_INVALID }),
    );
  });
});

describe("pi adapter: robustness", () => {
  it("does not mutate the message it reads", () => {
    const copy = structuredClone(assistantWithCalls);
    adapter.readFacts(assistantWithCalls);
    expect(assistantWithCalls).toEqual(copy);
  });

  it.each([
    ["null", null, "null"],
    ["a string", "hello", 'a string ("hello")'],
    ["a number", 42, "a number (42)"],
    ["an array", [], "an array (length 0)"],
  ])("throws MESSAGE_UNREADABLE naming what it found for %s", (_name, value, found) => {
    let caught: unknown;
    try {
      adapter.readFacts(value as unknown as PiMessage);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CompactionError);
    expect((caught as CompactionError).code).toBe(ErrorCodes.MESSAGE_UNREADABLE);
    expect((caught as CompactionError).message).toContain(`found ${found}`);
  });

  it("reads malformed content of a known role as empty text without throwing", () => {
    const facts = adapter.readFacts({ role: "toolResult", content: 7, toolCallId: 3 } as unknown as PiMessage);
    expect(facts).toMatchObject({ kind: "toolResult", text: "", toolResultIds: [] });
  });
});
