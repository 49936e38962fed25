/**
 * What the transcript write side produces, opened by pi-coding-agent itself: appended entries,
 * compactions, repaired tails, upgraded files and branches must give pi the same context (and
 * the same branch) as our reader gives.
 */
import { appendFileSync, copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type CompactionResult, type PiMessage, createCompactionEvent } from "@compaction/core";
import {
  type NewEntry,
  appendCompaction,
  appendEntries,
  branchSession,
  buildContext,
  createSession,
  readSession,
  upgradeSession,
} from "@compaction/transcript";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";

const PI_LARGE = fileURLToPath(new URL("../../shared/fixtures/real/pi-large-session.jsonl", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "transcript-write-pi-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let count = 0;
const newPath = () => join(dir, `s${++count}.jsonl`);

const user = (text: string): NewEntry => ({ type: "message", message: { role: "user", content: text, timestamp: 1_767_225_600_000 } });
const assistant = (text: string): NewEntry => ({
  type: "message",
  message: {
    role: "assistant",
    content: [{ type: "text", text }],
    stopReason: "stop",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    usage: { input: 100, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 120 },
    timestamp: 1_767_225_601_000,
  },
});

/** pi's context and leaf after opening the file (SessionManager.open reads; it rewrites only files it migrates). */
function pi(path: string): { messages: unknown[]; leafId: string | null; branch: string[] } {
  const manager = SessionManager.open(path, dir);
  return {
    messages: manager.buildSessionContext().messages,
    leafId: manager.getLeafId(),
    branch: manager.getBranch().map((entry) => entry.id),
  };
}

function ours(path: string, skipCorrupt = false): { messages: unknown[]; leafId: string | null; branch: string[] } {
  const context = buildContext(readSession(path, { skipCorrupt }).entries);
  return { messages: context.messages, leafId: context.leafId, branch: context.branch.map((entry) => entry.id) };
}

function compacted(summary: string): CompactionResult<PiMessage> {
  const event = createCompactionEvent({ summary, messagesCompacted: 2, tokensBeforeCompaction: 900, tokensAfterCompaction: 200, trigger: "auto", strategy: "safeguard" });
  return { status: "compacted", messages: [], summary, cut: null, event, tokensBefore: 900, tokensAfter: 200, warnings: [], reason: null, error: null };
}

describe("pi-coding-agent opens what the write side writes", () => {
  it("sees appended entries linked to the leaf and builds the same context", async () => {
    const path = newPath();
    await createSession(path, { cwd: "/project" }, [user("one"), assistant("two")]);
    const written = await appendEntries(path, [user("three"), assistant("four")]);
    const seen = pi(path);
    expect(seen).toStrictEqual(ours(path));
    expect(seen.leafId).toBe(written[1]?.id);
    expect(seen.messages).toHaveLength(4);
  });

  it("applies an appended compaction exactly as our reader does, with the CompactionEvent in details", async () => {
    const path = newPath();
    const created = await createSession(path, { cwd: "/project" }, [user("one"), assistant("two"), user("three"), assistant("four")]);
    const result = compacted("The user said one, the assistant two.");
    const entry = await appendCompaction(path, result, { firstKeptEntryId: created.entries[2]?.id as string });
    await appendEntries(path, [user("five")]);
    const seen = pi(path);
    expect(seen).toStrictEqual(ours(path));
    expect(seen.messages).toHaveLength(4);
    expect(seen.messages[0]).toMatchObject({ role: "compactionSummary", summary: "The user said one, the assistant two.", tokensBefore: 900 });
    const stored = SessionManager.open(path, dir).getEntry(entry.id) as { details?: unknown };
    expect(stored.details).toStrictEqual(result.event);
  });

  it("builds the same context as pi after the next append set aside a line a crash cut short", async () => {
    const path = newPath();
    await createSession(path, { cwd: "/project" }, [user("one"), assistant("two")]);
    appendFileSync(path, '{"type":"message","id":"0badc0de","parentId":"');
    await appendEntries(path, [user("three")]);
    expect(pi(path)).toStrictEqual(ours(path));
    expect(ours(path).messages).toHaveLength(3);
  });

  it("loads an upgraded version 1 file as it is, with the context pi builds from the original", async () => {
    const original = newPath();
    copyFileSync(PI_LARGE, original);
    const expected = SessionManager.open(original, dir).buildSessionContext().messages;
    const path = newPath();
    copyFileSync(PI_LARGE, path);
    await upgradeSession(path);
    const upgraded = readFileSync(path);
    expect(pi(path).messages).toStrictEqual(expected);
    expect(readFileSync(path).equals(upgraded)).toBe(true);
  });

  it("branches to the same entries as pi's createBranchedSession", async () => {
    const path = newPath();
    const created = await createSession(path, { cwd: "/project" }, [user("one"), assistant("two"), user("three"), assistant("four")]);
    await appendEntries(path, [user("other way"), assistant("five")], { parentId: created.entries[1]?.id as string });
    const at = created.entries[3]?.id as string;

    const piSource = newPath();
    copyFileSync(path, piSource);
    const manager = SessionManager.open(piSource, dir);
    const piFile = manager.createBranchedSession(at) as string;
    const branched = await branchSession(path, { atEntryId: at });

    const entries = (file: string) => readSession(file).entries;
    expect(entries(branched.path)).toStrictEqual(entries(piFile));
    expect(readSession(branched.path).header).toMatchObject({ cwd: "/project", parentSession: path, version: 3 });
    expect(pi(branched.path)).toStrictEqual(ours(branched.path));
  });
});
