/** core's planPiCompaction on results of real compactions of a real pi branch. */
import { createCompactor, type PiMessage } from "@compaction/core";
import { planPiCompaction } from "@compaction/transcript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyFixture, fixtureBranch, type SessionDir } from "./test-support/pi-session.js";

let session: SessionDir;
let messages: PiMessage[];
let entryIds: string[];

beforeAll(() => {
  session = copyFixture();
  ({ messages, entryIds } = fixtureBranch(session));
});
afterAll(() => session.remove());

async function compactWith(preset: string, input: { contextWindow: number; trigger?: "manual" | "auto"; messages?: PiMessage[] }) {
  session.config({ preset, tokenizer: { counter: "estimate" } });
  const compactor = await createCompactor<PiMessage>({ cwd: session.dir, adapter: "pi" });
  try {
    return await compactor.compact({ messages: input.messages ?? messages, contextWindow: input.contextWindow, trigger: input.trigger ?? "manual" });
  } finally {
    compactor.dispose();
  }
}

describe("planPiCompaction on the real session", () => {
  it("keeps from the entry of the cut's first kept message, with the summary, tokensBefore and the event as details", async () => {
    const result = await compactWith("safeguard", { contextWindow: 200_000 });
    const plan = planPiCompaction(result, entryIds);
    if (!plan.ok) throw new Error(plan.reason);
    const cut = result.cut!;
    expect(plan.compaction.firstKeptEntryId).toBe(entryIds[cut.firstKeptIndex]);
    expect(plan.compaction.summary).toBe(result.summary);
    expect(plan.compaction.tokensBefore).toBe(result.tokensBefore);
    expect(plan.compaction.details).toEqual({ ...result.event, boundaryMessageId: entryIds[cut.firstKeptIndex] });
  });

  it("has no entry for a run that compacted nothing, and says why", async () => {
    const result = await compactWith("rolling", { contextWindow: 1_000_000 });
    expect(result.status).toBe("noop");
    const plan = planPiCompaction(result, entryIds);
    expect(plan.ok).toBe(false);
    if (!plan.ok) expect(plan.reason).toBe(`Nothing was compacted (noop): ${result.reason!.replace(/\.$/, "")}.`);
  });

  it("refuses a compaction that keeps pinned messages from before its cut", async () => {
    const pinned = messages.map((m, i) => (i === 0 ? ({ ...m, pinned: true } as PiMessage) : m));
    const result = await compactWith("safeguard", { contextWindow: 200_000, messages: pinned });
    expect(result.cut?.preservedIndices).toContain(0);
    const plan = planPiCompaction(result, entryIds);
    expect(plan.ok).toBe(false);
    if (!plan.ok) expect(plan.reason).toMatch(/keeps \d+ message\(s\) from before its cut .*cannot record/);
  });

  it("refuses a run that only pruned tool outputs and chose no cut", async () => {
    const result = await compactWith("layered", { contextWindow: 200_000, trigger: "auto" });
    expect([result.status, result.cut, result.event?.layer]).toEqual(["compacted", null, "prune"]);
    const plan = planPiCompaction(result, entryIds);
    expect(plan.ok).toBe(false);
    if (!plan.ok) expect(plan.reason).toMatch(/chose no cut/);
  });

  it("refuses a cut that points past the entries it was given", async () => {
    const result = await compactWith("safeguard", { contextWindow: 200_000 });
    const plan = planPiCompaction(result, entryIds.slice(0, result.cut!.firstKeptIndex));
    expect(plan.ok).toBe(false);
    if (!plan.ok) expect(plan.reason).toMatch(/keeps from message \d+, but the branch has only \d+ messages/);
  });
});
