import { describe, expect, it } from "vitest";
import type { MessageFacts, MessageKind, ToolCallInfo } from "../messages/adapter.js";
import { type Extraction, extractFacts } from "./extract.js";

function facts(partial: Partial<MessageFacts> & { kind: MessageKind }): MessageFacts {
  return { text: "", thinking: "", toolCalls: [], toolResultIds: [], isError: false, imageCount: 0, pinned: false, ...partial };
}
const user = (text: string) => facts({ kind: "user", text });
const assistant = (text: string, toolCalls: ToolCallInfo[] = []) => facts({ kind: "assistant", text, toolCalls });
const call = (id: string, name: string, args: unknown): ToolCallInfo => ({ id, name, arguments: args });
const result = (id: string, text: string, isError = false, toolName?: string) =>
  facts({ kind: "toolResult", text, toolResultIds: [id], isError, ...(toolName === undefined ? {} : { toolName }) });

const extract = (messages: MessageFacts[]): Extraction => extractFacts(messages, { maxItemChars: 300 });

describe("extractFacts: goal", () => {
  it("takes the user messages before the first reply as the opening request, skipping bare slash commands", () => {
    const out = extract([user("/model"), user("Port the selector to the theme API"), assistant("On it."), user("thanks")]);
    expect(out.firstRequests).toEqual(["Port the selector to the theme API"]);
  });

  it("lists user messages after the last assistant reply as pending asks", () => {
    const out = extract([user("Fix the build"), assistant("Fixed the build."), user("Now add a test"), user("And update docs")]);
    expect(out.pendingAsks).toEqual(["Now add a test", "And update docs"]);
  });

  it("does not list an answered ask as pending", () => {
    const out = extract([user("Fix the build"), assistant("Fixed it."), user("Add a test"), assistant("Added the test.")]);
    expect(out.pendingAsks).toEqual([]);
  });

  it("does not count a reply made of tool calls only as an answer", () => {
    const out = extract([user("Fix the build"), assistant("Looking."), user("Add a test"), assistant("", [call("c1", "read", { path: "a.ts" })])]);
    expect(out.pendingAsks).toEqual(["Add a test"]);
  });
});

describe("extractFacts: constraints", () => {
  const cases: [string, string, boolean][] = [
    ["must", "The API must stay backwards compatible.", true],
    ["never", "Never commit generated files.", true],
    ["don't", "Don't touch the lockfile please.", true],
    ["always", "Always run the linter before you finish.", true],
    ["prefer", "I prefer small focused commits here.", true],
    ["avoid", "Avoid adding new dependencies to core.", true],
    ["without", "Do it without changing the public types.", true],
    ["should not", "The cache should not grow without bound.", true],
    ["make sure", "Make sure the tests pass on Node 20.", true],
    ["no cue", "The parser lives in the src folder.", false],
    ["question", "Must we really keep the old API?", false],
    ["I don't think", "I don't think the cache works at all.", false],
  ];
  it.each(cases)("cue %s -> kept verbatim: %s", (_cue, sentence, kept) => {
    const out = extract([user(`Some context first. ${sentence}`), assistant("Ok, working on it.")]);
    expect(out.constraints.includes(sentence)).toBe(kept);
  });

  it("ignores constraint words inside fenced code", () => {
    const out = extract([user("Look at this:\n```\nyou must never do this in code\n```"), assistant("Looking now.")]);
    expect(out.constraints).toEqual([]);
  });

  it("does not take constraints from assistant text", () => {
    const out = extract([user("Go ahead."), assistant("We must never skip the tests here.")]);
    expect(out.constraints).toEqual([]);
  });
});

describe("extractFacts: progress", () => {
  it("turns the first sentence of a reply whose tool calls succeeded into a done item without its lead-in", () => {
    const out = extract([
      user("Fix it"),
      assistant("Perfect! Now let me read the config file. More text.", [call("c1", "read", { path: "cfg.json" })]),
      result("c1", "{}"),
      assistant("All good."),
    ]);
    expect(out.done).toContain("Read the config file");
  });

  it("records a successful edit as done work naming the file", () => {
    const out = extract([user("Fix it"), assistant("", [call("c1", "edit", { path: "src/a.ts" })]), result("c1", "ok")]);
    expect(out.done).toEqual(["edited src/a.ts"]);
  });

  it("does not record a failed edit as done work", () => {
    const out = extract([user("Fix it"), assistant("", [call("c1", "edit", { path: "src/a.ts" })]), result("c1", "no match", true)]);
    expect(out.done).toEqual([]);
  });

  it("puts an intent in the last reply, with no tool call yet, in progress", () => {
    const out = extract([user("Fix it"), assistant("Fixed the parser."), assistant("Next I'll update the docs for the parser.")]);
    expect(out.inProgress).toEqual(["Update the docs for the parser"]);
    expect(out.done).toEqual(["Fixed the parser"]);
  });

  it("puts a reply whose tool calls have no results yet in progress", () => {
    const out = extract([user("Fix it"), assistant("Let me run the tests now.", [call("c1", "bash", { command: "npm test" })])]);
    expect(out.inProgress).toEqual(["Run the tests now"]);
  });

  it("keeps a failed last step in progress but calls an earlier failure that was followed up done", () => {
    const failedLast = extract([user("x"), assistant("Let me build it now.", [call("c1", "bash", { command: "make" })]), result("c1", "boom", true)]);
    expect(failedLast.inProgress).toEqual(["Build it now"]);
    const followedUp = extract([
      user("x"),
      assistant("Let me build it now.", [call("c1", "bash", { command: "make" })]),
      result("c1", "boom", true),
      assistant("The build failed on a typo, fixed."),
    ]);
    expect(followedUp.inProgress).toEqual([]);
  });

  it("skips filler and too-short first sentences", () => {
    const out = extract([user("x"), assistant("Great! So. Updated the three selectors."), user("y")]);
    expect(out.done).toEqual(["Updated the three selectors"]);
  });
});

describe("extractFacts: key decisions", () => {
  const cases: [string, boolean][] = [
    ["We decided to keep the old format for now.", true],
    ["We'll use tiktoken for exact counts here.", true],
    ["Use a WeakMap instead of a Map for the cache.", true],
    ["This fails because the id is missing in v1 files.", true],
    ["I chose the simpler cut rule for this case.", true],
    ["Going with the estimate counter by default here.", true],
    ["The file has two hundred lines in total.", false],
  ];
  it.each(cases)("%s -> decision: %s", (sentence, kept) => {
    const out = extract([user("Do it."), assistant(`Looked at it. ${sentence}`)]);
    expect(out.decisions.includes(sentence)).toBe(kept);
  });

  it("takes decisions from user text too", () => {
    const out = extract([user("Let's go with the rolling strategy for this agent."), assistant("Sure thing.")]);
    expect(out.decisions).toEqual(["Let's go with the rolling strategy for this agent."]);
  });
});

describe("extractFacts: files", () => {
  const cases: [string, unknown, "read" | "modified"][] = [
    ["read", { path: "a.ts" }, "read"],
    ["Read", { file_path: "a.ts" }, "read"],
    ["view", { filePath: "a.ts" }, "read"],
    ["cat", { file: "a.ts" }, "read"],
    ["write", { path: "a.ts" }, "modified"],
    ["Write", { file_path: "a.ts" }, "modified"],
    ["edit", { path: "a.ts" }, "modified"],
    ["MultiEdit", { file_path: "a.ts" }, "modified"],
    ["NotebookEdit", { notebook_path: "a.ts" }, "modified"],
    ["str_replace_based_edit_tool", { command: "view", path: "a.ts" }, "read"],
    ["str_replace_based_edit_tool", { command: "str_replace", path: "a.ts" }, "modified"],
    ["apply_patch", { input: "*** Begin Patch\n*** Update File: a.ts\n@@\n*** End Patch" }, "modified"],
  ];
  it.each(cases)("%s %j -> %s", (name, args, expected) => {
    const out = extract([user("x"), assistant("", [call("c1", name, args)]), result("c1", "ok")]);
    const list = expected === "read" ? out.filesRead : out.filesModified;
    expect(list).toEqual(["a.ts"]);
  });

  it("reads arguments given as a JSON string (OpenAI format)", () => {
    const out = extract([user("x"), assistant("", [call("c1", "edit", JSON.stringify({ path: "b.ts" }))]), result("c1", "ok")]);
    expect(out.filesModified).toEqual(["b.ts"]);
  });

  it("ignores a path argument of a tool that neither reads nor modifies", () => {
    const out = extract([user("x"), assistant("", [call("c1", "Grep", { pattern: "foo", path: "src" })]), result("c1", "ok")]);
    expect([...out.filesRead, ...out.filesModified]).toEqual([]);
  });
});

describe("extractFacts: commands and failures", () => {
  it("lists commands once, at their newest place", () => {
    const out = extract([
      user("x"),
      assistant("", [call("c1", "bash", { command: "npm test" }), call("c2", "bash", { command: "npm run build" })]),
      result("c1", "ok"),
      result("c2", "ok"),
      assistant("", [call("c3", "bash", { command: "npm test" })]),
      result("c3", "ok"),
    ]);
    expect(out.commands).toEqual(["npm run build", "npm test"]);
  });

  it("reads argv-style commands (Codex shell)", () => {
    const out = extract([user("x"), assistant("", [call("c1", "shell", { command: ["bash", "-lc", "ls -la"] })]), result("c1", "")]);
    expect(out.commands).toEqual(["ls -la"]);
  });

  it("describes a failed call by tool, arguments and the line that names the error", () => {
    const out = extract([
      user("x"),
      assistant("", [call("c1", "bash", { command: "npm run check" })]),
      result("c1", "\n> pkg@1.0 check\n> tsc\n\nsrc/a.ts(1,1): error TS2304: Cannot find name 'x'.\n", true, "bash"),
    ]);
    expect(out.failed).toEqual(["bash(npm run check): src/a.ts(1,1): error TS2304: Cannot find name 'x'."]);
  });

  it("falls back to the first line of the output when no line names an error", () => {
    const out = extract([user("x"), assistant("", [call("c1", "read", { path: "z.ts" })]), result("c1", "\nnope\nmore", true)]);
    expect(out.failed).toEqual(["read(z.ts): nope"]);
  });

  it("reports an error result whose call is not among the messages", () => {
    const out = extract([result("c9", "Command exited with code 2", true, "bash"), user("x")]);
    expect(out.failed).toEqual(["bash: Command exited with code 2"]);
  });
});

describe("extractFacts: identifiers and next steps", () => {
  it("collects identifiers from user and assistant text and from commands, exactly as written", () => {
    const out = extract([
      user("See https://github.com/o/r/issues/12 and #123 on port 8080; set OPENAI_API_KEY."),
      assistant("Commit 3f2a9c1 changed `createPiAdapter()` in packages/core/src/pi.ts.", [
        call("c1", "bash", { command: "curl localhost:3000/health" }),
      ]),
      result("c1", "ok"),
    ]);
    expect(out.identifiers).toEqual(
      expect.arrayContaining([
        "https://github.com/o/r/issues/12",
        "#123",
        "port 8080",
        "OPENAI_API_KEY",
        "3f2a9c1",
        "createPiAdapter()",
        "packages/core/src/pi.ts",
        "localhost:3000",
      ]),
    );
  });

  it("takes next steps from the last reply: cue sentences and numbered items", () => {
    const out = extract([
      user("x"),
      assistant("Next I will write the docs. This is unrelated."),
      assistant("The parser is fixed. Then we can ship it.\n\n1. Update the changelog\n2. Tag the release"),
    ]);
    expect(out.nextSteps).toEqual(["Then we can ship it.", "Update the changelog", "Tag the release"]);
  });

  it("keeps summary messages apart instead of reading them as conversation", () => {
    const out = extract([facts({ kind: "summary", text: "## Goal\n- We must never do X" }), user("Go on.")]);
    expect(out.summaries).toEqual(["## Goal\n- We must never do X"]);
    expect(out.constraints).toEqual([]);
  });
});
