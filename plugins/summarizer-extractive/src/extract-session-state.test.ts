/** extractSessionState on hand-built conversations, the same conversation in every message format. */
import { describe, expect, it } from "vitest";
import {
  createEstimateCounter,
  ErrorCodes,
  FactsCache,
  messageTokenText,
  SESSION_STATE_FORMAT,
  SESSION_STATE_VERSION,
} from "@compaction/core";
import { builders, FORMATS, rejection } from "@compaction/core/testing";
import { extractSessionState } from "./extract-session-state.js";
import { createExtractiveSummarizer } from "./extractive.js";

const counter = createEstimateCounter();
const NOW = new Date("2026-02-03T04:05:06.789Z");
const SOURCE = { session: "s-1", path: null, format: "messages", cwd: "/work/app", leafEntryId: null } as const;

describe.each(FORMATS)("extractSessionState on %s messages", (format) => {
  const b = builders(format);
  const request = "Fix the login bug in src/auth.ts. Don't change the public API.";
  const conversation = () => [
    b.user(request),
    b.assistant("Let me read the auth module first.", [{ id: "c1", name: "read", args: { path: "src/auth.ts" } }]),
    ...b.toolResults([{ id: "c1", name: "read", text: "export function login() {}" }]),
    b.assistant("I'll use a constant-time compare instead of ===.", [
      { id: "c2", name: "edit", args: { path: "src/auth.ts", oldText: "===", newText: "safeEqual" } },
      { id: "c3", name: "read", args: { path: "docs/auth.md" } },
    ]),
    ...b.toolResults([
      { id: "c2", name: "edit", text: "edited" },
      { id: "c3", name: "read", text: "# Auth" },
    ]),
    b.assistant("Running the tests now.", [{ id: "c4", name: "bash", args: { command: "npm test" } }]),
    ...b.toolResults([{ id: "c4", name: "bash", text: "Error: 2 tests failed", isError: true }]),
    b.assistant("The tests fail on the old fixture. Next, update the fixture in test/auth.test.ts."),
    b.user("Also set AUTH_TIMEOUT to 30s?"),
  ];
  const extract = (messages: unknown[], options: { now?: Date; summaryMaxTokens?: number } = {}) =>
    extractSessionState(messages, b.adapter, { source: SOURCE, counter, now: NOW, ...options });

  it("marks the document with the format, the version and the export time", () => {
    const state = extract(conversation());
    expect(state.format).toBe(SESSION_STATE_FORMAT);
    expect(state.version).toBe(SESSION_STATE_VERSION);
    expect(state.exportedAt).toBe("2026-02-03T04:05:06.789Z");
  });

  it("copies the source and adds the message count and their counted tokens", () => {
    const messages = conversation();
    const facts = new FactsCache(b.adapter);
    const tokens = messages.reduce((sum: number, m) => sum + counter.count(messageTokenText(facts.of(m))), 0);
    expect(extract(messages).source).toEqual({ ...SOURCE, messages: messages.length, tokens });
  });

  it("takes the opening request as the goal and its don't-sentence as a constraint", () => {
    const state = extract(conversation());
    expect(state.goal).toEqual([request]);
    expect(state.constraints).toEqual(["Don't change the public API."]);
  });

  it("lists an edited file under modified only, and a file only read under read", () => {
    const state = extract(conversation());
    expect(state.files).toEqual({ read: ["docs/auth.md"], modified: ["src/auth.ts"] });
  });

  it("counts calls and failed calls per tool, most called first", () => {
    expect(extract(conversation()).toolOperations.tools).toEqual([
      { name: "read", calls: 2, failed: 0 },
      { name: "bash", calls: 1, failed: 1 },
      { name: "edit", calls: 1, failed: 0 },
    ]);
  });

  it("keeps the command run and the failed call with its error line", () => {
    const { commands, failed } = extract(conversation()).toolOperations;
    expect(commands).toEqual(["npm test"]);
    expect(failed).toEqual(["bash(npm test): Error: 2 tests failed"]);
  });

  it("puts the next step of the last reply and the unanswered ask under open tasks", () => {
    expect(extract(conversation()).openTasks).toEqual([
      "Next, update the fixture in test/auth.test.ts.",
      "Respond to: Also set AUTH_TIMEOUT to 30s?",
    ]);
  });

  it("records the edit as done and the decision worded with 'instead of'", () => {
    const state = extract(conversation());
    expect(state.done).toContain("Edited `src/auth.ts`");
    expect(state.decisions).toEqual(["I'll use a constant-time compare instead of ===."]);
  });

  it("keeps identifiers named in the text but not the paths already listed as files", () => {
    const state = extract(conversation());
    expect(state.identifiers).toContain("AUTH_TIMEOUT");
    expect(state.identifiers).not.toContain("src/auth.ts");
  });

  it("takes the last user message as the last exchange, with no reply when none came after it", () => {
    const { lastExchange } = extract(conversation());
    expect(lastExchange.user).toBe("Also set AUTH_TIMEOUT to 30s?");
    expect(lastExchange.assistant).toBeNull();
  });

  it("pairs the last user message with the last assistant text after it, not with tool-only steps", () => {
    const messages = [
      b.user("first ask"),
      b.assistant("first answer"),
      b.user("second ask"),
      b.assistant("Looking.", [{ id: "k1", args: { command: "ls" } }]),
      ...b.toolResults([{ id: "k1", text: "a.ts" }]),
      b.assistant("There is one file, a.ts."),
      b.assistant("", [{ id: "k2", args: { command: "pwd" } }]),
      ...b.toolResults([{ id: "k2", text: "/work" }]),
    ];
    const { lastExchange } = extract(messages);
    expect(lastExchange.user).toBe("second ask");
    expect(lastExchange.assistant).toBe("There is one file, a.ts.");
  });

  it("times the last exchange by the reply when the format stores times, else null", () => {
    const reply = b.assistant("done");
    const { lastExchange } = extract([b.user("go"), reply]);
    const time = b.adapter.readFacts(reply).timestamp;
    expect(lastExchange.timestamp).toBe(time === undefined ? null : new Date(time).toISOString());
    expect(lastExchange.timestamp === null).toBe(format !== "pi");
  });

  it("writes the same summary the extractive summarizer writes for the same messages", async () => {
    const messages = conversation();
    const facts = messages.map((m) => b.adapter.readFacts(m));
    const expected = await createExtractiveSummarizer().summarize({ messages: facts, maxTokens: 4000, counter, kind: "history" });
    expect(extract(messages).summary).toBe(expected);
    expect(expected).toContain("## Goal");
  });

  it("fits the summary under summaryMaxTokens", () => {
    const state = extract(conversation(), { summaryMaxTokens: 40 });
    expect(state.summary.length).toBeGreaterThan(0);
    expect(counter.count(state.summary)).toBeLessThanOrEqual(40);
  });

  it("merges a summary message of an earlier compaction: its goal comes first and its files stay listed", () => {
    const earlier = b.adapter.createSummary(
      "## Goal\n- Port the auth module to TypeScript\n## Files\n### Modified\n- `lib/auth.js`\n## Payment Notes\n- the card API is v3",
    );
    const state = extract([earlier, ...conversation()]);
    expect(state.goal).toEqual(["Port the auth module to TypeScript"]);
    expect(state.files.modified).toEqual(["lib/auth.js", "src/auth.ts"]);
    expect(state.summary).toContain("## Payment Notes\n- the card API is v3");
  });

  it("gives the same document twice for the same messages and time", () => {
    const messages = conversation();
    expect(extract(messages)).toEqual(extract(messages));
  });

  it("gives empty lists, an empty summary and no last exchange for no messages", () => {
    const state = extract([]);
    expect(state.summary).toBe("");
    expect(state.goal).toEqual([]);
    expect(state.toolOperations).toEqual({ tools: [], commands: [], failed: [] });
    expect(state.lastExchange).toEqual({ user: null, assistant: null, timestamp: null });
    expect(state.source.messages).toBe(0);
  });
});

describe("extractSessionState input checks", () => {
  const b = builders("pi");
  const base = { source: SOURCE, counter };

  it.each([
    ["messages that are not an array", () => extractSessionState("hi" as never, b.adapter, base), "/messages"],
    ["an adapter without readFacts", () => extractSessionState([], {} as never, base), "/adapter"],
    ["no token counter", () => extractSessionState([], b.adapter, { source: SOURCE } as never), "/counter"],
    ["an unknown source format", () => extractSessionState([], b.adapter, { ...base, source: { ...SOURCE, format: "cursor" as never } }), "/source/format"],
    ["a negative summaryMaxTokens", () => extractSessionState([], b.adapter, { ...base, summaryMaxTokens: -1 }), "/summaryMaxTokens"],
    ["an invalid date as now", () => extractSessionState([], b.adapter, { ...base, now: new Date("nope") }), "/now"],
  ])("rejects %s with INPUT_INVALID at its path", async (_name, run, path) => {
    const error = await rejection((async () => run())());
    expect(error.code).toBe(ErrorCodes.INPUT_INVALID);
    expect(error.path).toBe(path);
  });
});
