import { createPiAdapter, type PiMessage } from "@compaction/core";
import { describe, expect, it } from "vitest";
import { signature, TokenMemo } from "./token-memo.js";

const adapter = createPiAdapter();
const facts = (message: PiMessage) => adapter.readFacts(message);
const toolResult = (text: string, toolCallId = "call_1"): PiMessage =>
  ({ role: "toolResult", toolCallId, toolName: "bash", content: [{ type: "text", text }], isError: false, timestamp: 1_763_681_581_544 }) as PiMessage;

describe("TokenMemo", () => {
  it("counts a message once across deep copies of it", () => {
    const memo = new TokenMemo();
    let counted = 0;
    const count = () => {
      counted += 1;
      return 7;
    };
    const message = toolResult("npm test\nall 12 tests passed");
    expect(memo.message(facts(structuredClone(message)), count)).toBe(7);
    expect(memo.message(facts(structuredClone(message)), count)).toBe(7);
    expect(counted).toBe(1);
  });

  it("counts a text once", () => {
    const memo = new TokenMemo();
    let counted = 0;
    memo.text("You are a coding agent.", () => ++counted);
    memo.text("You are a coding agent.", () => ++counted);
    expect(counted).toBe(1);
  });
});

describe("signature", () => {
  it.each([
    { case: "another call id", other: toolResult("all 12 tests passed", "call_2") },
    { case: "another length", other: toolResult("all 12 tests passed!") },
    { case: "the same length but another ending", other: toolResult("all 12 tests passeD") },
  ])("tells apart outputs with $case", ({ other }) => {
    expect(signature(facts(other))).not.toBe(signature(facts(toolResult("all 12 tests passed"))));
  });
});
