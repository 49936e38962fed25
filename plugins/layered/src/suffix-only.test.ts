/** With `suffixOnly` (hosts that record pi's compaction entry), layer 1 is skipped and layers 2 and 3 keep their thresholds. */
import type { Compactor } from "@compaction/core";
import { builders, FORMATS } from "@compaction/core/testing";
import { describe, expect, it } from "vitest";
import { layered, type LayeredRunState, PLUGIN_NAME } from "./layered.js";
import { isPrunedMarker } from "./marker.js";
import { chatTurn, compactorFor, toolTurn, windowFor } from "./test-support/conversation.js";

describe.each(FORMATS)("layered with suffixOnly (%s)", (format) => {
  const b = builders(format);

  /** 55,000 tokens of tool output (enough for layer 1 by every other measure), then chat. */
  function scene() {
    return [...toolTurn(b, "c1", 30000, { command: "npm test" }), ...toolTurn(b, "c2", 25000), ...chatTurn(b, "later", 11000)];
  }

  async function run(ratio: number, suffixOnly: boolean, trigger: "auto" | "manual" = "auto") {
    let state: LayeredRunState | undefined;
    const spy = {
      name: "spy",
      apply: (c: Compactor<any>) => c.hooks.afterCompact.tap("spy", (_result, r) => void (state = r.state.get(PLUGIN_NAME) as LayeredRunState)),
    };
    const c = compactorFor(format, [layered(), spy]);
    const messages = scene();
    const result = await c.compact({ messages, contextWindow: windowFor(c.tokens.total(messages), ratio), trigger, suffixOnly });
    const pruned = result.messages.filter((m) => isPrunedMarker(c.facts.of(m).text)).length;
    return { messages, result, pruned, state: () => state };
  }

  it("is a noop, not a prune-only compaction, for an automatic run between pruneThreshold and summarizeThreshold", async () => {
    const { messages, result } = await run(0.85, true);
    expect(result.status).toBe("noop");
    expect(result.messages).toBe(messages);
    expect(result.event).toBeNull();
    expect(result.reason).toBe(
      "No plugin selected a cut (layered: the context is at 85% of the window, not above summarizeThreshold 88%; layer 1 (pruning) does not run: the host records only a summary and an unchanged suffix (suffixOnly)).",
    );
  });

  it("still prunes between the thresholds without suffixOnly", async () => {
    const { result, pruned } = await run(0.85, false);
    expect(result.status).toBe("compacted");
    expect(result.event?.layer).toBe("prune");
    expect(result.cut).toBeNull();
    expect(pruned).toBe(1);
  });

  it.each([
    { ratio: 0.9, layer: "summarize" },
    { ratio: 0.97, layer: "full" },
  ])("summarises with a cut above its threshold ($ratio: layer $layer), keeping the input's own suffix and pruning nothing", async ({ ratio, layer }) => {
    const { messages, result, pruned, state } = await run(ratio, true);
    expect(result.status).toBe("compacted");
    expect(result.event?.layer).toBe(layer);
    const cut = result.cut;
    expect(cut).not.toBeNull();
    expect(cut?.preservedIndices).toEqual([]);
    expect(result.messages.slice(1)).toEqual(messages.slice(cut?.firstKeptIndex));
    result.messages.slice(1).forEach((m, k) => expect(m).toBe(messages[(cut?.firstKeptIndex ?? 0) + k]));
    expect(pruned).toBe(0);
    expect(state()?.prunedCount).toBe(0);
  });

  it("summarises a manual run below every threshold without pruning first", async () => {
    const { result, pruned } = await run(0.5, true, "manual");
    expect(result.status).toBe("compacted");
    expect(result.event?.layer).toBe("summarize");
    expect(pruned).toBe(0);
  });
});
