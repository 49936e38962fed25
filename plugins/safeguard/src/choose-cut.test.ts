import { describe, expect, it } from "vitest";
import { SAFEGUARD_LAYER, chooseCut } from "./choose-cut.js";
import { view } from "./test-support/facts.js";

describe("chooseCut", () => {
  it.each([
    ["everything fits", [["user", 10], ["assistant", 10]], 100, 0.5, undefined],
    ["the allowance ends at a turn start", [["user", 50], ["assistant", 50], ["user", 10], ["assistant", 10]], 20, 0.5, 2],
    [
      "the allowance ends inside a turn: the cut moves to the next turn start when that gives up little",
      [["user", 50], ["assistant", 50], ["assistant", 5], ["user", 10], ["assistant", 10]],
      25,
      0.5,
      3,
    ],
    [
      "the allowance ends inside a turn: the turn is split when moving would give up too much",
      [["user", 50], ["assistant", 20], ["assistant", 20], ["user", 5], ["assistant", 5]],
      50,
      0.5,
      1,
    ],
    [
      "a loss of exactly maxTurnBoundaryLoss still moves the cut",
      [["user", 50], ["assistant", 10], ["user", 5], ["assistant", 5]],
      20,
      0.5,
      2,
    ],
    ["maxTurnBoundaryLoss 0 never moves the cut", [["user", 50], ["assistant", 1], ["user", 10], ["assistant", 10]], 21, 0, 1],
    ["maxTurnBoundaryLoss 1 always moves the cut", [["user", 50], ["assistant", 40], ["user", 1]], 41, 1, 2],
    [
      "the last turn alone is too large: the turn is split at the oldest fitting message",
      [["user", 50], ["assistant", 50], ["user", 40], ["call:a", 10], ["result:a", 10], ["assistant", 10]],
      30,
      1,
      3,
    ],
    ["no message can start the kept part", [["result:a", 10], ["result:b", 10]], 5, 0.5, undefined],
    ["a previous summary at the cut moves to the next turn", [["summary", 50], ["summary", 2], ["user", 10], ["assistant", 10]], 25, 0.5, 2],
  ] as const)("%s", (_name, entries, keepRecentTokens, maxTurnBoundaryLoss, expected) => {
    const cut = chooseCut(view(...entries), { keepRecentTokens, maxTurnBoundaryLoss });
    expect(cut?.firstKeptIndex).toBe(expected);
  });

  it("does not move to a turn boundary that would keep less than minKeptTokens: it splits the turn", () => {
    // The suffix from message 2 keeps 20 tokens; the next turn start gives up 8 (within the loss)
    // but would keep 12, below the least kept part.
    const entries = [["user", 50], ["assistant", 50], ["assistant", 8], ["user", 6], ["assistant", 6]] as const;
    expect(chooseCut(view(...entries), { keepRecentTokens: 25, maxTurnBoundaryLoss: 0.5 })?.firstKeptIndex).toBe(3);
    expect(chooseCut(view(...entries), { keepRecentTokens: 25, maxTurnBoundaryLoss: 0.5, minKeptTokens: 15 })?.firstKeptIndex).toBe(2);
    expect(chooseCut(view(...entries), { keepRecentTokens: 25, maxTurnBoundaryLoss: 0.5, minKeptTokens: 12 })?.firstKeptIndex).toBe(3);
  });

  it("never cuts at a tool result", () => {
    const cut = chooseCut(view(["user", 50], ["call:a", 10], ["result:a", 10], ["assistant", 10]), {
      keepRecentTokens: 25,
      maxTurnBoundaryLoss: 0.5,
    });
    expect(cut?.firstKeptIndex).toBe(3);
  });

  it("labels whole-turn cuts and split cuts with the summarize layer and a reason", () => {
    expect(chooseCut(view(["user", 50], ["user", 5]), { keepRecentTokens: 10, maxTurnBoundaryLoss: 0.5 })).toEqual({
      firstKeptIndex: 1,
      layer: SAFEGUARD_LAYER,
      reason: "kept the newest whole turns",
    });
    expect(chooseCut(view(["user", 50], ["assistant", 5]), { keepRecentTokens: 10, maxTurnBoundaryLoss: 0.5 })).toEqual({
      firstKeptIndex: 1,
      layer: SAFEGUARD_LAYER,
      reason: "the turn is split: its early part is summarised, the rest kept",
    });
  });

  it("keeps the newest valid message when even it exceeds the allowance", () => {
    const cut = chooseCut(view(["user", 50], ["assistant", 50], ["user", 80]), { keepRecentTokens: 10, maxTurnBoundaryLoss: 0.5 });
    expect(cut?.firstKeptIndex).toBe(2);
  });
});
