/**
 * The Claude Code importer on the real transcripts in ../shared/fixtures/real (see PROVENANCE.md
 * there), checked against counts taken straight from the raw lines, and on variants of them made
 * in a temporary folder; the whole-history reader on copies of the three with real compactions.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { type AnthropicContentBlock, createAnthropicAdapter, ErrorCodes } from "@compaction/core";
import { importClaudeCode, importClaudeCodeHistory } from "./claude-code-import.js";
import { TranscriptError } from "./transcript-error.js";

const REAL = fileURLToPath(new URL("../../../shared/fixtures/real/", import.meta.url));
/** The real Claude Code transcripts (the @compaction/fixtures list, which this package cannot import: fixtures imports it). */
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
const dir = mkdtempSync(join(tmpdir(), "compaction-claude-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const adapter = createAnthropicAdapter();

type Raw = Record<string, any>;
const rawLines = (file: string): Raw[] =>
  readFileSync(join(REAL, file), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Raw);
const mainLines = (lines: readonly Raw[]) => lines.filter((l) => (l.type === "user" || l.type === "assistant") && l.isSidechain !== true);
const blocks = (content: unknown): AnthropicContentBlock[] => (Array.isArray(content) ? (content as AnthropicContentBlock[]) : []);

function variant(lines: readonly unknown[], name: string): string {
  const path = join(dir, name);
  writeFileSync(path, `${lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n")}\n`);
  return path;
}

describe.each(CLAUDE_FIXTURES)("importClaudeCode on %s", (file) => {
  const raw = rawLines(file);
  // The context starts at the latest compaction (its summary line) when the file has one.
  const latestBoundary = raw.findLastIndex((l) => l.type === "system" && l.subtype === "compact_boundary");
  const main = mainLines(raw.slice(latestBoundary + 1));
  const first = mainLines(raw)[0];
  const imported = importClaudeCode(join(REAL, file));

  it("has one message per main-chain user line and per response id, none from sidechain lines", () => {
    const responseIds = new Set(main.filter((l) => l.type === "assistant").map((l) => l.message.id));
    expect(imported.messages).toHaveLength(main.filter((l) => l.type === "user").length + responseIds.size);
    const sidechainUuids = new Set(raw.filter((l) => l.isSidechain === true).map((l) => l.uuid));
    expect(imported.entryIds.filter((id) => sidechainUuids.has(id))).toEqual([]);
    expect(imported.sidechainLines).toBe(sidechainUuids.size);
  });

  it("joins the lines of one response: each response id once, holding every block of its lines in order", () => {
    const ids = imported.messages.filter((m) => m.role === "assistant").map((m) => m.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const message of imported.messages.filter((m) => m.role === "assistant")) {
      const lines = main.filter((l) => l.type === "assistant" && l.message.id === message.id);
      expect(message.content).toEqual(lines.flatMap((l) => blocks(l.message.content)));
      expect(message.usage).toEqual(lines.at(-1)?.message.usage);
    }
  });

  it("keeps every tool call and leaves no tool result without an earlier call", () => {
    const facts = imported.messages.map((m) => adapter.readFacts(m));
    const issued = new Set<string>();
    const orphans: string[] = [];
    for (const f of facts) {
      f.toolResultIds.forEach((id) => issued.has(id) || orphans.push(id));
      f.toolCalls.forEach((call) => issued.add(call.id));
    }
    expect(orphans).toEqual([]);
    const rawCalls = main.flatMap((l) => blocks(l.message.content)).filter((b) => b.type === "tool_use");
    expect(issued.size).toBe(new Set(rawCalls.map((b) => (b as { id: string }).id)).size);
  });

  it("puts each message's first line's timestamp on it in ms, with the session's id, cwd and version", () => {
    const byUuid = new Map(main.map((l) => [l.uuid, l]));
    imported.messages.forEach((message, i) => {
      expect(message.timestamp).toBe(Date.parse(byUuid.get(imported.entryIds[i] as string)?.timestamp));
    });
    const boundaries = raw.filter((l) => l.type === "system" && l.subtype === "compact_boundary").length;
    expect(imported).toMatchObject({ sessionId: first?.sessionId, cwd: first?.cwd, version: first?.version, compactions: boundaries });
    expect(imported.skipped).toEqual([]);
  });
});

describe("importClaudeCode compactions", () => {
  const lines = rawLines("claude-code-log-37f83ec9.jsonl");
  const main = mainLines(lines);
  const cutAt = lines.indexOf(main[120] as Raw);
  const summaryLine = (uuid: string) => ({
    type: "user",
    uuid,
    parentUuid: "boundary",
    isSidechain: false,
    isCompactSummary: true,
    timestamp: "2025-07-01T10:00:00.000Z",
    message: { role: "user", content: "This session is being continued from a previous conversation. Summary: ..." },
  });
  const boundary = (metadata: Record<string, unknown> = {}) => ({
    type: "system",
    subtype: "compact_boundary",
    uuid: "boundary",
    parentUuid: null,
    content: "Conversation compacted",
    timestamp: "2025-07-01T10:00:00.000Z",
    compactMetadata: { trigger: "manual", preTokens: 90000, ...metadata },
  });

  it("starts the context at the summary after a compact_boundary line", () => {
    const path = variant([...lines.slice(0, cutAt), boundary(), summaryLine("s1"), ...lines.slice(cutAt)], "boundary.jsonl");
    const imported = importClaudeCode(path);
    expect(imported.compactions).toBe(1);
    expect(imported.entryIds[0]).toBe("s1");
    expect(imported.messages[0]?.isCompactSummary).toBe(true);
    expect(adapter.readFacts(imported.messages[0]!).kind).toBe("summary");
    expect(imported.entryIds.slice(1, 3)).toEqual([main[120]?.uuid, main[121]?.uuid]);
  });

  it("treats a summary line without a boundary line (older versions) as the boundary", () => {
    const imported = importClaudeCode(variant([...lines.slice(0, cutAt), summaryLine("s1"), ...lines.slice(cutAt)], "summary-only.jsonl"));
    expect(imported.compactions).toBe(1);
    expect(imported.entryIds.slice(0, 2)).toEqual(["s1", main[120]?.uuid]);
  });

  it("keeps only what follows the latest of several compactions", () => {
    const second = lines.indexOf(main[200] as Raw);
    const path = variant(
      [...lines.slice(0, cutAt), boundary(), summaryLine("s1"), ...lines.slice(cutAt, second), boundary(), summaryLine("s2"), ...lines.slice(second)],
      "two.jsonl",
    );
    const imported = importClaudeCode(path);
    expect(imported.compactions).toBe(2);
    expect(imported.entryIds.slice(0, 2)).toEqual(["s2", main[200]?.uuid]);
  });

  it("keeps the messages a boundary preserves, after the summary", () => {
    const kept = [main[118]?.uuid, main[119]?.uuid];
    const path = variant([...lines.slice(0, cutAt), boundary({ preservedMessages: { uuids: kept } }), summaryLine("s1"), ...lines.slice(cutAt)], "kept.jsonl");
    expect(importClaudeCode(path).entryIds.slice(0, 4)).toEqual(["s1", ...kept, main[120]?.uuid]);
  });
});

describe("importClaudeCode on damaged files", () => {
  const lines = readFileSync(join(REAL, "claude-code-viewer-fe5e1c67.jsonl"), "utf8").split("\n").filter((l) => l !== "");

  it("fails on a corrupt line, naming the file and line", () => {
    const path = variant([...lines.slice(0, 5), "{not json", ...lines.slice(5)], "corrupt.jsonl");
    let error: unknown;
    try {
      importClaudeCode(path);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TranscriptError);
    expect((error as TranscriptError).code).toBe(ErrorCodes.TRANSCRIPT_CORRUPT);
    expect((error as TranscriptError).message).toMatch(new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:6: `));
  });

  it("skips and reports corrupt lines with skipCorrupt, reading the rest as before", () => {
    const path = variant([...lines.slice(0, 5), "{not json", ...lines.slice(5)], "corrupt-skip.jsonl");
    const imported = importClaudeCode(path, { skipCorrupt: true });
    expect(imported.skipped.map((s) => s.line)).toEqual([6]);
    expect(imported.messages).toEqual(importClaudeCode(join(REAL, "claude-code-viewer-fe5e1c67.jsonl")).messages);
  });

  it("reports an unterminated last line that is not JSON as an incomplete tail", () => {
    const path = join(dir, "tail.jsonl");
    writeFileSync(path, `${lines.join("\n")}\n{"type":"user","mess`);
    const imported = importClaudeCode(path);
    expect(imported.incompleteTail).toBe(true);
    expect(imported.skipped.map((s) => s.line)).toEqual([lines.length + 1]);
  });
});

/** The real transcripts with real compactions: the lines before each boundary stay in the file. */
const COMPACTED_FIXTURES = ["claude-code-entire-review-847ff7d2.jsonl", "claude-code-entire-attribution-6113e919.jsonl", "claude-code-entire-openclaw-ca8cc13b.jsonl"];

/** Every line of a file with its 1-based line number (blank lines keep their number). */
const numberedLines = (path: string): { line: number; value: Raw }[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .map((text, i) => ({ line: i + 1, text }))
    .filter(({ text }) => text.trim() !== "")
    .map(({ line, text }) => ({ line, value: JSON.parse(text) as Raw }));

describe.each(COMPACTED_FIXTURES)("importClaudeCodeHistory on a copy of %s", (file) => {
  const path = join(dir, file);
  copyFileSync(join(REAL, file), path);
  const raw = numberedLines(path);
  const main = raw.filter(({ value }) => (value.type === "user" || value.type === "assistant") && value.isSidechain !== true);
  const boundaries = raw.filter(({ value }) => value.type === "system" && value.subtype === "compact_boundary");
  const summaries = main.filter(({ value }) => value.isCompactSummary === true);
  const history = importClaudeCodeHistory(path);

  it("holds every main-context message of the file, before and after each boundary, one per response, and no summary", () => {
    const responses = new Set(main.filter(({ value }) => value.type === "assistant").map(({ value }) => value.message.id));
    const users = main.filter(({ value }) => value.type === "user" && value.isCompactSummary !== true);
    expect(boundaries.length).toBeGreaterThan(0);
    expect(history.messages).toHaveLength(users.length + responses.size);
    expect(history.messages.filter((message) => message.isCompactSummary === true)).toEqual([]);
    const summaryUuids = new Set(summaries.map(({ value }) => value.uuid));
    expect(history.entryIds.filter((id) => summaryUuids.has(id))).toEqual([]);
    expect(history.startsAt).toBeNull();
    expect(history.skipped).toEqual([]);
  });

  it("records each compaction at its boundary with its summary, trigger and preTokens, between the messages around it", () => {
    expect(history.compactions.map(({ messagesBefore: _, ...compaction }) => compaction)).toEqual(
      boundaries.map(({ line, value }) => ({ line, summaryLine: line + 1, trigger: value.compactMetadata.trigger, preTokens: value.compactMetadata.preTokens })),
    );
    for (const compaction of history.compactions) {
      const boundary = raw.find(({ line }) => line === compaction.line)?.value;
      // The last message before it is the line its logicalParentUuid names; the first after it follows its summary.
      expect(history.entryIds[compaction.messagesBefore - 1]).toBe(boundary?.logicalParentUuid);
      expect(history.lines[compaction.messagesBefore]).toBeGreaterThan(compaction.summaryLine as number);
    }
  });

  it("ends with what importClaudeCode reads after the latest compaction (its summary first), which it still reads as before", () => {
    const now = importClaudeCode(path);
    const latest = history.compactions.at(-1);
    expect(now.compactions).toBe(boundaries.length);
    expect(now.entryIds[0]).toBe(summaries.at(-1)?.value.uuid);
    expect(now.messages[0]?.isCompactSummary).toBe(true);
    expect(history.entryIds.slice(latest?.messagesBefore)).toEqual(now.entryIds.slice(1));
    expect(history.messages.length).toBeGreaterThan(now.messages.length);
  });

  it("keeps every tool call of the file and leaves no tool result without an earlier call", () => {
    const issued = new Set<string>();
    const orphans: string[] = [];
    for (const facts of history.messages.map((m) => adapter.readFacts(m))) {
      facts.toolResultIds.forEach((id) => issued.has(id) || orphans.push(id));
      facts.toolCalls.forEach((call) => issued.add(call.id));
    }
    expect(orphans).toEqual([]);
    const calls = main.flatMap(({ value }) => blocks(value.message.content)).filter((b) => b.type === "tool_use");
    expect(issued.size).toBe(new Set(calls.map((b) => (b as { id: string }).id)).size);
  });
});

describe("importClaudeCodeHistory on a generated transcript", () => {
  const at = (n: number) => `2025-07-01T10:00:${String(n).padStart(2, "0")}.000Z`;
  const user = (uuid: string, parentUuid: string | null, content: string, extra: Record<string, unknown> = {}) => ({
    type: "user",
    uuid,
    parentUuid,
    isSidechain: false,
    sessionId: "generated",
    timestamp: at(0),
    message: { role: "user", content },
    ...extra,
  });
  const assistant = (uuid: string, parentUuid: string, text: string) => ({
    type: "assistant",
    uuid,
    parentUuid,
    isSidechain: false,
    timestamp: at(1),
    message: { id: `msg_${uuid}`, role: "assistant", content: [{ type: "text", text }] },
  });
  const boundary = (uuid: string, logicalParentUuid: string | undefined) => ({
    type: "system",
    subtype: "compact_boundary",
    uuid,
    parentUuid: null,
    ...(logicalParentUuid === undefined ? {} : { logicalParentUuid }),
    content: "Conversation compacted",
    timestamp: at(2),
    compactMetadata: { trigger: "manual", preTokens: 1234 },
  });
  const summary = (uuid: string, parentUuid: string) => user(uuid, parentUuid, "This session is being continued from a previous conversation. Summary: ...", { isCompactSummary: true });
  const before = [user("u1", null, "first question"), assistant("a1", "u1", "first answer"), user("u2", "a1", "second question"), assistant("a2", "u2", "second answer")];
  const after = [user("u3", "s1", "third question"), assistant("a3", "u3", "third answer")];
  const withLink = (link: string | undefined, name: string) => variant([...before, boundary("b1", link), summary("s1", "b1"), ...after], name);

  it("joins a boundary to the line its logicalParentUuid names: every message, the summary left out", () => {
    const history = importClaudeCodeHistory(withLink("a2", "joined.jsonl"));
    expect(history.entryIds).toEqual(["u1", "a1", "u2", "a2", "u3", "a3"]);
    expect(history.compactions).toEqual([{ line: 5, summaryLine: 6, trigger: "manual", preTokens: 1234, messagesBefore: 4 }]);
    expect(history.startsAt).toBeNull();
  });

  it.each([
    ["names no line of the file", "missing", /logicalParentUuid "missing", which no line of the file has/],
    ["has no link at all", undefined, /has no logicalParentUuid/],
    ["names a line after it", "u3", /line 7, which comes after it/],
  ])("fails on a boundary that %s, naming the file, the line and how to read past it", (_what, link, reason) => {
    const path = withLink(link, `broken-${String(link)}.jsonl`);
    let error: unknown;
    try {
      importClaudeCodeHistory(path);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TranscriptError);
    expect((error as TranscriptError).code).toBe(ErrorCodes.TRANSCRIPT_INVALID);
    expect((error as TranscriptError).line).toBe(5);
    expect((error as TranscriptError).message).toContain(`${path}:5: the compaction boundary `);
    expect((error as TranscriptError).message).toMatch(reason);
    expect((error as TranscriptError).message).toContain("the 4 messages before it cannot be joined");
    expect((error as TranscriptError).hint).toMatch(/skipCorrupt/);
  });

  it("fails on a boundary joined to a subagent line or to a line from before the previous compaction", () => {
    const sidechain = { ...assistant("side", "u2", "a subagent's answer"), isSidechain: true };
    expect(() => importClaudeCodeHistory(variant([...before, sidechain, boundary("b1", "side"), summary("s1", "b1"), ...after], "sidechain.jsonl"))).toThrow(
      /line 5, a subagent \(sidechain\) line/,
    );
    const twice = [...before, boundary("b1", "a2"), summary("s1", "b1"), ...after, boundary("b2", "a1"), summary("s2", "b2")];
    expect(() => importClaudeCodeHistory(variant(twice, "before-previous.jsonl"))).toThrow(/line 2, from before the previous compaction \(line 5\)/);
  });

  it("with skipCorrupt starts the history at a boundary that does not join, its summary first, and says what it left out", () => {
    const history = importClaudeCodeHistory(withLink("missing", "broken-skip.jsonl"), { skipCorrupt: true });
    expect(history.entryIds).toEqual(["s1", "u3", "a3"]);
    expect(history.messages[0]?.isCompactSummary).toBe(true);
    expect(history.compactions).toEqual([]);
    expect(history.startsAt).toMatchObject({ line: 5, leftOut: true });
    expect(history.startsAt?.reason).toMatch(/the 4 messages before it were left out/);
  });

  it("starts the history at a compaction the file starts with (a continued conversation), its summary first, without failing", () => {
    const history = importClaudeCodeHistory(variant([boundary("b1", "elsewhere"), summary("s1", "b1"), ...after], "continued.jsonl"));
    expect(history.entryIds).toEqual(["s1", "u3", "a3"]);
    expect(history.startsAt).toMatchObject({ line: 1, leftOut: false });
    expect(history.startsAt?.reason).toMatch(/the file starts at a compaction/);
  });

  it("leaves out a summary line without a boundary (older versions) and records it as a compaction", () => {
    const history = importClaudeCodeHistory(variant([...before, summary("s1", "a2"), ...after], "summary-only.jsonl"));
    expect(history.entryIds).toEqual(["u1", "a1", "u2", "a2", "u3", "a3"]);
    expect(history.compactions).toEqual([{ line: 5, summaryLine: 5, trigger: null, preTokens: null, messagesBefore: 4 }]);
  });
});
