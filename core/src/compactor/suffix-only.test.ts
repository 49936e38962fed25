/** `suffixOnly`: a host that records a compaction only as a summary and an unchanged suffix. */
import { describe, expect, it } from "vitest";
import { ErrorCodes } from "../errors.js";
import { createPiAdapter, type PiMessage } from "../messages/pi-adapter.js";
import type { Summarizer } from "../summarizer/summarizer.js";
import { assistant, toolResult, user } from "../testing/pi-messages.js";
import { createEstimateCounter } from "../tokens/estimate-counter.js";
import { Compactor } from "./compactor.js";
import type { CompactionPlugin } from "./plugin.js";
import type { CompactionRun } from "./run.js";
import { STAGE_PRUNE } from "./stages.js";

function conversation(): PiMessage[] {
  return [
    user("first request"),
    assistant("working", [{ id: "c1" }]),
    toolResult("c1", "output one"),
    assistant("done with first"),
    user("second request"),
    assistant("on it", [{ id: "c2" }]),
    toolResult("c2", "output two"),
    assistant("done with second"),
  ];
}

/** Counts summarizer calls, so a test can tell whether the run got as far as summarising. */
function countingSummarizer(calls: { n: number }): Summarizer {
  return {
    name: "counting",
    summarize: async (request) => {
      calls.n += 1;
      return `summary of ${request.messages.length} messages`;
    },
  };
}

function compactor(plugins: CompactionPlugin[], calls = { n: 0 }) {
  return new Compactor<PiMessage>({
    adapter: createPiAdapter(),
    tokenCounter: createEstimateCounter(),
    summarizer: countingSummarizer(calls),
    plugins,
    contextWindow: 100_000,
  });
}

/** Replaces the outputs of the tool results at `indices` with a marker, in beforeCompact. */
function pruner(indices: readonly number[]): CompactionPlugin {
  return {
    name: "pruner",
    apply: (c) =>
      c.hooks.beforeCompact.tap({ name: "pruner", stage: STAGE_PRUNE }, (run) => {
        run.setLayer("prune");
        run.replaceMessages(run.messages.map((m, i) => (indices.includes(i) ? c.adapter.replaceToolOutput(m, "[pruned]") : m)));
      }),
  };
}

/** Cuts at `index` and summarises the history. */
function cutAt(index: number): CompactionPlugin {
  return {
    name: "cut-at",
    apply(c) {
      c.hooks.selectCut.tap("cut-at", () => ({ firstKeptIndex: index }));
      c.hooks.summarize.tapPromise("cut-at", async (draft, run) => ({ ...draft, text: await run.summarize(run.historyMessages()) }));
    },
  };
}

describe("suffixOnly", () => {
  it("is false on the run unless the input sets it", async () => {
    const seen: boolean[] = [];
    const spy: CompactionPlugin = { name: "spy", apply: (c) => c.hooks.beforeCompact.tap("spy", (run) => void seen.push(run.suffixOnly)) };
    const c = compactor([spy]);
    await c.compact({ messages: conversation() });
    await c.compact({ messages: conversation(), suffixOnly: false });
    await c.compact({ messages: conversation(), suffixOnly: true });
    expect(seen).toEqual([false, false, true]);
  });

  it("turns a run that only changed messages in place into a noop that says why, with the input untouched", async () => {
    const input = conversation();
    const result = await compactor([pruner([2])]).compact({ messages: input, trigger: "auto", suffixOnly: true });
    expect(result.status).toBe("noop");
    expect(result.messages).toBe(input);
    expect(result.cut).toBeNull();
    expect(result.event).toBeNull();
    expect(result.tokensAfter).toBe(result.tokensBefore);
    expect(result.reason).toBe(
      "No plugin selected a cut. Plugin 'pruner' changed the messages in place (layer prune), but the host records a compaction only as a summary followed by an unchanged suffix of its messages (suffixOnly), so nothing was compacted.",
    );
  });

  it("still returns a working set changed in place as compacted without suffixOnly", async () => {
    const input = conversation();
    const result = await compactor([pruner([2])]).compact({ messages: input, trigger: "auto" });
    expect(result.status).toBe("compacted");
    expect(result.cut).toBeNull();
    expect(JSON.stringify(result.messages[2])).toContain("[pruned]");
  });

  it("turns an in-place change followed by a cut that compacts nothing into a noop", async () => {
    const result = await compactor([pruner([2]), cutAt(0)]).compact({ messages: conversation(), suffixOnly: true });
    expect(result.status).toBe("noop");
    expect(result.reason).toMatch(/^The cut chosen by 'cut-at' compacts no messages\. Plugin 'pruner' changed the messages in place/);
  });

  it("compacts when the in-place change lies only before the cut: the summary and the input's own suffix", async () => {
    const input = conversation();
    const result = await compactor([pruner([2]), cutAt(4)]).compact({ messages: input, suffixOnly: true });
    expect(result.status).toBe("compacted");
    expect(result.cut?.firstKeptIndex).toBe(4);
    result.messages.slice(1).forEach((m, k) => expect(m).toBe(input[4 + k]));
  });

  it("fails with CUT_REFUSED, before summarising, when the cut keeps a message changed in place", async () => {
    const calls = { n: 0 };
    const input = conversation();
    const result = await compactor([pruner([2, 6]), cutAt(4)], calls).compact({ messages: input, suffixOnly: true });
    expect(result.status).toBe("failed");
    expect(result.messages).toBe(input);
    expect(result.error?.code).toBe(ErrorCodes.CUT_REFUSED);
    expect(result.error?.plugin).toBe("pruner");
    expect(result.reason).toContain("Plugin 'pruner' changed 1 of the 4 messages the cut keeps");
    expect(calls.n).toBe(0);
  });

  it("fails with CUT_REFUSED when a replaced working set has another length, whatever the cut keeps", async () => {
    const dropFirst: CompactionPlugin = {
      name: "drop-first",
      apply: (c) => c.hooks.beforeCompact.tap("drop-first", (run: CompactionRun<PiMessage>) => run.replaceMessages(run.messages.slice(1))),
    };
    const result = await compactor([dropFirst, cutAt(3)]).compact({ messages: conversation(), suffixOnly: true });
    expect(result.status).toBe("failed");
    expect(result.error?.code).toBe(ErrorCodes.CUT_REFUSED);
    expect(result.reason).toContain("changed the number of messages from 8 to 7");
  });

  it("keeps a cut over kept messages changed in place without suffixOnly", async () => {
    const result = await compactor([pruner([2, 6]), cutAt(4)]).compact({ messages: conversation() });
    expect(result.status).toBe("compacted");
    expect(JSON.stringify(result.messages.at(-2))).toContain("[pruned]");
  });
});

describe("explainNoCut", () => {
  it("quotes each plugin's reason, after its name, in the noop's reason", async () => {
    const declines = (name: string, why: string): CompactionPlugin => ({
      name,
      apply: (c) => c.hooks.selectCut.tap(name, (run) => void run.explainNoCut(why)),
    });
    const result = await compactor([declines("a", "below its threshold."), declines("b", "nothing old enough")]).compact({
      messages: conversation(),
    });
    expect(result.status).toBe("noop");
    expect(result.reason).toBe("No plugin selected a cut (a: below its threshold; b: nothing old enough).");
  });

  it("leaves the reason of a run that did select a cut alone", async () => {
    const declines: CompactionPlugin = {
      name: "declines",
      apply: (c) => c.hooks.selectCut.tap({ name: "declines", stage: -1 }, (run) => void run.explainNoCut("not me")),
    };
    const result = await compactor([declines, cutAt(4)]).compact({ messages: conversation() });
    expect(result.status).toBe("compacted");
    expect(result.reason).toBeNull();
  });
});
