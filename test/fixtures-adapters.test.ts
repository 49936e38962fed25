/**
 * The message adapters on the real transcripts: kinds, tool pairing, usage and sidechains, each
 * checked against counts taken straight from the raw JSON lines and against the known figures.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type MessageAdapter,
  type MessageFacts,
  type MessageKind,
  createAnthropicAdapter,
  createOpenAIAdapter,
  createPiAdapter,
} from "@compaction/core";
import {
  ALL_FIXTURES,
  CLAUDE_FIXTURES,
  CODEX_FIXTURES,
  chatToPi,
  claudeToPi,
  FIXTURES_DIR,
  fixtureFormat,
  PI_FIXTURES,
  loadClaudeMessages,
  loadCodexMessages,
  loadFixtureAsPi,
  loadPiMessages,
} from "@compaction/fixtures";

type Raw = Record<string, any>;

function rawLines(file: string): Raw[] {
  return readFileSync(join(FIXTURES_DIR, file), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Raw);
}

function factsOf<T>(adapter: MessageAdapter<T>, messages: readonly T[]): MessageFacts[] {
  return messages.map((message) => adapter.readFacts(message));
}

function countKinds(facts: readonly MessageFacts[]): Partial<Record<MessageKind, number>> {
  const counts: Partial<Record<MessageKind, number>> = {};
  for (const f of facts) counts[f.kind] = (counts[f.kind] ?? 0) + 1;
  return counts;
}

/** Tool-result ids that answer no call issued earlier in the list. */
function orphanResultIds(facts: readonly MessageFacts[]): string[] {
  const issued = new Set<string>();
  const orphans: string[] = [];
  for (const f of facts) {
    for (const id of f.toolResultIds) if (!issued.has(id)) orphans.push(id);
    for (const call of f.toolCalls) issued.add(call.id);
  }
  return orphans;
}

const pi = createPiAdapter();
const anthropic = createAnthropicAdapter();
const openai = createOpenAIAdapter();

describe("fixture files", () => {
  it("FIXTURES_DIR holds every listed fixture", () => {
    for (const file of ALL_FIXTURES) expect(existsSync(join(FIXTURES_DIR, file)), file).toBe(true);
  });

  it("ALL_FIXTURES lists every transcript in FIXTURES_DIR, each in one format list", () => {
    expect([...ALL_FIXTURES].sort()).toEqual(readdirSync(FIXTURES_DIR).filter((name) => name.endsWith(".jsonl")).sort());
    expect(ALL_FIXTURES).toEqual([...PI_FIXTURES, ...CLAUDE_FIXTURES, ...CODEX_FIXTURES]);
    expect(new Set(ALL_FIXTURES).size).toBe(13);
  });

  it("fixtureFormat names each list's format and refuses an unlisted name", () => {
    expect(PI_FIXTURES.map(fixtureFormat)).toEqual(PI_FIXTURES.map(() => "pi"));
    expect(CLAUDE_FIXTURES.map(fixtureFormat)).toEqual(CLAUDE_FIXTURES.map(() => "claude-code"));
    expect(CODEX_FIXTURES.map(fixtureFormat)).toEqual(CODEX_FIXTURES.map(() => "codex"));
    expect(() => fixtureFormat("notes.jsonl")).toThrow(/expected one of the real transcripts .*found "notes.jsonl"/);
  });
});

// ---------------------------------------------------------------------------------------------
// pi-coding-agent sessions

/** Figures known from the files (see PROVENANCE.md). */
const PI_KNOWN: Record<string, { kinds: Partial<Record<MessageKind, number>>; withUsage: number; failed: number }> = {
  "pi-large-session.jsonl": { kinds: { user: 88, assistant: 453, toolResult: 373 }, withUsage: 431, failed: 19 },
  "pi-before-compaction.jsonl": { kinds: { user: 58, assistant: 484, toolResult: 448 }, withUsage: 465, failed: 12 },
};

const PI_ROLE_KIND: Record<string, MessageKind> = {
  user: "user",
  assistant: "assistant",
  toolResult: "toolResult",
  bashExecution: "user",
  custom: "other",
  branchSummary: "summary",
  compactionSummary: "summary",
};

function rawPiMessages(file: string): Raw[] {
  return rawLines(file)
    .filter((entry) => entry["type"] === "message")
    .map((entry) => entry["message"] as Raw);
}

function rawPiUsage(message: Raw): number | undefined {
  if (message["role"] !== "assistant" || message["stopReason"] === "aborted" || message["stopReason"] === "error") return undefined;
  const u = message["usage"];
  const total = u.totalTokens || u.input + u.output + u.cacheRead + u.cacheWrite;
  return total > 0 ? total : undefined;
}

describe.each(PI_FIXTURES)("pi fixture %s", (file) => {
  const known = PI_KNOWN[file]!;
  const messages = loadPiMessages(file);
  const facts = factsOf(pi, messages);
  const raw = rawPiMessages(file);

  it("loads every message entry in file order", () => {
    expect(messages).toEqual(raw);
  });

  it("reads the kinds counted from the raw roles", () => {
    const expected: Partial<Record<MessageKind, number>> = {};
    for (const m of raw) {
      const kind = m["role"] === "bashExecution" && m["excludeFromContext"] === true ? "other" : PI_ROLE_KIND[m["role"]] ?? "other";
      expected[kind] = (expected[kind] ?? 0) + 1;
    }
    expect(countKinds(facts)).toEqual(expected);
    expect(countKinds(facts)).toEqual(known.kinds);
  });

  it("has no tool result without an earlier call", () => {
    expect(orphanResultIds(facts)).toEqual([]);
    expect(facts.filter((f) => f.toolResultIds.length === 1).length).toBe(known.kinds.toolResult);
  });

  it("reads the tool calls of the raw toolCall blocks", () => {
    const rawCalls = raw.flatMap((m) =>
      m["role"] === "assistant" ? (m["content"] as Raw[]).filter((b) => b["type"] === "toolCall").map((b) => b["id"]) : [],
    );
    expect(facts.flatMap((f) => f.toolCalls.map((c) => c.id))).toEqual(rawCalls);
  });

  it("marks the failed tool results", () => {
    expect(facts.filter((f) => f.isError).length).toBe(known.failed);
  });

  it("finds usage on every assistant message whose response completed", () => {
    const expected = raw.map(rawPiUsage);
    expect(facts.map((f) => f.usageContextTokens)).toEqual(expected);
    expect(facts.filter((f) => f.usageContextTokens !== undefined).length).toBe(known.withUsage);
  });

  it("loads the same messages without their usage figures with usage: false", () => {
    const bare = loadPiMessages(file, { usage: false });
    expect(bare.some((m) => "usage" in m)).toBe(false);
    expect(factsOf(pi, bare).map((f) => f.usageContextTokens)).toEqual(facts.map(() => undefined));
    expect(bare).toEqual(messages.map((m) => ("usage" in m ? (({ usage: _usage, ...rest }) => rest)(m) : m)));
  });
});

describe("pi context view (boundary rule)", () => {
  const entries = rawLines("pi-before-compaction.jsonl");
  const latest = entries.findLastIndex((e) => e["type"] === "compaction");
  const compaction = entries[latest]!;
  const context = loadPiMessages("pi-before-compaction.jsonl", { context: true });
  const facts = factsOf(pi, context);

  it("starts with the latest compaction's summary", () => {
    expect(facts[0]).toMatchObject({ kind: "summary", text: compaction["summary"] });
    expect(context[0]).toMatchObject({ role: "compactionSummary", tokensBefore: compaction["tokensBefore"] });
  });

  it("keeps the messages from entry firstKeptEntryIndex onwards, skipping the compaction entries", () => {
    const first = compaction["firstKeptEntryIndex"] as number;
    const kept = entries.slice(first).filter((e) => e["type"] === "message").map((e) => e["message"]);
    expect(context.slice(1)).toEqual(kept);
    expect(context.length).toBe(446);
  });

  it("has no tool result without an earlier call", () => {
    expect(orphanResultIds(facts)).toEqual([]);
  });

  it("is the whole message list for a session without compactions", () => {
    expect(loadPiMessages("pi-large-session.jsonl", { context: true })).toEqual(loadPiMessages("pi-large-session.jsonl"));
  });
});

// ---------------------------------------------------------------------------------------------
// Claude Code transcripts

/** Figures known from the files: main-chain messages by kind, failed results, sidechain lines. */
const CLAUDE_KNOWN: Record<string, { kinds: Partial<Record<MessageKind, number>>; failed: number; sidechainLines: number; compactions: number }> = {
  "claude-code-log-37f83ec9.jsonl": { kinds: { user: 8, toolResult: 101, assistant: 105 }, failed: 21, sidechainLines: 0, compactions: 0 },
  "claude-code-deep-manifest-a7da6a22.jsonl": { kinds: { user: 14, toolResult: 108, assistant: 103 }, failed: 4, sidechainLines: 0, compactions: 0 },
  "claude-code-worktrees-ef958aa1.jsonl": { kinds: { user: 5, toolResult: 40, assistant: 17 }, failed: 0, sidechainLines: 0, compactions: 0 },
  "claude-code-viewer-fe5e1c67.jsonl": { kinds: { user: 3, toolResult: 11, assistant: 9 }, failed: 0, sidechainLines: 405, compactions: 0 },
  "claude-code-log-fe869ecb.jsonl": { kinds: { user: 5, toolResult: 32, assistant: 34 }, failed: 6, sidechainLines: 0, compactions: 0 },
  "claude-code-me-next-9e953218.jsonl": { kinds: { user: 11, toolResult: 92, assistant: 101 }, failed: 10, sidechainLines: 0, compactions: 0 },
  "claude-code-soundrecorder-7acd37a8.jsonl": { kinds: { user: 8, toolResult: 71, assistant: 36 }, failed: 6, sidechainLines: 0, compactions: 0 },
  "claude-code-entire-review-847ff7d2.jsonl": { kinds: { user: 9, toolResult: 119, assistant: 97 }, failed: 4, sidechainLines: 0, compactions: 1 },
  "claude-code-entire-attribution-6113e919.jsonl": { kinds: { user: 51, toolResult: 206, assistant: 226 }, failed: 12, sidechainLines: 0, compactions: 3 },
  "claude-code-entire-openclaw-ca8cc13b.jsonl": { kinds: { user: 1, toolResult: 116, assistant: 94 }, failed: 7, sidechainLines: 0, compactions: 1 },
};

function isConversationLine(line: Raw): boolean {
  return line["type"] === "user" || line["type"] === "assistant";
}

function blocks(line: Raw): Raw[] {
  const content = line["message"]["content"];
  return Array.isArray(content) ? content : [];
}

describe.each(CLAUDE_FIXTURES)("Claude Code fixture %s", (file) => {
  const known = CLAUDE_KNOWN[file]!;
  const all = rawLines(file);
  const firstBoundary = all.findIndex((line) => line["subtype"] === "compact_boundary" || line["isCompactSummary"] === true);
  /** Lines from before the first compaction: the ones whose usage measures the conversation read. */
  const beforeCompaction = new Set(firstBoundary < 0 ? all : all.slice(0, firstBoundary));
  const lines = all.filter(isConversationLine);
  const summaries = lines.filter((line) => line["isCompactSummary"] === true);
  const main = lines.filter((line) => line["isSidechain"] !== true && line["isCompactSummary"] !== true);
  const sidechain = lines.filter((line) => line["isSidechain"] === true);
  const messages = loadClaudeMessages(file);
  const facts = factsOf(anthropic, messages);

  it("reads the kinds counted from the raw main-chain lines (one assistant message per response id)", () => {
    const users = main.filter((line) => line["type"] === "user");
    const withResults = users.filter((line) => blocks(line).some((b) => b["type"] === "tool_result"));
    const responses = new Set(main.filter((line) => line["type"] === "assistant").map((line) => line["message"]["id"]));
    const expected = { user: users.length - withResults.length, toolResult: withResults.length, assistant: responses.size };
    expect(countKinds(facts)).toEqual(expected);
    expect(countKinds(facts)).toEqual(known.kinds);
  });

  it("has no tool result without an earlier call", () => {
    expect(orphanResultIds(facts)).toEqual([]);
  });

  it("keeps every main-chain tool call once, in order", () => {
    const rawCalls = main.flatMap((line) =>
      line["type"] === "assistant" ? blocks(line).filter((b) => b["type"] === "tool_use").map((b) => b["id"]) : [],
    );
    expect(facts.flatMap((f) => f.toolCalls.map((c) => c.id))).toEqual(rawCalls);
  });

  it("marks the failed tool results", () => {
    expect(facts.filter((f) => f.isError).length).toBe(known.failed);
  });

  it("excludes the sidechain lines and their tool calls", () => {
    expect(sidechain.length).toBe(known.sidechainLines);
    const sideIds = new Set(sidechain.flatMap((line) => blocks(line).map((b) => b["id"] ?? b["tool_use_id"]).filter(Boolean)));
    const seen = facts.flatMap((f) => [...f.toolCalls.map((c) => c.id), ...f.toolResultIds]);
    expect(seen.filter((id) => sideIds.has(id))).toEqual([]);
  });

  it("reads each response's usage from its last line, before the first compaction only", () => {
    const lastUsage = new Map<string, Raw>();
    for (const line of main) if (line["type"] === "assistant" && beforeCompaction.has(line)) lastUsage.set(line["message"]["id"], line["message"]["usage"]);
    for (const [index, f] of facts.entries()) {
      if (f.kind !== "assistant") continue;
      const u = lastUsage.get(messages[index]!.id!);
      const total = u === undefined ? 0 : u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + u.output_tokens;
      // A response with no tokens (Claude Code's `<synthetic>` messages) carries no usage.
      expect(f.usageContextTokens).toBe(total > 0 ? total : undefined);
    }
  });

  it("reads the whole recorded conversation: no Claude Code summary, every line before and after a compaction", () => {
    expect(summaries.length).toBe(known.compactions);
    expect(messages.filter((m) => m.isCompactSummary === true)).toEqual([]);
    expect(facts.filter((f) => f.kind === "summary")).toEqual([]);
    const recorded = loadClaudeMessages(file, { compactSummaries: true });
    expect(recorded.filter((m) => m.isCompactSummary === true).length).toBe(known.compactions);
    expect(recorded.filter((m) => m.isCompactSummary !== true).map((m) => m.content)).toEqual(messages.map((m) => m.content));
  });

  it("continues each compaction from the line its boundary names (logicalParentUuid, just before it)", () => {
    all.forEach((line, index) => {
      if (line["subtype"] !== "compact_boundary") return;
      expect(line["parentUuid"]).toBeNull();
      expect(all.slice(0, index).findLast((before) => typeof before["uuid"] === "string")?.["uuid"]).toBe(line["logicalParentUuid"]);
    });
  });
});

describe("loadClaudeMessages on a compaction that names no earlier line", () => {
  const dir = mkdtempSync(join(tmpdir(), "compaction-fixtures-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("throws naming the boundary and the missing parent", () => {
    const path = join(dir, "orphan-boundary.jsonl");
    const user = { type: "user", uuid: "u1", parentUuid: null, message: { role: "user", content: "hi" } };
    const boundary = { type: "system", subtype: "compact_boundary", uuid: "b1", parentUuid: null, logicalParentUuid: "gone" };
    writeFileSync(path, `${JSON.stringify(user)}\n${JSON.stringify(boundary)}\n`);
    expect(() => loadClaudeMessages(path)).toThrow(/compact_boundary line b1 .*no line before it has uuid gone/);
  });
});

// ---------------------------------------------------------------------------------------------
// Codex rollouts

describe.each(CODEX_FIXTURES)("Codex fixture %s", (file) => {
  const lines = rawLines(file);
  const items = lines.filter((line) => line["type"] === "response_item").map((line) => line["payload"] as Raw);
  const messages = loadCodexMessages(file);
  const facts = factsOf(openai, messages);

  it("reads every prompt, tool call and result of the rollout (PROVENANCE: 3 prompts, 18 calls)", () => {
    const calls = items.filter((item) => item["type"] === "function_call" || item["type"] === "custom_tool_call").map((item) => item["call_id"]);
    expect(facts.flatMap((f) => f.toolCalls.map((c) => c.id))).toEqual(calls);
    expect(facts.filter((f) => f.kind === "toolResult").length).toBe(18);
    const prompts = items.filter((item) => item["type"] === "message" && item["role"] === "user");
    expect(facts.filter((f) => f.kind === "user").length).toBe(prompts.length);
    expect(prompts.length).toBe(4); // the environment context and the 3 prompts
  });

  it("has no tool result without an earlier call", () => {
    expect(orphanResultIds(facts)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// Every fixture as pi messages

describe.each(ALL_FIXTURES)("loadFixtureAsPi(%s)", (file) => {
  const messages = loadFixtureAsPi(file, { usage: false });
  const facts = factsOf(pi, messages);

  it("gives every tool result after its call, with no summary and no usage", () => {
    expect(orphanResultIds(facts)).toEqual([]);
    expect(facts.filter((f) => f.kind === "summary")).toEqual([]);
    expect(messages.filter((m) => "usage" in m)).toEqual([]);
  });

  it("keeps the native messages' tool calls, in order", () => {
    const format = fixtureFormat(file);
    const native: MessageFacts[] =
      format === "pi" ? factsOf(pi, loadPiMessages(file)) : format === "claude-code" ? factsOf(anthropic, loadClaudeMessages(file)) : factsOf(openai, loadCodexMessages(file));
    expect(facts.flatMap((f) => f.toolCalls.map((c) => c.id))).toEqual(native.flatMap((f) => f.toolCalls.map((c) => c.id)));
    expect(facts.filter((f) => f.isError).length).toBe(native.filter((f) => f.isError).length);
  });
});

describe("loadFixtureAsPi on pi sessions", () => {
  it("is loadPiMessages, with usage unless usage: false", () => {
    for (const file of PI_FIXTURES) {
      expect(loadFixtureAsPi(file)).toEqual(loadPiMessages(file));
      expect(loadFixtureAsPi(file, { usage: false })).toEqual(loadPiMessages(file, { usage: false }));
    }
  });
});

describe("claudeToPi", () => {
  it("turns tool_use into a toolCall and each tool_result into a toolResult named after its call", () => {
    const converted = claudeToPi([
      { role: "user", content: "list files" },
      { role: "assistant", content: [{ type: "thinking", thinking: "hmm" }, { type: "tool_use", id: "t1", name: "Bash", input: { command: "ls" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "a.txt" }], is_error: true }, { type: "text", text: "thanks" }] },
    ]);
    expect(converted.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "user"]);
    expect(converted[1]).toMatchObject({ content: [{ type: "toolCall", id: "t1", name: "Bash", arguments: { command: "ls" } }] });
    expect(converted[2]).toMatchObject({ toolCallId: "t1", toolName: "Bash", isError: true, content: [{ type: "text", text: "a.txt" }] });
  });
});

describe("chatToPi", () => {
  it("turns tool_calls into toolCalls (JSON arguments parsed, a raw input as { input }) and tool messages into toolResults", () => {
    const converted = chatToPi([
      { role: "user", content: [{ type: "text", text: "build it" }], timestamp: 5000 },
      {
        role: "assistant",
        content: null,
        reasoning_content: "think",
        tool_calls: [
          { id: "c1", type: "function", function: { name: "shell", arguments: '{"command":["ls"]}' } },
          { id: "c2", type: "function", function: { name: "apply_patch", arguments: "*** Begin Patch" } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "a.txt", isError: true },
      { role: "tool", tool_call_id: "c2", content: [{ type: "text", text: "Success" }] },
      { role: "assistant", content: "done" },
    ]);
    expect(converted.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "toolResult", "assistant"]);
    expect(converted[0]).toMatchObject({ content: [{ type: "text", text: "build it" }], timestamp: 5000 });
    expect(converted[1]).toMatchObject({
      stopReason: "toolUse",
      content: [
        { type: "toolCall", id: "c1", name: "shell", arguments: { command: ["ls"] } },
        { type: "toolCall", id: "c2", name: "apply_patch", arguments: { input: "*** Begin Patch" } },
      ],
      timestamp: 6000,
    });
    expect(converted[2]).toMatchObject({ toolCallId: "c1", toolName: "shell", isError: true, content: [{ type: "text", text: "a.txt" }] });
    expect(converted[3]).toMatchObject({ toolCallId: "c2", toolName: "apply_patch", isError: false, content: [{ type: "text", text: "Success" }] });
    expect(converted[4]).toMatchObject({ content: [{ type: "text", text: "done" }], stopReason: "stop" });
  });
});

describe("fixture loaders: unreadable lines", () => {
  const dir = mkdtempSync(join(tmpdir(), "compaction-fixtures-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ["loadPiMessages", (path: string) => loadPiMessages(path)],
    ["loadClaudeMessages", (path: string) => loadClaudeMessages(path)],
  ] as const)("%s names the file and line of a bad JSON line", (_name, load) => {
    const path = join(dir, "bad.jsonl");
    writeFileSync(path, '{"type":"session"}\n\n{"type":"message",\n');
    expect(() => load(path)).toThrow(`${path}:3:`);
  });
});
