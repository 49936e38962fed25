import { CompactionError, ErrorCodes, createAnthropicAdapter, createPiAdapter } from "@compaction/core";
import { FORMATS, builders } from "@compaction/core/testing";
import { describe, expect, it } from "vitest";
import { extractLastTurn } from "./extract-last-turn.js";
import { formatLastTurnSection } from "./format-last-turn.js";

describe.each(FORMATS)("extractLastTurn on %s messages", (format) => {
  const b = builders(format);
  const extract = (messages: unknown[]) => extractLastTurn(messages, b.adapter);

  it("returns the last user text and the assistant text after it", () => {
    const turn = extract([b.user("old request"), b.assistant("old answer"), b.user("new request"), b.assistant("new answer")]);
    expect(turn).toEqual({ user: "new request", assistant: "new answer" });
  });

  it("joins the text of several assistant messages after the user message with blank lines", () => {
    const turn = extract([
      b.user("fix the build"),
      b.assistant("looking", [{ id: "c1" }]),
      ...b.toolResults([{ id: "c1", text: "error TS2304" }]),
      b.assistant("fixed the import"),
    ]);
    expect(turn?.assistant).toBe("looking\n\nfixed the import");
  });

  it("gives only the text blocks of a tool-call-heavy assistant message", () => {
    const turn = extract([
      b.user("read the files"),
      b.assistant("reading three files", [
        { id: "c1", name: "read", args: { path: "src/secret-one.ts" } },
        { id: "c2", name: "read", args: { path: "src/secret-two.ts" } },
        { id: "c3", name: "grep", args: { pattern: "needle" } },
      ]),
      ...b.toolResults([
        { id: "c1", text: "tool output one" },
        { id: "c2", text: "tool output two" },
        { id: "c3", text: "tool output three" },
      ]),
    ]);
    expect(turn).toEqual({ user: "read the files", assistant: "reading three files" });
  });

  it("leaves out assistant messages that only call tools", () => {
    const turn = extract([b.user("run it"), b.assistant("", [{ id: "c1" }]), ...b.toolResults([{ id: "c1", text: "ok" }])]);
    expect(turn).toEqual({ user: "run it", assistant: "" });
  });

  it("gives an empty assistant text when the user message has no reply yet", () => {
    expect(extract([b.assistant("earlier"), b.user("still waiting")])).toEqual({ user: "still waiting", assistant: "" });
  });

  it("gives nothing when there is no user message", () => {
    expect(extract([b.assistant("a reply to something summarised before"), b.assistant("another")])).toBeNull();
  });

  it("gives nothing for only tool results", () => {
    expect(extract(b.toolResults([{ id: "c1", text: "out one" }, { id: "c2", text: "out two" }]))).toBeNull();
  });

  it("gives nothing for empty input", () => {
    expect(extract([])).toBeNull();
  });

  it("shows an image in the user message as [image] after its text", () => {
    expect(extract([b.image("what is wrong here?"), b.assistant("the margin")])?.user).toBe("what is wrong here?\n[image]");
  });

  it("shows an image-only user message as [image]", () => {
    expect(extract([b.image(), b.assistant("a cat")])).toEqual({ user: "[image]", assistant: "a cat" });
  });

  it("does not take a summary message for a user turn", () => {
    const summary = b.adapter.createSummary("## Goal\nship it");
    expect(extract([summary, b.assistant("continuing")])).toBeNull();
  });

  it("does not take a note for a user turn", () => {
    const note = b.adapter.createNote("[evicted 12 messages]");
    expect(extract([b.user("real request"), b.assistant("answer"), note])).toEqual({ user: "real request", assistant: "answer" });
  });

  it("skips a user message without text or images", () => {
    expect(extract([b.user("the real ask"), b.assistant("on it"), b.user("")])).toEqual({ user: "the real ask", assistant: "on it" });
  });

  it("keeps the lines of a multi-line user message", () => {
    expect(extract([b.user("line one\n  indented two\n\nline four")])?.user).toBe("line one\n  indented two\n\nline four");
  });

  it("reads the same turn from facts as from messages and adapter", () => {
    const messages = [b.user("q"), b.assistant("a", [{ id: "c1" }]), ...b.toolResults([{ id: "c1", text: "r" }])];
    expect(extractLastTurn(messages.map((m) => b.adapter.readFacts(m)))).toEqual(extract(messages));
  });
});

describe("extractLastTurn, format details", () => {
  it("leaves out assistant thinking (pi)", () => {
    const messages = [
      { role: "user", content: "why?", timestamp: 1 },
      { role: "assistant", content: [{ type: "thinking", thinking: "secret reasoning" }, { type: "text", text: "because" }], timestamp: 2 },
    ];
    expect(extractLastTurn(messages as never[], createPiAdapter())).toEqual({ user: "why?", assistant: "because" });
  });

  it("leaves out assistant thinking (anthropic)", () => {
    const messages = [
      { role: "user", content: "why?" },
      { role: "assistant", content: [{ type: "thinking", thinking: "secret reasoning" }, { type: "text", text: "because" }] },
    ];
    expect(extractLastTurn(messages as never[], createAnthropicAdapter())).toEqual({ user: "why?", assistant: "because" });
  });

  it("does not take an Anthropic user message holding tool_result blocks for a user turn", () => {
    const messages = [
      { role: "user", content: "the real ask" },
      { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "bash", input: {} }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t1", content: "output" },
          { type: "text", text: "text beside the result" },
        ],
      },
    ];
    expect(extractLastTurn(messages as never[], createAnthropicAdapter())).toEqual({ user: "the real ask", assistant: "" });
  });

  it("takes a pi ! command as the user turn, as pi sends it", () => {
    const messages = [
      { role: "user", content: "earlier", timestamp: 1 },
      { role: "bashExecution", command: "ls", output: "a.ts", cancelled: false, timestamp: 2 },
    ];
    expect(extractLastTurn(messages as never[], createPiAdapter())?.user).toBe("Ran `ls`\n```\na.ts\n```");
  });

  it("throws COMPACTION_INPUT_INVALID naming the index when given messages without their adapter", () => {
    let thrown: unknown;
    try {
      extractLastTurn([{ role: "user", content: "hi" }] as never[]);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CompactionError);
    expect((thrown as CompactionError).code).toBe(ErrorCodes.INPUT_INVALID);
    expect((thrown as CompactionError).message).toContain("index 0");
    expect((thrown as CompactionError).hint).toContain("adapter");
  });

  it("turns empty input into an empty section", () => {
    expect(formatLastTurnSection(extractLastTurn([]), 2000)).toBe("");
  });
});
