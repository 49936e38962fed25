import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Compactor, createEstimateCounter, createPiAdapter, type PiMessage } from "@compaction/core";
import { keepRecent, words } from "@compaction/core/testing";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import { afterAll, describe, expect, it } from "vitest";
import { appendPiCompaction, compactPiBranch } from "./compact-pi-session.js";
import { loadBoundary } from "./boundary-load.js";
import { createSession } from "./session-file.js";
import type { NewEntry } from "./new-entries.js";

const dir = mkdtempSync(join(tmpdir(), "compaction-pi-session-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const message = (role: "user" | "assistant", text: string): NewEntry => ({
  type: "message",
  message: role === "user" ? { role, content: text, timestamp: 1 } : { role, content: [{ type: "text", text }], stopReason: "stop", timestamp: 2 },
});

async function session(turns: number): Promise<string> {
  const path = join(dir, `s${Math.random().toString(36).slice(2)}.jsonl`);
  const entries: NewEntry[] = [];
  for (let t = 0; t < turns; t++) entries.push(message("user", `request ${t} ${words(60)}`), message("assistant", `answer ${t} ${words(60)}`));
  await createSession(path, { cwd: "/project" }, entries);
  return path;
}

function compactor(plugins = [keepRecent(300)]): Compactor<PiMessage> {
  return new Compactor<PiMessage>({ summarizer: createExtractiveSummarizer(), adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), contextWindow: 100_000, plugins });
}

describe("compactPiBranch + appendPiCompaction", () => {
  it("compacts suffix-only, plans pi's entry, and appends it so the boundary load starts with the summary", async () => {
    const path = await session(12);
    const branch = loadBoundary(path);
    const { result, plan } = await compactPiBranch(compactor(), branch, { trigger: "manual" });
    expect(result.status).toBe("compacted");
    if (!plan.ok) throw new Error(plan.reason);
    expect(plan.compaction.firstKeptEntryId).toBe(branch.entryIds[result.cut?.firstKeptIndex ?? -1]);
    const entry = await appendPiCompaction(path, plan.compaction);
    expect(entry).toMatchObject({ type: "compaction", summary: plan.compaction.summary, firstKeptEntryId: plan.compaction.firstKeptEntryId });

    const reloaded = loadBoundary(path);
    expect(reloaded.messages[0]).toMatchObject({ role: "compactionSummary", summary: plan.compaction.summary });
    expect(reloaded.messages.slice(1)).toEqual(result.messages.slice(1));
  });

  it("says why nothing can be written when the run did not compact, and the file is unchanged", async () => {
    const path = await session(2);
    const before = readFileSync(path, "utf8");
    const { result, plan } = await compactPiBranch(compactor([]), loadBoundary(path));
    expect(result.status).toBe("noop");
    expect(plan.ok).toBe(false);
    expect(readFileSync(path, "utf8")).toBe(before);
  });
});
