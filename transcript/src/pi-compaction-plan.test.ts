import { describe, expect, it } from "vitest";
import type { CompactionEvent, CompactionResult } from "@compaction/core";
import { planPiCompaction } from "./pi-compaction-plan.js";

const EVENT = { id: "e1", type: "compaction", boundaryMessageId: null, strategy: "test" } as unknown as CompactionEvent;

function result(fields: Partial<CompactionResult<unknown>>): CompactionResult<unknown> {
  return {
    status: "compacted",
    messages: [],
    summary: "## Goal\n- ship it",
    cut: { firstKeptIndex: 2, preservedIndices: [], compactedIndices: [0, 1] } as never,
    event: EVENT,
    tokensBefore: 1000,
    tokensAfter: 100,
    warnings: [],
    reason: null,
    error: null,
    ...fields,
  } as CompactionResult<unknown>;
}

const IDS = ["a", "b", "c", "d"];

describe("planPiCompaction", () => {
  it("gives pi's entry fields, the first kept entry as the event's boundary", () => {
    expect(planPiCompaction(result({}), IDS)).toEqual({
      ok: true,
      compaction: { summary: "## Goal\n- ship it", firstKeptEntryId: "c", tokensBefore: 1000, details: { ...EVENT, boundaryMessageId: "c" } },
    });
  });

  it.each([
    ["a run that did not compact", result({ status: "noop", reason: "Nothing new to compact." }), /^Nothing was compacted \(noop\): Nothing new to compact\.$/],
    ["a run with no cut (in-place changes only)", result({ cut: null }), /chose no cut/],
    ["a drop with no summary", result({ summary: null }), /without a summary or note/],
    ["messages kept from before the cut", result({ cut: { firstKeptIndex: 2, preservedIndices: [0], compactedIndices: [1] } as never }), /keeps 1 message\(s\) from before its cut/],
    ["a cut past the messages", result({ cut: { firstKeptIndex: 9, preservedIndices: [], compactedIndices: [0] } as never }), /keeps from message 9, but the branch has only 4 messages/],
  ])("refuses %s, saying why, with a hint", (_name, input, reason) => {
    const plan = planPiCompaction(input, IDS);
    expect(plan.ok).toBe(false);
    if (plan.ok) return;
    expect(plan.reason).toMatch(reason);
    expect(plan.hint.length).toBeGreaterThan(0);
  });
});
