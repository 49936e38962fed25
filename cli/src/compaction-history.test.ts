import type { SessionEntry } from "@compaction/transcript";
import { describe, expect, it } from "vitest";
import { compactionHistory, compactionRecord, degradationRisk, riskAdvice } from "./compaction-history.js";

const entry = (id: string, type: string, extra: Record<string, unknown> = {}): SessionEntry =>
  ({ id, parentId: null, timestamp: `2025-01-0${id}T00:00:00.000Z`, type, ...extra }) as unknown as SessionEntry;

describe("compaction history", () => {
  it("counts the compaction entries of a branch and returns the latest", () => {
    const branch = [entry("1", "message"), entry("2", "compaction"), entry("3", "message"), entry("4", "compaction"), entry("5", "label")];
    const history = compactionHistory(branch);
    expect(history.count).toBe(2);
    expect(history.last?.id).toBe("4");
  });

  it("rates the risk low below 3 compactions, medium from 3, high from 5", () => {
    expect([0, 2, 3, 4, 5, 9].map(degradationRisk)).toEqual(["low", "low", "medium", "medium", "high", "high"]);
  });

  it("advises exporting and starting fresh at high risk, and nothing at low risk", () => {
    expect(riskAdvice("high")).toMatch(/Export .* start a fresh session/);
    expect(riskAdvice("low")).toBeNull();
  });

  it("reads a compaction pi itself wrote as strategy pi with its tokensBefore and null for what it does not record", () => {
    const piEntry = entry("6", "compaction", { summary: "s", firstKeptEntryId: "5", tokensBefore: 1234, details: { readFiles: [], modifiedFiles: [] } });
    expect(compactionRecord(piEntry as never)).toMatchObject({
      strategy: "pi",
      tokensBefore: 1234,
      tokensAfter: null,
      messagesCompacted: null,
      trigger: null,
      layer: null,
      focus: null,
      warnings: [],
    });
  });
});
