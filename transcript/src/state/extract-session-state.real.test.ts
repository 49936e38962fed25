/**
 * extractSessionState on the real transcripts in ../shared/fixtures/real (see PROVENANCE.md
 * there): pi sessions through the pi adapter, Claude Code transcripts through the Anthropic
 * adapter. Expected values are counted straight from the messages, not through MessageFacts.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  type AnthropicContentBlock,
  type AnthropicMessage,
  createAnthropicAdapter,
  createEstimateCounter,
  createPiAdapter,
  type PiMessage,
} from "@compaction/core";
import { createExtractiveSummarizer, extractSessionState } from "@compaction/plugin-summarizer-extractive";
import { importClaudeCode } from "../claude-code-import.js";
import { buildContext } from "../context.js";
import { readSession } from "../parse.js";
import { parseSessionState } from "./parse-session-state.js";

const REAL = fileURLToPath(new URL("../../../../shared/fixtures/real/", import.meta.url));
const counter = createEstimateCounter();
const NOW = new Date("2026-03-01T12:00:00.000Z");
const piAdapter = createPiAdapter();
const anthropicAdapter = createAnthropicAdapter();

function piState(file: string) {
  const session = readSession(REAL + file);
  const context = buildContext(session.entries);
  const state = extractSessionState(context.messages, piAdapter, {
    source: { session: session.header.id, path: REAL + file, format: "pi", cwd: session.header.cwd ?? null, leafEntryId: context.leafId },
    counter,
    now: NOW,
  });
  return { session, messages: context.messages, leafId: context.leafId, state };
}

const piText = (content: PiMessage extends infer M ? (M extends { content: infer C } ? C : never) : never): string =>
  typeof content === "string" ? content : content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");

/** Calls and error results per tool name, counted from pi's own blocks. */
function piToolCounts(messages: readonly PiMessage[]): Map<string, { calls: number; failed: number }> {
  const failedIds = new Set(messages.flatMap((m) => (m.role === "toolResult" && m.isError ? [m.toolCallId] : [])));
  const counts = new Map<string, { calls: number; failed: number }>();
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    for (const block of message.content) {
      if (block.type !== "toolCall") continue;
      const entry = counts.get(block.name) ?? { calls: 0, failed: 0 };
      entry.calls += 1;
      if (failedIds.has(block.id)) entry.failed += 1;
      counts.set(block.name, entry);
    }
  }
  return counts;
}

/** Paths of read / edit+write calls whose result was not an error, from pi's own blocks. */
function piFilePaths(messages: readonly PiMessage[]): { read: Set<string>; modified: Set<string> } {
  const failedIds = new Set(messages.flatMap((m) => (m.role === "toolResult" && m.isError ? [m.toolCallId] : [])));
  const read = new Set<string>();
  const modified = new Set<string>();
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    for (const block of message.content) {
      if (block.type !== "toolCall" || failedIds.has(block.id) || typeof block.arguments["path"] !== "string") continue;
      if (block.name === "read") read.add(block.arguments["path"]);
      if (block.name === "edit" || block.name === "write") modified.add(block.arguments["path"]);
    }
  }
  for (const path of modified) read.delete(path);
  return { read, modified };
}

describe("extractSessionState on pi-large-session.jsonl", () => {
  const { session, messages, leafId, state } = piState("pi-large-session.jsonl");

  it("describes the source: session id, cwd, leaf entry, message count and counted tokens", () => {
    expect(state.source).toEqual({
      session: session.header.id,
      path: `${REAL}pi-large-session.jsonl`,
      format: "pi",
      cwd: "/Users/badlogic/workspaces/pi-mono",
      leafEntryId: leafId,
      messages: messages.length,
      tokens: expect.any(Number),
    });
    expect(state.source.messages).toBe(914);
    expect(state.source.tokens).toBeGreaterThan(100_000);
  });

  it("lists exactly the files that successful edit and write calls touched as modified", () => {
    const { modified } = piFilePaths(messages);
    expect(modified.size).toBeGreaterThan(10);
    expect(new Set(state.files.modified)).toEqual(modified);
    expect(state.files.modified).toContain("packages/coding-agent/src/tui/user-message-selector.ts");
  });

  it("lists the files read and never modified as read", () => {
    expect(new Set(state.files.read)).toEqual(piFilePaths(messages).read);
  });

  it("counts every tool's calls and failed calls as a direct count of the blocks does", () => {
    const direct = piToolCounts(messages);
    expect(new Map(state.toolOperations.tools.map((t) => [t.name, { calls: t.calls, failed: t.failed }]))).toEqual(direct);
    expect(state.toolOperations.tools[0]).toEqual({ name: "bash", calls: direct.get("bash")?.calls, failed: direct.get("bash")?.failed });
    // Searches that found nothing (grep exiting with 1 and no output) are counted as failed calls but not listed as errors.
    const emptySearches = messages.filter((m) => {
      if (m.role !== "toolResult" || !m.isError) return false;
      const text = m.content.map((block) => (block.type === "text" ? block.text : "")).join("").trim();
      return /^Command exited with code 1\.?$/.test(text);
    }).length;
    expect(emptySearches).toBeGreaterThan(0);
    expect(state.toolOperations.failed).toHaveLength((direct.get("bash")?.failed ?? -1) - emptySearches);
  });

  it("takes the session's first real request as the goal", () => {
    expect(state.goal[0]?.startsWith("read packages/coding-agent/docs/theme.md in full, then theme.ts")).toBe(true);
  });

  it("has the last user message's text as lastExchange.user and the final assistant text as the reply", () => {
    const lastUser = messages.findLast((m) => m.role === "user");
    const lastText = messages.findLast((m) => m.role === "assistant" && piText(m.content).trim() !== "");
    expect(lastUser !== undefined && lastText !== undefined).toBe(true);
    expect(state.lastExchange.user).toBe(piText((lastUser as PiMessage & { role: "user" }).content).trim());
    expect(state.lastExchange.assistant).toBe(piText((lastText as PiMessage & { role: "assistant" }).content).trim());
    expect(state.lastExchange.timestamp).toBe(new Date((lastText as PiMessage).timestamp).toISOString());
  });

  it("survives JSON.stringify and parseSessionState unchanged", () => {
    expect(parseSessionState(JSON.stringify(state, null, 2), "state.json")).toEqual(state);
  });
});

describe("extractSessionState on pi-before-compaction.jsonl (context starts with a compaction summary)", () => {
  const { messages, state } = piState("pi-before-compaction.jsonl");
  const compaction = messages[0] as PiMessage & { role: "compactionSummary" };

  it("starts from the compaction summary message", () => {
    expect(compaction.role).toBe("compactionSummary");
  });

  it("writes the summary the extractive summarizer writes for the same context", async () => {
    const facts = messages.map((m) => piAdapter.readFacts(m));
    const expected = await createExtractiveSummarizer().summarize({ messages: facts, maxTokens: 4000, counter, kind: "history" });
    expect(state.summary).toBe(expected);
  });

  it("keeps the earlier summary's own sections in the summary", () => {
    expect(compaction.summary).toContain("## User Preferences");
    expect(state.summary).toContain("## User Preferences\n- **E2E tests only** - no unit tests");
  });

  it("keeps a file the earlier summary listed and the kept messages never touched", () => {
    const path = "/Users/badlogic/workspaces/pi-mono/packages/coding-agent/src/core/agent-session.ts";
    expect(compaction.summary).toContain(path);
    expect([...state.files.read, ...state.files.modified]).toContain(path);
  });

  it("survives JSON.stringify and parseSessionState unchanged", () => {
    expect(parseSessionState(JSON.stringify(state))).toEqual(state);
  });
});

const CLAUDE_FIXTURES = [
  "claude-code-log-37f83ec9.jsonl",
  "claude-code-deep-manifest-a7da6a22.jsonl",
  "claude-code-worktrees-ef958aa1.jsonl",
  "claude-code-viewer-fe5e1c67.jsonl",
  "claude-code-log-fe869ecb.jsonl",
  "claude-code-me-next-9e953218.jsonl",
  "claude-code-soundrecorder-7acd37a8.jsonl",
  "claude-code-entire-review-847ff7d2.jsonl",
  "claude-code-entire-attribution-6113e919.jsonl",
  "claude-code-entire-openclaw-ca8cc13b.jsonl",
];

const blocksOf = (message: AnthropicMessage): AnthropicContentBlock[] => (Array.isArray(message.content) ? message.content : []);
const userText = (message: AnthropicMessage): string =>
  typeof message.content === "string"
    ? message.content
    : blocksOf(message)
        .flatMap((block) => (block.type === "text" ? [block.text] : []))
        .join("\n");

describe.each(CLAUDE_FIXTURES)("extractSessionState on Claude Code %s", (file) => {
  const imported = importClaudeCode(REAL + file);
  const messages = imported.messages;
  const state = extractSessionState(messages, anthropicAdapter, {
    source: { session: imported.sessionId ?? null, path: REAL + file, format: "claude-code", cwd: imported.cwd ?? null, leafEntryId: null },
    counter,
    now: NOW,
  });

  it("counts every tool's calls and failed calls as the tool_use and tool_result blocks do", () => {
    const failedIds = new Set(
      messages.flatMap((m) => blocksOf(m).flatMap((b) => (b.type === "tool_result" && b.is_error === true ? [b.tool_use_id] : []))),
    );
    const direct = new Map<string, { calls: number; failed: number }>();
    for (const block of messages.flatMap(blocksOf)) {
      if (block.type !== "tool_use") continue;
      const entry = direct.get(block.name) ?? { calls: 0, failed: 0 };
      entry.calls += 1;
      if (failedIds.has(block.id)) entry.failed += 1;
      direct.set(block.name, entry);
    }
    expect(direct.size).toBeGreaterThan(0);
    expect(new Map(state.toolOperations.tools.map((t) => [t.name, { calls: t.calls, failed: t.failed }]))).toEqual(direct);
  });

  it("has the text of the last user message that is not only tool results as lastExchange.user (a compaction's summary is none)", () => {
    // After a real compaction the context starts with Claude Code's summary (isCompactSummary); in
    // entire-attribution and entire-openclaw no typed message follows it, so there is no user text.
    const last = messages.findLast((m) => m.role === "user" && m.isCompactSummary !== true && userText(m).trim() !== "");
    const summarised = imported.compactions > 0 && last === undefined;
    if (!summarised) expect(last).toBeDefined();
    expect(state.lastExchange.user).toBe(last === undefined ? null : userText(last).trim());
  });

  it("names the Claude Code session and its cwd as the source", () => {
    expect(imported.sessionId?.slice(0, 8)).toBe(/([0-9a-f]{8})\.jsonl$/.exec(file)?.[1]);
    expect(state.source).toMatchObject({ session: imported.sessionId, cwd: imported.cwd, format: "claude-code", messages: messages.length });
  });

  it("lists as modified exactly the files of successful Edit, MultiEdit and Write calls, and as read the other files Read read", () => {
    const failedIds = new Set(
      messages.flatMap((m) => blocksOf(m).flatMap((b) => (b.type === "tool_result" && b.is_error === true ? [b.tool_use_id] : []))),
    );
    const modified = new Set<string>();
    const read = new Set<string>();
    for (const block of messages.flatMap(blocksOf)) {
      if (block.type !== "tool_use" || failedIds.has(block.id)) continue;
      const path = (block.input as { file_path?: unknown }).file_path;
      if (typeof path !== "string") continue;
      if (["Edit", "MultiEdit", "Write"].includes(block.name)) modified.add(path);
      if (block.name === "Read") read.add(path);
    }
    for (const path of modified) read.delete(path);
    expect(new Set(state.files.modified)).toEqual(modified);
    expect(new Set(state.files.read)).toEqual(read);
  });

  it("survives JSON.stringify and parseSessionState unchanged", () => {
    expect(parseSessionState(JSON.stringify(state))).toEqual(state);
  });
});

describe("extractSessionState on Claude Code claude-code-log-37f83ec9.jsonl, by content", () => {
  const imported = importClaudeCode(`${REAL}claude-code-log-37f83ec9.jsonl`);
  const state = extractSessionState(imported.messages, anthropicAdapter, {
    source: { session: imported.sessionId ?? null, path: null, format: "claude-code", cwd: imported.cwd ?? null, leafEntryId: null },
    counter,
  });

  it("ends with the user's question about session_nav.html and the assistant's report on it", () => {
    expect(state.lastExchange.user).toBe(
      "could we reuse @claude_code_log/templates/components/session_nav.html for that? looks like it's very similar?",
    );
    expect(state.lastExchange.assistant).toContain("session_nav.html");
  });
});
