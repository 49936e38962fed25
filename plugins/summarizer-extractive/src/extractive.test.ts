import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CompactionError,
  createEstimateCounter,
  createTiktokenCounter,
  ErrorCodes,
  type MessageFacts,
  type MessageKind,
  parseSections,
  readSummary,
  type SummarizeRequest,
  type ToolCallInfo,
} from "@compaction/core";
import { createExtractiveSummarizer } from "./extractive.js";

function facts(partial: Partial<MessageFacts> & { kind: MessageKind }): MessageFacts {
  return { text: "", thinking: "", toolCalls: [], toolResultIds: [], isError: false, imageCount: 0, pinned: false, ...partial };
}
const user = (text: string) => facts({ kind: "user", text });
const assistant = (text: string, toolCalls: ToolCallInfo[] = []) => facts({ kind: "assistant", text, toolCalls });
const call = (id: string, name: string, args: unknown): ToolCallInfo => ({ id, name, arguments: args });
const result = (id: string, text: string, isError = false) => facts({ kind: "toolResult", text, toolResultIds: [id], isError });

const counter = createEstimateCounter();
const summarizer = createExtractiveSummarizer();

const summarize = (messages: MessageFacts[], extra: Partial<SummarizeRequest> = {}): Promise<string> =>
  summarizer.summarize({ messages, maxTokens: 4000, counter, kind: "history", ...extra });

const headingsOf = (summary: string): string[] => parseSections(summary).sections.map((s) => s.heading);

/** Every item of every list, to look for duplicates. */
const allItems = (summary: string): string[] => Object.values(readSummary(summary).slots).flat();

/** Every heading of the layout, in order; a summary writes those that have items. */
const HISTORY_HEADINGS = [
  "## Goal",
  "## Current Task",
  "## Plan",
  "## Constraints & Preferences",
  "## Progress",
  "### Done",
  "### In Progress",
  "## Key Decisions",
  "## Files",
  "### Read",
  "### Modified",
  "## Commands & Tool Calls",
  "### Failed",
  "## Identifiers",
  "## Next Steps",
];

/** True when a heading is followed by an item or a subheading, never by the next `## ` heading or the end. */
const noEmptySection = (summary: string): boolean => {
  const { sections } = parseSections(summary);
  return sections.every((section, i) => section.lines.length > 0 || (section.level === 2 && sections[i + 1]?.level === 3));
};

/** A short session: a request, a read, an edit, a failed test run, a fix, a next step. */
const session: MessageFacts[] = [
  user("Fix the off-by-one in src/parse.ts. Never change the public API."),
  assistant("I'll read the parser first.", [call("r1", "read", { path: "src/parse.ts" })]),
  result("r1", "export function parse() {}"),
  assistant("Found it: the loop stops one early, so we'll use an inclusive bound instead of length - 1.", [
    call("e1", "edit", { path: "src/parse.ts", oldText: "<", newText: "<=" }),
  ]),
  result("e1", "ok"),
  assistant("Let me run the tests.", [call("b1", "bash", { command: "npm test" })]),
  result("b1", "\nFAIL src/parse.test.ts\nError: expected 3 to be 4", true),
  assistant("The test expectation was stale; updating it.", [call("e2", "edit", { path: "src/parse.test.ts" })]),
  result("e2", "ok"),
  assistant("All tests pass now. Next I will update CHANGELOG.md with the fix."),
];

describe("createExtractiveSummarizer", () => {
  it("is named extractive", () => {
    expect(summarizer.name).toBe("extractive");
  });

  it("writes only the sections that have items, in the fixed order", async () => {
    const summary = await summarize(session);
    expect(headingsOf(summary)).toEqual([
      "## Goal",
      "## Constraints & Preferences",
      "## Progress",
      "### Done",
      "## Key Decisions",
      "## Commands & Tool Calls",
      "### Failed",
      "## Next Steps",
    ]);
    expect(noEmptySection(summary)).toBe(true);
  });


  it("writes a one-line note, not bare headings, for messages with nothing to keep, and does not carry the note on", async () => {
    const summary = await summarize([assistant(""), result("x1", "ok")]);
    expect(summary).toBe("## Earlier Messages\n- 2 messages with no request, file change, command, decision or error to keep");
    const next = await summarize([user("Add a --json flag to the CLI")], { previousSummary: summary });
    expect(next).not.toContain("Earlier Messages");
    expect(readSummary(next).extras).toEqual([]);
  });

  it("returns an empty summary for no messages and no previous summary, so callers notice", async () => {
    expect(await summarize([])).toBe("");
  });

  it("fills every section from a short session", async () => {
    const state = readSummary(await summarize(session));
    expect(state.slots.goal).toEqual(["Fix the off-by-one in src/parse.ts. Never change the public API."]);
    expect(state.slots.constraints).toEqual(["Never change the public API."]);
    // Done is what the tool calls did and what the assistant said is finished, never its narration.
    expect(state.slots.done).toEqual(["Edited `src/parse.ts`", "Edited `src/parse.test.ts`", "All tests pass now"]);
    expect(state.slots.decisions).toEqual([
      "Found it: the loop stops one early, so we'll use an inclusive bound instead of length - 1.",
    ]);
    expect(state.slots.filesRead).toEqual([]);
    expect(state.slots.filesModified).toEqual(["src/parse.ts", "src/parse.test.ts"]);
    expect(state.slots.commands).toEqual(["npm test"]);
    expect(state.slots.failed).toEqual(["bash(npm test): Error: expected 3 to be 4"]);
    // CHANGELOG.md is named by the next step, so Identifiers does not repeat it.
    expect(state.slots.identifiers).toEqual([]);
    expect(state.slots.nextSteps).toEqual(["Next I will update CHANGELOG.md with the fix."]);
  });

  it("gives byte-identical output for the same request", async () => {
    const copy = session.map((message) => ({ ...message }));
    const [a, b] = await Promise.all([summarize(session, { focus: "tests" }), summarize(copy, { focus: "tests" })]);
    expect(a).toBe(b);
  });

  it("puts the focus on top and the items matching it first in their section", async () => {
    const summary = await summarize(
      [
        user("Do things."),
        assistant("", [call("1", "read", { path: "docs/a.md" }), call("2", "read", { path: "src/tokens.ts" }), call("3", "read", { path: "docs/b.md" })]),
        result("1", "x"),
        result("2", "x"),
        result("3", "x"),
      ],
      { focus: "the tokens module" },
    );
    expect(summary.startsWith("## Focus\nthe tokens module\n")).toBe(true);
    expect(readSummary(summary).slots.filesRead).toEqual(["src/tokens.ts", "docs/a.md", "docs/b.md"]);
  });

  it("writes a turn prefix as Original Request, Early Progress and Context for Suffix", async () => {
    const summary = await summarize(session.slice(0, 7), { kind: "turnPrefix" });
    expect(headingsOf(summary)).toEqual(["## Original Request", "## Early Progress", "## Context for Suffix"]);
    const sections = parseSections(summary).sections;
    expect(sections[0]?.lines).toEqual(["Fix the off-by-one in src/parse.ts. Never change the public API."]);
    expect(sections[1]?.lines).toContain("- Edited `src/parse.ts`");
    expect(sections[2]?.lines).toEqual(
      expect.arrayContaining(["- Modified: src/parse.ts", "- Failed: bash(npm test): Error: expected 3 to be 4", "- Never change the public API."]),
    );
  });

  it("lists a turn prefix's identifiers that no other section names, under Identifiers", async () => {
    const summary = await summarize(
      [
        user("Build the todo app"),
        assistant("", [call("t1", "Task", { description: "Build components" })]),
        result("t1", "Created `/app/components/TodoItem.tsx` and the hook useTodos."),
      ],
      { kind: "turnPrefix" },
    );
    expect(headingsOf(summary)).toEqual(["## Original Request", "## Early Progress", "## Context for Suffix", "## Identifiers"]);
    const identifiers = parseSections(summary).sections[3]?.lines ?? [];
    expect(identifiers).toEqual(expect.arrayContaining(["- `/app/components/TodoItem.tsx`", "- `useTodos`"]));
    // The request's words are its own section's: not repeated.
    expect(identifiers.some((line) => line.includes("todo app"))).toBe(false);
  });

  it("rejects with CANCELLED when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort(new Error("user pressed escape"));
    const outcome = summarize(session, { signal: controller.signal });
    await expect(outcome).rejects.toBeInstanceOf(CompactionError);
    await expect(outcome).rejects.toMatchObject({ code: ErrorCodes.CANCELLED });
  });

  it("rejects a negative maxTokens with INPUT_INVALID naming the field", async () => {
    await expect(summarize(session, { maxTokens: -1 })).rejects.toMatchObject({ code: ErrorCodes.INPUT_INVALID, path: "/maxTokens" });
  });

  it("refuses options that are not positive integers, naming the option", () => {
    expect(() => createExtractiveSummarizer({ maxItemsPerSection: 0 })).toThrowError(/maxItemsPerSection/);
    expect(() => createExtractiveSummarizer({ maxItemChars: 2.5 })).toThrowError(
      expect.objectContaining({ code: ErrorCodes.INPUT_INVALID, path: "/maxItemChars" }),
    );
  });

  it("keeps at most maxItemsPerSection items per section, the newest", async () => {
    const small = createExtractiveSummarizer({ maxItemsPerSection: 2 });
    const messages = [user("go"), ...["a", "b", "c", "d"].map((x, i) => assistant("", [call(`c${i}`, "bash", { command: `npm test -- ${x}` })]))];
    const summary = await small.summarize({ messages, maxTokens: 4000, counter, kind: "history" });
    expect(readSummary(summary).slots.commands).toEqual(["npm test -- c", "npm test -- d"]);
  });
});

describe("createExtractiveSummarizer: merging a previous summary", () => {
  const previousSummary = [
    "## Goal",
    "- Port the selectors to the theme API",
    "## Constraints & Preferences",
    "- Never use chalk directly.",
    "## Progress",
    "### Done",
    "- [x] Read theme.md",
    "### In Progress",
    "- [ ] Update src/tui/user-message-selector.ts to use theme colors",
    "- [ ] Write the migration guide",
    "## Key Decisions",
    "- Use Text components instead of raw strings",
    "## Files",
    "### Read",
    "- `docs/theme.md`",
    "- `src/tui/user-message-selector.ts`",
    "### Modified",
    "- `src/theme.ts`",
    "## Commands & Tool Calls",
    "- `npm run check`",
    "## Identifiers",
    "- `#42`",
    "## Next Steps",
    "1. Update the selector",
    "",
    "## Critical Context",
    "- The **dark** theme is the default",
  ].join("\n");

  const newMessages: MessageFacts[] = [
    user("Continue."),
    assistant("Updating the selector now.", [call("e1", "edit", { path: "src/tui/user-message-selector.ts" })]),
    result("e1", "ok"),
    assistant("Done with the selector. Next I will run the checks."),
  ];

  it("keeps every previous item and adds the new ones", async () => {
    const state = readSummary(await summarize(newMessages, { previousSummary }));
    expect(state.slots.goal).toEqual(["Port the selectors to the theme API"]);
    expect(state.slots.constraints).toEqual(["Never use chalk directly."]);
    expect(state.slots.decisions).toEqual(["Use Text components instead of raw strings"]);
    expect(state.slots.commands).toEqual(["npm run check"]);
    expect(state.slots.identifiers).toEqual(["#42"]);
    expect(state.slots.done).toEqual(expect.arrayContaining(["Read theme.md", "Edited `src/tui/user-message-selector.ts`"]));
  });

  it("moves an in-progress item to done when the new messages finish it", async () => {
    const state = readSummary(await summarize(newMessages, { previousSummary }));
    expect(state.slots.done).toContain("Update src/tui/user-message-selector.ts to use theme colors");
    expect(state.slots.inProgress).toEqual(["Write the migration guide"]);
  });

  it("unions files and lists a file read before and modified now as modified only", async () => {
    const state = readSummary(await summarize(newMessages, { previousSummary }));
    expect(state.slots.filesRead).toEqual(["docs/theme.md"]);
    expect([...state.slots.filesModified].sort()).toEqual(["src/theme.ts", "src/tui/user-message-selector.ts"]);
  });

  it("replaces next steps with those of the newest reply", async () => {
    const state = readSummary(await summarize(newMessages, { previousSummary }));
    expect(state.slots.nextSteps).toEqual(["Next I will run the checks."]);
  });

  it("keeps an unknown section of the previous summary verbatim under its heading", async () => {
    const summary = await summarize(newMessages, { previousSummary });
    expect(summary).toContain("## Critical Context\n- The **dark** theme is the default");
  });

  it("does not read the previous summary's text as conversation", async () => {
    const summary = await summarize([], { previousSummary: "## Notes\nWe must never deploy on Fridays because of X." });
    const state = readSummary(summary);
    expect(state.slots.constraints).toEqual([]);
    expect(state.slots.decisions).toEqual([]);
    expect(state.extras).toEqual([{ heading: "## Notes", lines: ["We must never deploy on Fridays because of X."] }]);
  });

  it("merges a summary message found among the messages like a previous summary", async () => {
    const summary = await summarize([facts({ kind: "summary", text: previousSummary }), ...newMessages]);
    expect(readSummary(summary).slots.goal).toEqual(["Port the selectors to the theme API"]);
  });

  it("adds nothing twice when the same messages are merged twice", async () => {
    const once = await summarize(newMessages, { previousSummary });
    const twice = await summarize(newMessages, { previousSummary: once });
    const items = allItems(twice);
    expect(items.length).toBe(new Set(items).size);
    expect(twice).toBe(once);
  });

  it("keeps a pending ask until a reply answers it", async () => {
    const pending = await summarize([user("Start."), assistant("Started."), user("Also add a --json flag")]);
    expect(readSummary(pending).slots.goal).toEqual(["Start.", "Pending: Also add a --json flag"]);
    expect(readSummary(pending).slots.nextSteps).toEqual(["Respond to: Also add a --json flag"]);
    const answered = await summarize([assistant("Added the --json flag.")], { previousSummary: pending });
    expect(readSummary(answered).slots.goal).toEqual(["Start."]);
  });

  it("stays under the cap and within the section limits after 10 successive merges", async () => {
    const capped = createExtractiveSummarizer({ maxItemsPerSection: 5, maxFilesPerList: 5, maxIdentifiers: 5 });
    let summary: string | undefined;
    const sizes: number[] = [];
    for (let round = 0; round < 10; round++) {
      const messages = [
        user(`Round ${round}: make sure module${round} never breaks.`),
        assistant(`Working on module${round} because it changed.`, [
          call(`r${round}`, "read", { path: `src/module${round}.ts` }),
          call(`e${round}`, "edit", { path: `src/module${round - 1}.ts` }),
          call(`b${round}`, "bash", { command: `npm test -- module${round}` }),
        ]),
        result(`r${round}`, "ok"),
        result(`e${round}`, "ok"),
        result(`b${round}`, "boom", true),
      ];
      summary = await capped.summarize({ messages, previousSummary: summary, maxTokens: 400, counter, kind: "history" });
      sizes.push(counter.count(summary));
    }
    if (process.env["SHOW_SUMMARY"]) console.log(summary);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(400);
    const state = readSummary(summary ?? "");
    expect(state.slots.goal[0]).toBe("Round 0: make sure module0 never breaks.");
    // Every section shows at most 5 items (Done's file items also list their files as modified on reading back).
    for (const section of parseSections(summary ?? "").sections) expect(section.lines.length).toBeLessThanOrEqual(5);
    expect(allItems(summary ?? "").length).toBe(new Set(allItems(summary ?? "")).size);
  });

  it("leaves the Identifiers section out with maxIdentifiers 0, and keeps the newest when capped", async () => {
    const messages = [user("Use `fooBar()` with $API_KEY."), assistant("Set `bazQux()` and PORT_NUMBER.")];
    const none = await createExtractiveSummarizer({ maxIdentifiers: 0 }).summarize({ messages, maxTokens: 4000, counter, kind: "history" });
    expect(headingsOf(none)).not.toContain("## Identifiers");
    const two = await createExtractiveSummarizer({ maxIdentifiers: 2 }).summarize({ messages, maxTokens: 4000, counter, kind: "history" });
    expect(readSummary(two).slots.identifiers).toEqual(["bazQux()", "PORT_NUMBER"]);
  });
});

describe("createExtractiveSummarizer: token cap", () => {
  const word = fc.constantFrom(
    "fix", "must", "never", "src/a.ts", "the", "because", "next", "will", "#12", "`fnName()`",
    "https://x.dev/p", "\n", "- ", "1. ", "## ", "### Done", "Done.", "?", "é", "😀", "…", "`", "[x]", "instead of",
  );
  const text = fc.oneof(fc.string({ maxLength: 120 }), fc.array(word, { maxLength: 60 }).map((words) => words.join(" ")));
  const id = fc.constantFrom("c1", "c2", "c3", "c4");
  const toolCall = fc.record({
    id,
    name: fc.constantFrom("read", "edit", "bash", "write", "Grep", "apply_patch"),
    arguments: fc.oneof(fc.record({ path: text }), fc.record({ command: text }), fc.constant({}), text),
  });
  const message = fc.oneof(
    text.map((t) => user(t)),
    fc.tuple(text, fc.array(toolCall, { maxLength: 3 })).map(([t, calls]) => assistant(t, calls)),
    fc.tuple(id, text, fc.boolean()).map(([callId, t, isError]) => result(callId, t, isError)),
    text.map((t) => facts({ kind: "summary", text: t })),
  );

  it("never writes an empty heading, for any messages and previous summary", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(message, { maxLength: 30 }), fc.option(fc.oneof(text, fc.constantFrom("## Goal\n- g\n## Progress\n### Done\n", "## Files\n### Read\n- `a.ts`", "## Next Steps\n")), { nil: undefined }), async (messages, previousSummary) => {
        const summary = await summarize(messages, previousSummary === undefined ? {} : { previousSummary });
        expect(noEmptySection(summary)).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it("never exceeds maxTokens, for any messages, previous summary, focus and cap >= 20", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(message, { maxLength: 40 }),
        fc.integer({ min: 20, max: 3000 }),
        fc.option(text, { nil: undefined }),
        fc.option(text, { nil: undefined }),
        fc.constantFrom("history" as const, "turnPrefix" as const),
        async (messages, maxTokens, previousSummary, focus, kind) => {
          const summary = await summarizer.summarize({ messages, maxTokens, counter, kind, previousSummary, focus });
          expect(counter.count(summary)).toBeLessThanOrEqual(maxTokens);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("never exceeds maxTokens as tiktoken (o200k_base) counts it", async () => {
    const tiktoken = createTiktokenCounter();
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(message, { maxLength: 40 }), fc.integer({ min: 20, max: 2000 }), async (messages, maxTokens) => {
          const summary = await summarizer.summarize({ messages, maxTokens, counter: tiktoken, kind: "history", focus: "fix" });
          expect(tiktoken.count(summary)).toBeLessThanOrEqual(maxTokens);
        }),
        { numRuns: 150 },
      );
    } finally {
      tiktoken.dispose();
    }
  });

  it("keeps every section that has items when the cap allows the headings but not all the items", async () => {
    const many = Array.from({ length: 60 }, (_, i) => [
      assistant(`Step ${i} because reasons.`, [call(`c${i}`, "edit", { path: `src/file${i}.ts` })]),
      result(`c${i}`, "ok"),
    ]).flat();
    const summary = await summarize([user("Do it all."), ...many], { maxTokens: 120 });
    expect(counter.count(summary)).toBeLessThanOrEqual(120);
    expect(headingsOf(summary)).toEqual(["## Goal", "## Progress", "### Done", "## Key Decisions", "## Files", "### Modified"]);
    expect(readSummary(summary).slots.goal).toEqual(["Do it all."]);
  });
});
