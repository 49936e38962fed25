/**
 * Our transcript reader against pi-coding-agent's own: the same session file must give the same
 * context (messages, model, thinking level) through readSession + buildContext, through
 * loadBoundary, and through pi's parseSessionEntries + migrateSessionEntries + buildSessionContext
 * or SessionManager.open(). pi mutates what it migrates, so it always gets its own parse.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildContext, loadBoundary, readSession } from "@compaction/transcript";
import { buildSession, sessionOps, sessionText } from "../transcript/src/test-support/pi-sessions.js";
import { FIXTURES_DIR, PI_FIXTURES } from "@compaction/fixtures";
import { SessionManager, buildSessionContext, migrateSessionEntries, parseSessionEntries } from "@mariozechner/pi-coding-agent";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";

const dir = mkdtempSync(join(tmpdir(), "transcript-pi-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;
function write(text: string): string {
  const path = join(dir, `session-${++counter}.jsonl`);
  writeFileSync(path, text);
  return path;
}

interface PiView {
  messages: unknown[];
  model: unknown;
  thinkingLevel: string;
}

/** pi's context for a file's text, from its exported functions (on its own parse of the text). */
function piContext(text: string, leafId?: string): PiView {
  const entries = parseSessionEntries(text);
  migrateSessionEntries(entries);
  const { messages, model, thinkingLevel } = buildSessionContext(
    entries.filter((entry) => entry.type !== "session") as Parameters<typeof buildSessionContext>[0],
    leafId,
  );
  return { messages, model, thinkingLevel };
}

function ours(path: string, leafId?: string): { full: PiView; fast: PiView } {
  const options = leafId === undefined ? {} : { leafId };
  const full = buildContext(readSession(path).entries, options);
  const fast = loadBoundary(path, options);
  return {
    full: { messages: full.messages, model: full.model, thinkingLevel: full.thinkingLevel },
    fast: { messages: fast.messages, model: fast.model, thinkingLevel: fast.thinkingLevel },
  };
}

describe("the context of the real pi session files equals pi's", () => {
  it.each(PI_FIXTURES)("%s through pi's exported functions", (name) => {
    const path = join(FIXTURES_DIR, name);
    const pi = piContext(readFileSync(path, "utf8"));
    const { full, fast } = ours(path);
    expect(full).toStrictEqual(pi);
    expect(fast).toStrictEqual(pi);
  });

  it.each(PI_FIXTURES)("%s through SessionManager.open() on a copy (pi rewrites old versions on open)", (name) => {
    const original = join(FIXTURES_DIR, name);
    const copy = join(dir, `copy-${name}`);
    copyFileSync(original, copy);
    const before = readFileSync(copy, "utf8");
    const { full } = ours(copy);
    expect(readFileSync(copy, "utf8")).toBe(before); // reading with ours left it as it was
    const pi = SessionManager.open(copy, dir).buildSessionContext();
    expect(full).toStrictEqual({ messages: pi.messages, model: pi.model, thinkingLevel: pi.thinkingLevel });
  });

  it.each(PI_FIXTURES)("%s rewritten as version 3 (pi's key order) through the fast path", (name) => {
    const parsed = readSession(join(FIXTURES_DIR, name));
    const lines = [
      JSON.stringify({ ...parsed.header, version: 3 }),
      ...parsed.entries.map(({ type, id, parentId, ...rest }) => JSON.stringify({ type, id, parentId, ...rest })),
    ];
    const text = sessionText(lines);
    const path = write(text);
    const fast = loadBoundary(path, { chunkSize: 64 * 1024 });
    expect(fast.fullRead).toBe(false);
    expect({ messages: fast.messages, model: fast.model, thinkingLevel: fast.thinkingLevel }).toStrictEqual(piContext(text));
  });

  it("includes the latest real compaction's summary first in pi-before-compaction.jsonl", () => {
    const { full } = ours(join(FIXTURES_DIR, "pi-before-compaction.jsonl"));
    expect(full.messages[0]).toMatchObject({ role: "compactionSummary", tokensBefore: 185014 });
  });
});

describe("the context of generated sessions equals pi's", () => {
  it("for version 3 trees with branches and several compactions, for any leaf", () => {
    fc.assert(
      fc.property(sessionOps, fc.option(fc.nat(), { nil: undefined }), (ops, leafPick) => {
        const session = buildSession(ops, 3);
        const text = sessionText(session.lines);
        const path = write(text);
        const leafId = leafPick === undefined || session.ids.length === 0 ? undefined : session.ids[leafPick % session.ids.length];
        const pi = piContext(text, leafId);
        const { full, fast } = ours(path, leafId);
        expect(full).toStrictEqual(pi);
        expect(fast).toStrictEqual(pi);
      }),
      { numRuns: 200 },
    );
  });

  it("for version 3 files opened with SessionManager.open()", () => {
    fc.assert(
      fc.property(sessionOps, (ops) => {
        const path = write(sessionText(buildSession(ops, 3).lines));
        const pi = SessionManager.open(path, dir).buildSessionContext();
        expect(ours(path).fast).toStrictEqual({ messages: pi.messages, model: pi.model, thinkingLevel: pi.thinkingLevel });
      }),
      { numRuns: 50 },
    );
  });

  it("for version 1 and 2 files, migrated", () => {
    fc.assert(
      fc.property(sessionOps, fc.constantFrom(1 as const, 2 as const), (ops, version) => {
        const text = sessionText(buildSession(ops, version).lines);
        const path = write(text);
        const pi = piContext(text);
        const { full, fast } = ours(path);
        expect(full).toStrictEqual(pi);
        expect(fast).toStrictEqual(pi);
      }),
      { numRuns: 100 },
    );
  });

  it("for a branched session whose latest compaction keeps entries from before it on the branch", () => {
    const T = "2026-01-01T00:00:01.000Z";
    const user = (id: string, parentId: string | null) =>
      JSON.stringify({ type: "message", id, parentId, timestamp: T, message: { role: "user", content: id, timestamp: 1 } });
    const compaction = (id: string, parentId: string, firstKeptEntryId: string) =>
      JSON.stringify({ type: "compaction", id, parentId, timestamp: T, summary: `sum ${id}`, firstKeptEntryId, tokensBefore: 9 });
    const text = sessionText([
      '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}',
      user("u1", null),
      user("u2", "u1"),
      compaction("c1", "u2", "u2"),
      user("u3", "c1"),
      user("u4", "u3"),
      user("side", "u1"), // another branch
      compaction("c2", "u4", "u3"), // keeps u3, u4 from before it
      user("u5", "c2"),
    ]);
    const path = write(text);
    const pi = piContext(text);
    const { full, fast } = ours(path);
    expect(pi.messages.map((m) => (m as { content?: string; summary?: string }).content ?? (m as { summary: string }).summary)).toEqual([
      "sum c2",
      "u3",
      "u4",
      "u5",
    ]);
    expect(full).toStrictEqual(pi);
    expect(fast).toStrictEqual(pi);
    expect(ours(path, "side").fast).toStrictEqual(piContext(text, "side"));
  });
});
