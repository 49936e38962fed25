/**
 * The message adapters on the real transcripts: kinds, tool pairing, usage and sidechains, each
 * checked against counts taken straight from the raw JSON lines and against the known figures.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type MessageAdapter,
  type MessageFacts,
  type MessageKind,
  createAnthropicAdapter,
  createPiAdapter,
} from "@compaction/core";
import { CLAUDE_FIXTURES, FIXTURES_DIR, PI_FIXTURES, loadClaudeMessages, loadPiMessages } from "@compaction/fixtures";

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

describe("fixture files", () => {
  it("FIXTURES_DIR holds every listed fixture", () => {
    for (const file of [...PI_FIXTURES, ...CLAUDE_FIXTURES]) expect(existsSync(join(FIXTURES_DIR, file)), file).toBe(true);
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
const CLAUDE_KNOWN: Record<string, { kinds: Partial<Record<MessageKind, number>>; failed: number; sidechainLines: number }> = {
  "claude-code-log-37f83ec9.jsonl": { kinds: { user: 8, toolResult: 101, assistant: 105 }, failed: 21, sidechainLines: 0 },
  "claude-code-deep-manifest-a7da6a22.jsonl": { kinds: { user: 14, toolResult: 108, assistant: 103 }, failed: 4, sidechainLines: 0 },
  "claude-code-worktrees-ef958aa1.jsonl": { kinds: { user: 5, toolResult: 40, assistant: 17 }, failed: 0, sidechainLines: 0 },
  "claude-code-viewer-fe5e1c67.jsonl": { kinds: { user: 3, toolResult: 11, assistant: 9 }, failed: 0, sidechainLines: 405 },
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
  const lines = rawLines(file).filter(isConversationLine);
  const main = lines.filter((line) => line["isSidechain"] !== true);
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

  it("reads each response's usage from its last line", () => {
    const lastUsage = new Map<string, Raw>();
    for (const line of main) if (line["type"] === "assistant") lastUsage.set(line["message"]["id"], line["message"]["usage"]);
    for (const [index, f] of facts.entries()) {
      if (f.kind !== "assistant") continue;
      const u = lastUsage.get(messages[index]!.id!)!;
      const expected =
        u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + u.output_tokens;
      expect(f.usageContextTokens).toBe(expected);
    }
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
