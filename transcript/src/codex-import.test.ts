/**
 * The Codex rollout importer on the hand-written fixtures in __fixtures__ (see the README there
 * for the openai/codex sources they follow) and on variants of them in a temporary folder.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { createOpenAIAdapter, type OpenAIChatMessage } from "@compaction/core";
import { importCodexRollout } from "./codex-import.js";

const FIXTURE = fileURLToPath(new URL("./__fixtures__/codex-rollout.jsonl", import.meta.url));
const LEGACY = fileURLToPath(new URL("./__fixtures__/codex-rollout-legacy.jsonl", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "compaction-codex-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const adapter = createOpenAIAdapter();
const fixtureLines = readFileSync(FIXTURE, "utf8").trimEnd().split("\n");
const compactedAt = fixtureLines.findIndex((line) => line.includes('"type":"compacted"'));

function variant(lines: readonly string[], name: string): string {
  const path = join(dir, name);
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

const kinds = (messages: readonly OpenAIChatMessage[]) => messages.map((m) => adapter.readFacts(m).kind);
const texts = (messages: readonly OpenAIChatMessage[]) => messages.map((m) => adapter.readFacts(m).text);

/** The rollout up to (not including) its compacted line. */
const beforeCompaction = importCodexRollout(variant(fixtureLines.slice(0, compactedAt), "before.jsonl"));

describe("importCodexRollout", () => {
  it("reads the session id, cwd, CLI version and latest model", () => {
    expect(importCodexRollout(FIXTURE)).toMatchObject({
      sessionId: "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5",
      cwd: "/home/dev/calc",
      cliVersion: "0.50.0",
      model: "gpt-5-codex",
    });
  });

  it("maps messages, calls and outputs to Chat roles in order, leaving event and context lines out", () => {
    expect(beforeCompaction.messages.map((m) => m.role)).toEqual([
      ...["user", "user", "user"],
      ...["assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"],
      ...["user", "assistant", "tool", "tool", "assistant", "tool", "assistant"],
    ]);
    expect(beforeCompaction.lines.slice(0, 5)).toEqual([2, 3, 4, 9, 10]);
  });

  it("puts calls made together on one assistant message and a call after an output on a new one, arguments as the JSON string", () => {
    const first = beforeCompaction.messages[3] as Extract<OpenAIChatMessage, { role: "assistant" }>;
    expect(first.content).toBeNull();
    expect(first.tool_calls?.map((call) => call.function.name)).toEqual(["shell"]);
    expect((beforeCompaction.messages[5] as typeof first).tool_calls?.map((call) => call.id)).toEqual(["call_Wd8pZx1Nq4rT6uY7iO8pA9sS"]);
    const parallel = beforeCompaction.messages[13] as Extract<OpenAIChatMessage, { role: "assistant" }>;
    expect(parallel.content).toBe("I'll look at the test file and the README together.");
    expect(parallel.tool_calls?.map((call) => call.id)).toEqual(["call_Aa1Bb2Cc3Dd4Ee5Ff6Gg7Hh8", "call_Ii9Jj0Kk1Ll2Mm3Nn4Oo5Pp6"]);
    expect(JSON.parse(parallel.tool_calls?.[1]?.function.arguments ?? "")).toEqual({
      command: ["bash", "-lc", "grep -n divide README.md"],
      workdir: "/home/dev/calc",
    });
  });

  it("answers every call with a tool message and leaves no output without its call", () => {
    const issued = new Set<string>();
    const orphans: string[] = [];
    for (const facts of beforeCompaction.messages.map((m) => adapter.readFacts(m))) {
      facts.toolResultIds.forEach((id) => issued.has(id) || orphans.push(id));
      facts.toolCalls.forEach((call) => issued.add(call.id));
    }
    expect(orphans).toEqual([]);
    expect(issued.size).toBe(7);
  });

  it("marks an output with a non-zero exit code as an error", () => {
    const tools = beforeCompaction.messages.filter((m) => m.role === "tool");
    expect(tools.map((m) => m.isError === true)).toEqual([true, false, false, false, false, true, false]);
  });

  it("reads apply_patch custom tool calls as calls whose arguments are the patch text", () => {
    const call = beforeCompaction.messages.flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []) : [])).find((c) => c.function.name === "apply_patch");
    expect(call?.function.arguments).toMatch(/^\*\*\* Begin Patch\n\*\*\* Update File: calc.py/);
  });

  it("gives reasoning summaries to the next assistant message as reasoning_content", () => {
    const facts = beforeCompaction.messages.map((m) => adapter.readFacts(m));
    expect(facts.filter((f) => f.thinking !== "").map((f) => f.thinking)).toEqual(["**Running the tests first**", "**Switching to true division**"]);
  });

  it("counts a web search as an ignored item", () => {
    expect(beforeCompaction.ignoredItems).toBe(1);
  });

  it("puts the line's timestamp on each message in ms", () => {
    expect(beforeCompaction.messages[2]?.timestamp).toBe(Date.parse("2025-10-29T01:00:02.310Z"));
  });

  it("rebuilds the context after a compacted line without replacement history as Codex does", () => {
    const imported = importCodexRollout(FIXTURE);
    expect(imported.compactions).toBe(1);
    expect(kinds(imported.messages)).toEqual(["user", "user", "user", "user", "summary", "user", "assistant"]);
    expect(texts(imported.messages).slice(2, 5)).toEqual([
      "The divide test fails, can you fix calc.py?",
      "Add a test for dividing by zero and check the README mentions it.",
      expect.stringContaining("divide used floor division"),
    ]);
    expect(imported.lines[4]).toBe(compactedAt + 1);
  });

  it("replaces the context with a compacted line's replacement history", () => {
    const compacted = JSON.stringify({
      timestamp: "2025-10-29T01:01:30.000Z",
      type: "compacted",
      payload: {
        message: "",
        replacement_history: [
          { type: "message", role: "user", content: [{ type: "input_text", text: "kept request" }] },
          { type: "compaction", encrypted_content: "gAAAA" },
          { type: "message", role: "user", content: [{ type: "input_text", text: "summary text" }] },
        ],
      },
    });
    const lines = [...fixtureLines.slice(0, compactedAt), compacted, ...fixtureLines.slice(compactedAt + 2)];
    const imported = importCodexRollout(variant(lines, "replacement.jsonl"));
    expect(texts(imported.messages)).toEqual(["kept request", "summary text", "Yes, add a short section to the README.", expect.stringMatching(/^Done/)]);
  });

  it("drops the last user turns a thread_rolled_back event names", () => {
    const rollback = JSON.stringify({ timestamp: "2025-10-29T01:00:50.000Z", type: "event_msg", payload: { type: "thread_rolled_back", num_turns: 1 } });
    const imported = importCodexRollout(variant([...fixtureLines.slice(0, compactedAt), rollback], "rollback.jsonl"));
    expect(imported.messages).toEqual(beforeCompaction.messages.slice(0, 12));
  });

  it("reads rollouts written before September 2025 (bare items, state markers)", () => {
    const imported = importCodexRollout(LEGACY);
    expect(imported.sessionId).toBe("5973b6c0-94b8-487b-a530-2aeb6098ae0e");
    expect(kinds(imported.messages)).toEqual(["user", "user", "assistant", "toolResult", "assistant"]);
    expect(texts(imported.messages).at(-1)).toBe("There are 12 markdown files.");
  });
});
