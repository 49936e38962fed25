/**
 * The extension in pi's real runtime: an AgentSession created with pi's SDK over a copy of a
 * real session, the extension loaded, a `.compactionrc` in the session's working directory, and
 * pi-ai's faux model, which counts every model call.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type CompactionEvent, createCompactor, type PiMessage } from "@compaction/core";
import { isPrunedMarker } from "@compaction/plugin-layered";
import type { CompactionEntry, SessionEntry } from "@mariozechner/pi-coding-agent";
import { afterEach, describe, expect, it } from "vitest";
import { compactionExtension } from "./extension.js";
import { collectReports, copyFixture, createRuntimeSession, type RuntimeSession, type SessionDir } from "./test-support/pi-session.js";

const ESTIMATE = { tokenizer: { counter: "estimate" } };

let session: SessionDir | undefined;
let runtime: RuntimeSession | undefined;
afterEach(() => {
  runtime?.dispose();
  session?.remove();
  runtime = undefined;
  session = undefined;
});

async function start(config: Record<string, unknown>, contextWindow: number) {
  session = copyFixture();
  session.config({ ...ESTIMATE, ...config });
  const reports = collectReports();
  runtime = await createRuntimeSession(session, { contextWindow, extensions: [compactionExtension({ report: reports.report })] });
  const before = runtime.sessions.buildSessionContext().messages;
  return { session, runtime, reports, before };
}

/** The last line of the session file, parsed. */
function lastLineOf(file: string): SessionEntry {
  const lines = readFileSync(file, "utf8").trimEnd().split("\n");
  return JSON.parse(lines[lines.length - 1] as string) as SessionEntry;
}

async function countTokens(dir: string, messages: readonly PiMessage[]): Promise<number> {
  const compactor = await createCompactor<PiMessage>({ cwd: dir, adapter: "pi" });
  try {
    return compactor.tokens.total(messages);
  } finally {
    compactor.dispose();
  }
}

describe("session.compact() with the safeguard preset", () => {
  it("writes our compaction entry to the session file, with the CompactionEvent as details", async () => {
    const { runtime, session } = await start({ preset: "safeguard" }, 200_000);
    const result = await runtime.session.compact();
    const entry = lastLineOf(session.file) as CompactionEntry<CompactionEvent>;
    expect(entry).toMatchObject({ type: "compaction", fromHook: true, summary: result.summary, firstKeptEntryId: result.firstKeptEntryId });
    expect(entry.details).toMatchObject({ type: "compaction", strategy: "safeguard", trigger: "manual", customInstruction: null, warnings: [] });
  });

  // safeguard keeps at most keepRecentTokens (20,000) of the newest messages, giving up at most
  // half of them (maxTurnBoundaryLoss) to start at a turn boundary.
  it("leaves pi a context of the summary and the newest messages within safeguard's 20,000 tokens, verbatim", async () => {
    const { runtime, session, before } = await start({ preset: "safeguard" }, 200_000);
    const result = await runtime.session.compact();
    const details = result.details as CompactionEvent;
    const after = runtime.sessions.buildSessionContext().messages as PiMessage[];
    expect(after[0]).toMatchObject({ role: "compactionSummary", summary: result.summary });
    expect(result.summary).toContain("## Last Exchange (Verbatim)");
    const kept = after.slice(1);
    expect(kept).toEqual(before.slice(details.messagesCompacted));
    const keptTokens = await countTokens(session.dir, kept);
    expect(keptTokens).toBeLessThanOrEqual(20_000);
    expect(keptTokens).toBeGreaterThan(10_000);
    expect(runtime.session.messages).toEqual(after);
  });

  it("passes /compact <focus> through as the summary's focus and the event's customInstruction", async () => {
    const { runtime } = await start({ preset: "safeguard" }, 200_000);
    const result = await runtime.session.compact("the theme selector port");
    expect((result.details as CompactionEvent).customInstruction).toBe("the theme selector port");
    expect(result.summary).toContain("the theme selector port");
  });

  it("makes no model call", async () => {
    const { runtime } = await start({ preset: "safeguard" }, 200_000);
    await runtime.session.compact("the theme selector port");
    expect(runtime.faux.state.callCount).toBe(0);
  });
});

describe("session.compact() with the rolling preset", () => {
  it("evicts the oldest messages behind a note naming memory_search, which the extension gave the agent", async () => {
    const { runtime, reports, before } = await start({ preset: "rolling" }, 120_000);
    const result = await runtime.session.compact();
    const details = result.details as CompactionEvent;
    const after = runtime.sessions.buildSessionContext().messages;
    expect(after[0]).toMatchObject({ role: "compactionSummary", summary: result.summary });
    expect(after.slice(1)).toEqual(before.slice(details.messagesCompacted));
    expect(details.strategy).toBe("rolling");
    expect(details.layer).toBe("evict");
    expect(result.summary).toMatch(/^\[Context rolled: \d+ messages evicted \(\d+ tokens\)\. Full transcript available via memory_search\./);
    expect(runtime.session.getActiveToolNames()).toContain("memory_search");
    expect(details.tokensAfterCompaction).toBeLessThanOrEqual(0.8 * 120_000);
    expect(reports.of("warning").some((w) => /fell back to a safeguard summary/.test(w))).toBe(false);
  });

  it("makes no model call", async () => {
    const { runtime } = await start({ preset: "rolling" }, 120_000);
    await runtime.session.compact();
    expect(runtime.faux.state.callCount).toBe(0);
  });
});

describe("session.compact() when the preset has nothing to compact", () => {
  it("cancels, writes nothing, and makes no model call", async () => {
    const { runtime, session, reports } = await start({ preset: "rolling" }, 1_000_000);
    const bytes = readFileSync(session.file);
    await expect(runtime.session.compact()).rejects.toThrow("Compaction cancelled");
    expect(readFileSync(session.file).equals(bytes)).toBe(true);
    expect(runtime.faux.state.callCount).toBe(0);
    expect(reports.of("warning")[0]).toMatch(/Nothing was compacted \(noop\)/);
  });
});

describe("the context event, with the extension loaded from its file as pi loads extensions", () => {
  const extensionFile = fileURLToPath(new URL("./index.ts", import.meta.url));

  it("sends old tool outputs as markers and leaves the session file as it was", async () => {
    session = copyFixture();
    session.config(ESTIMATE);
    runtime = await createRuntimeSession(session, { contextWindow: 150_000, extensionPaths: [extensionFile] });
    const bytes = readFileSync(session.file);
    await runtime.session.prompt("What did we change in the theme loader?");

    expect(runtime.faux.state.callCount).toBe(1);
    const sent = runtime.requests[0]?.messages ?? [];
    const outputs = sent.filter((m) => m.role === "toolResult");
    const markers = outputs.filter((m) => m.content.some((block) => block.type === "text" && isPrunedMarker(block.text)));
    expect(markers.length).toBeGreaterThan(0);
    expect(markers.length).toBeLessThan(outputs.length);

    const now = readFileSync(session.file);
    expect(now.subarray(0, bytes.length).equals(bytes)).toBe(true); // only appended to: the prompt and the reply
    expect(now.toString("utf8")).not.toContain("[pruned tool output:");
  });
});
