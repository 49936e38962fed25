import { describe, expect, it } from "vitest";
import type { MessageFacts, MessageKind, ToolCallInfo } from "@compaction/core";
import { extractFacts, type Extraction } from "./extract.js";

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

describe("extractFacts: done work comes from what happened, not from the narration", () => {
  it("never turns a narrating sentence into a done item, whatever its tool calls did", () => {
    const out = extract([
      user("Fix it"),
      assistant("Perfect! Now let me read the config file. More text.", [call("c1", "read", { path: "cfg.json" })]),
      result("c1", "{}"),
      assistant("Good, those are all relative imports - those can stay as-is.", [call("c2", "edit", { path: "a.ts" })]),
      result("c2", "ok"),
      assistant("You're absolutely right. That's much better. Revert first."),
    ]);
    expect(out.done).toEqual(["Edited `a.ts`"]);
  });

  it.each([
    ["edit", "Edited `src/a.ts`"],
    ["write", "Wrote `src/a.ts`"],
  ])("records a successful %s as done work naming the file", (tool, item) => {
    const out = extract([user("Fix it"), assistant("", [call("c1", tool, { path: "src/a.ts" })]), result("c1", "ok")]);
    expect(out.done).toEqual([item]);
  });

  it("does not record a failed edit as done work", () => {
    const out = extract([user("Fix it"), assistant("", [call("c1", "edit", { path: "src/a.ts" })]), result("c1", "no match", true)]);
    expect(out.done).toEqual([]);
  });

  it("records a commit by its message and a command that changed something, not commands that looked or checked", () => {
    const out = extract([
      user("Ship it"),
      assistant("", [
        call("c1", "bash", { command: "cd /repo && git add -A && git commit -m \"WP3: add event subscription\"" }),
        call("c2", "bash", { command: "mkdir -p src/modes" }),
        call("c3", "bash", { command: "cd /repo && grep -n foo src/a.ts" }),
        call("c4", "bash", { command: "npm run check 2>&1 | tail -5" }),
        call("c5", "bash", { command: "git status" }),
      ]),
      ...["c1", "c2", "c3", "c4", "c5"].map((id) => result(id, "ok")),
    ]);
    expect(out.done).toEqual(['Committed "WP3: add event subscription"', "Ran `mkdir -p src/modes`"]);
  });

  it("keeps a sentence saying something is finished, but not a plan or a question", () => {
    const out = extract([
      user("Go"),
      assistant("WP15 complete. All checks pass. Next we will make the tests pass. Is it complete?"),
      user("ok"),
    ]);
    expect(out.done).toEqual(["WP15 complete", "All checks pass"]);
  });

  it("puts a call with no result yet in progress, named by what it does", () => {
    const out = extract([user("Fix it"), assistant("Let me run the tests now.", [call("c1", "bash", { command: "mkdir out" }), call("c2", "edit", { path: "b.ts" })])]);
    expect(out.inProgress).toEqual(["Ran `mkdir out` (no result yet)", "Edited `b.ts` (no result yet)"]);
    expect(out.done).toEqual([]);
  });

  it("leaves a call that never got a result, before the newest calls, out of both done and in progress (it was aborted)", () => {
    const out = extract([
      user("Fix it"),
      assistant("", [call("c1", "edit", { path: "old.ts" })]),
      user("stop, do it differently"),
      assistant("", [call("c2", "edit", { path: "new.ts" })]),
      result("c2", "ok"),
    ]);
    expect(out.done).toEqual(["Edited `new.ts`"]);
    expect(out.inProgress).toEqual([]);
  });

  it("puts the intent of the last reply under next steps, not under done", () => {
    const out = extract([user("Fix it"), assistant("Fixed the parser."), assistant("Next I'll update the docs for the parser.")]);
    expect(out.nextSteps).toEqual(["Next I'll update the docs for the parser."]);
    // "Fixed ..." states a finished piece of work; the announced one is not done.
    expect(out.done).toEqual(["Fixed the parser"]);
  });

  it("ends next steps with the question the last reply asked the user", () => {
    const out = extract([user("Fix it"), assistant("Here is the layout.\n\nShould I proceed with these moves?")]);
    expect(out.nextSteps).toEqual(["Awaiting the user's answer: Should I proceed with these moves?"]);
  });
});

describe("extractFacts: current task and plan", () => {
  it("takes the newest answered requests after the opening one as the current task, skipping approvals", () => {
    const out = extract([
      user("Refactor the CLI"),
      assistant("Done with the first part."),
      user("Now move the helpers into utils/ and keep the old code working"),
      assistant("Moving."),
      user("Also rename TuiRenderer to InteractiveMode"),
      assistant("Renamed."),
      user("yes, go ahead"),
      assistant("Continuing."),
    ]);
    expect(out.firstRequests).toEqual(["Refactor the CLI"]);
    expect(out.currentTask).toEqual(["Now move the helpers into utils/ and keep the old code working", "Also rename TuiRenderer to InteractiveMode"]);
  });

  it("has no current task when the opening request is the only one", () => {
    expect(extract([user("Refactor the CLI"), assistant("On it.")]).currentTask).toEqual([]);
  });

  it("keeps the newest tree the assistant proposed verbatim, blank lines and comments included", () => {
    const tree = "```\nsrc/\n├── core/          # business logic\n│   └── tools/     # MOVE\n\n└── utils/         # MOVE\n```";
    const out = extract([
      user("Propose a layout"),
      assistant("First idea:\n```\nsrc/\n└── lib/\n```"),
      user("no, that's horrible"),
      assistant(`That's much better:\n\n${tree}\n\nShould I proceed?`),
    ]);
    expect(out.plan).toEqual([tree]);
  });

  it("keeps a numbered list of the newest reply as the plan, but not one of an older reply without a plan lead-in", () => {
    const older = extract([user("x"), assistant("The key changes:\n1. a\n2. b\n3. c"), assistant("Working on it.")]);
    expect(older.plan).toEqual([]);
    const newest = extract([user("x"), assistant("Working on it."), assistant("Here is what I will do:\n1. Move files\n2. Fix imports\n3. Run the check")]);
    expect(newest.plan).toEqual(["1. Move files\n2. Fix imports\n3. Run the check"]);
  });

  it("reads the open work of a plan file the assistant wrote, through its later edits", () => {
    const content = "# Plan\n\n### WP1: Parser\n- [ ] write parser\n- [ ] test parser\n\n### WP2: Docs\n- [ ] write docs\n";
    const out = extract([
      user("Write a plan and start"),
      assistant("", [call("c1", "write", { path: "docs/plan.md", content })]),
      result("c1", "ok"),
      assistant("", [call("c2", "edit", { path: "docs/plan.md", oldText: "- [ ] write parser", newText: "- [x] write parser" })]),
      result("c2", "ok"),
    ]);
    expect(out.plan).toEqual([
      "Plan file `docs/plan.md`: 1 of 3 items checked.\nNext: **WP1: Parser**\n- [ ] test parser\nLater: WP2: Docs (1 open)",
    ]);
  });
});

describe("extractFacts: errors are not constraints", () => {
  it("files a pasted API error under failures, not constraints or requests", () => {
    const out = extract([
      user("Fix the login."),
      assistant("Fixed."),
      user('Error: 400 {"type":"error","error":{"message":"prompt is too long: you must not send more than 200000 tokens"}}'),
      assistant("Looking."),
    ]);
    expect(out.constraints).toEqual([]);
    expect(out.currentTask).toEqual([]);
    expect(out.failed).toHaveLength(1);
    expect(out.failed[0]).toMatch(/^user reported: Error: 400/);
  });

  it("does not list a search that found nothing (grep exiting with 1) as an error", () => {
    const out = extract([
      user("x"),
      assistant("", [call("c1", "bash", { command: "grep -n foo src/a.ts" }), call("c2", "bash", { command: "npm test" })]),
      result("c1", "Command exited with code 1", true, "bash"),
      result("c2", "Command exited with code 1", true, "bash"),
    ]);
    expect(out.failed).toEqual(["bash(npm test): Command exited with code 1"]);
  });

  it("marks a failure that a later run of the same command got through", () => {
    const out = extract([
      user("x"),
      assistant("", [call("c1", "bash", { command: "npm test" })]),
      result("c1", "Error: 1 failed", true, "bash"),
      assistant("", [call("c2", "bash", { command: "npm test" })]),
      result("c2", "ok", false, "bash"),
    ]);
    expect(out.failed).toEqual(["bash(npm test): Error: 1 failed (later succeeded)"]);
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

  it("collects the names a delegated agent's report gives (a tool that neither reads, edits nor runs a command)", () => {
    const report = "Created the components: TodoItem (`/app/components/TodoItem.tsx`) and page.tsx. The hook useTodos exposes addTodo and toggleTodo.";
    const out = extract([user("Build the app"), assistant("", [call("t1", "Task", { description: "Build components", prompt: "Create the components" })]), result("t1", report)]);
    expect(out.identifiers).toEqual(expect.arrayContaining(["/app/components/TodoItem.tsx", "page.tsx", "useTodos", "addTodo", "toggleTodo", "TodoItem"]));
  });

  it("collects the identifiers in such a tool's arguments: the agent's own words to a sub-agent or a teammate", () => {
    const out = extract([
      user("Run the experiment"),
      assistant("", [call("t1", "TaskCreate", { subject: "Merge round 1", description: "Once alice/bob/carol return, merge `work/plan.md`" })]),
      result("t1", "Task #1 created"),
    ]);
    expect(out.identifiers).toEqual(expect.arrayContaining(["alice/bob/carol", "work/plan.md"]));
  });

  it("takes no names from a failed call's output, nor from what a file read or a command printed", () => {
    const out = extract([
      user("Go"),
      assistant("", [call("t1", "Task", { prompt: "x" }), call("r1", "read", { path: "a.ts" }), call("b1", "bash", { command: "ls" })]),
      result("t1", "Error: failedThing crashed", true),
      result("r1", "export function readName() {}"),
      result("b1", "listedFile.ts"),
    ]);
    expect(out.identifiers).not.toEqual(expect.arrayContaining(["failedThing"]));
    expect(out.identifiers.some((id) => id.includes("readName") || id.includes("listedFile"))).toBe(false);
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
