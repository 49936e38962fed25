import { describe, expect, it } from "vitest";
import { ErrorCodes } from "../errors.js";
import { createPiAdapter, type PiMessage } from "../messages/pi-adapter.js";
import { SHRINK_MARKER_PATTERN } from "../shrink/head-and-tail.js";
import { assistant, toolResult, user, words } from "../testing/pi-messages.js";
import { createEstimateCounter } from "../tokens/estimate-counter.js";
import { Compactor } from "./compactor.js";
import type { CompactionPlugin } from "./plugin.js";

function compactor(plugins: CompactionPlugin[] = [], reserveTokens = 0) {
  return new Compactor<PiMessage>({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), plugins, contextWindow: 4_000, reserveTokens });
}

/** A plugin whose tap replaces every tool output by `[gone]` (a stand-in for layered's pruning). */
const blankOutputs: CompactionPlugin = {
  name: "blank-outputs",
  apply(c) {
    c.hooks.shapeRequest.tap("blank-outputs", (messages, shaping) =>
      messages.map((m) => (shaping.factsOf(m).kind === "toolResult" ? shaping.adapter.replaceToolOutput(m, "[gone]") : m)),
    );
  },
};

function turn(output: string): PiMessage[] {
  return [user("please look"), assistant("", [{ id: "c1" }]), toolResult("c1", output), assistant("done")];
}

describe("Compactor.shapeRequest", () => {
  it("returns the messages themselves when no tap changes them and they fit", () => {
    const messages = turn("small output");
    const shaped = compactor().shapeRequest(messages);
    expect(shaped.messages).toBe(messages);
    expect(shaped).toMatchObject({ fits: true, shapedBy: [], warnings: [], shrunk: [] });
  });

  it("runs the plugins' taps and names the plugins that changed the request, leaving the input as it was", () => {
    const messages = turn("a long output ".repeat(50));
    const copy = structuredClone(messages);
    const shaped = compactor([blankOutputs]).shapeRequest(messages);
    expect(shaped.shapedBy).toEqual(["blank-outputs"]);
    expect(createPiAdapter().readFacts(shaped.messages[2] as PiMessage).text).toBe("[gone]");
    expect(messages).toEqual(copy);
  });

  it("skips the taps with plugins: false", () => {
    const messages = turn("a long output ".repeat(50));
    expect(compactor([blankOutputs]).shapeRequest(messages, { plugins: false }).messages).toBe(messages);
  });

  it("shrinks what the taps left over the budget (window less reserve less system prompt), keeping the request", () => {
    const messages = turn(words(20_000, "log"));
    const shaped = compactor([], 500).shapeRequest(messages, { systemPrompt: "You are terse. ".repeat(100) });
    expect(shaped.budget).toBe(4_000 - 500 - createEstimateCounter().count("You are terse. ".repeat(100)));
    expect(shaped.fits).toBe(true);
    expect(shaped.tokens).toBeLessThanOrEqual(shaped.budget);
    const texts = shaped.messages.map((m) => createPiAdapter().readFacts(m).text);
    expect(texts[0]).toBe("please look");
    expect(texts[2]).toMatch(SHRINK_MARKER_PATTERN);
  });

  it("gives the same request for the same messages, call after call", () => {
    const c = compactor([blankOutputs]);
    const messages = [...turn(words(2_000, "old")), ...turn(words(20_000, "log"))];
    const first = c.shapeRequest(messages, { budget: 1_500 });
    const second = c.shapeRequest(structuredClone(messages), { budget: 1_500 });
    expect(JSON.stringify(second.messages)).toBe(JSON.stringify(first.messages));
  });

  it("skips a tap that throws or returns no array, names it in warnings, and still shapes the request", () => {
    const throwing: CompactionPlugin = {
      name: "broken",
      apply(c) {
        c.hooks.shapeRequest.tap("broken", () => {
          throw new Error("boom");
        });
      },
    };
    const wrongType: CompactionPlugin = {
      name: "wrong-type",
      apply(c) {
        c.hooks.shapeRequest.tap("wrong-type", () => "not messages" as unknown as PiMessage[]);
      },
    };
    const messages = turn(words(20_000, "log"));
    const shaped = compactor([throwing, wrongType, blankOutputs]).shapeRequest(messages);
    expect(shaped.warnings).toEqual([
      expect.stringMatching(/^\[broken\] shapeRequest failed: boom\./),
      expect.stringMatching(/^\[wrong-type\] shapeRequest returned .*expected the messages to send/),
    ]);
    expect(shaped.shapedBy).toEqual(["blank-outputs"]);
    expect(shaped.fits).toBe(true);
  });

  it("refuses a missing context window with COMPACTION_INPUT_INVALID", () => {
    const c = new Compactor<PiMessage>({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter() });
    expect(() => c.shapeRequest(turn("x"))).toThrow(expect.objectContaining({ code: ErrorCodes.INPUT_INVALID }));
  });
});
