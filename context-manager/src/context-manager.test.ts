import { afterEach, describe, expect, it } from "vitest";
import { CompactionError, type CompactionPlugin, type CompactionResult, ErrorCodes, type PiMessage } from "@compaction/core";
import { assistant, user, words } from "@compaction/core/testing/pi";
import { Gate, exchange, keepRecent, neverCuts, piCompactor, type PiCompactorOptions } from "./__fixtures__/compactors.js";
import { type ContextManager, RETRY_SHARE } from "./context-manager.js";
import { createContextManager } from "./create-context-manager.js";
import type { ContextManagerEvents } from "./events.js";

const managers: Array<ContextManager<PiMessage>> = [];
afterEach(async () => {
  for (const manager of managers.splice(0)) await manager.dispose();
});

async function manager(
  options: PiCompactorOptions & { messages?: PiMessage[]; autoCompact?: boolean; maxAutoCompactions?: number } = {},
): Promise<ContextManager<PiMessage>> {
  const created = await createContextManager<PiMessage>({
    compactor: piCompactor(options),
    messages: options.messages ?? [],
    ...(options.autoCompact === undefined ? {} : { autoCompact: options.autoCompact }),
    ...(options.maxAutoCompactions === undefined ? {} : { maxAutoCompactions: options.maxAutoCompactions }),
  });
  managers.push(created);
  return created;
}

/** Every event, in order, as `name` or `name:detail`. */
function record(target: ContextManager<PiMessage>): string[] {
  const log: string[] = [];
  target.on("compaction-start", (e) => log.push(`start:${e.reason}`));
  target.on("compaction-end", (e) => log.push(`end:${e.result.status}`));
  target.on("warning", (e) => log.push(`warning:${e.kind}`));
  target.on("error", (e) => log.push(`error:${e.during}`));
  return log;
}

/** A plugin that logs when the compactor runs (beforeCompact). */
function logRuns(log: string[]): CompactionPlugin {
  return { name: "log-runs", apply: (c) => c.hooks.beforeCompact.tap("log-runs", () => void log.push("run")) };
}

/** Appends exchanges until the context is over the threshold, without checking. */
async function fillPastThreshold(target: ContextManager<PiMessage>, tokensPerTurn = 200): Promise<void> {
  let turn = 0;
  while (target.tokens <= target.threshold) await target.append(exchange(tokensPerTurn, `fill${turn++}`));
}

const overflow = () => Object.assign(new Error("prompt is too long: 213462 tokens > 200000 maximum"), { status: 400 });

describe("auto-compaction at the threshold", () => {
  it("compacts once when a response takes the context over the threshold, notifying before it starts", async () => {
    const log: string[] = [];
    const target = await manager({ plugins: [logRuns(log), keepRecent(200)] });
    target.on("compaction-start", () => log.push("start"));
    target.on("compaction-end", () => log.push("end"));
    const results = [];
    for (let turn = 0; turn < 6; turn++) {
      await target.append(exchange(200, `t${turn}`));
      results.push(await target.afterResponse());
    }
    expect(results.filter((r) => r !== null).map((r) => r?.status)).toEqual(["compacted"]);
    expect(log).toEqual(["start", "run", "end"]);
  });

  it("does not compact while the context is at or below the threshold", async () => {
    const target = await manager();
    while (target.tokens + 200 <= target.threshold) {
      await target.append(exchange(200));
      expect(await target.check()).toBeNull();
    }
    expect(target.compactions).toBe(0);
  });

  it("brings the context under the threshold, starting with the summary", async () => {
    const target = await manager();
    await fillPastThreshold(target);
    const result = await target.beforeRequest();
    expect(result?.status).toBe("compacted");
    expect(target.tokens).toBeLessThanOrEqual(target.threshold);
    expect(target.messages[0]?.role).toBe("compactionSummary");
  });

  it("keeps messages appended during a compaction, in order, after the compacted context", async () => {
    const gate = new Gate();
    const target = await manager({ plugins: [keepRecent(200, { gate })] });
    await fillPastThreshold(target);
    const running = target.check();
    await gate.entered;
    expect(target.compacting).toBe(true);
    const late = [user("late one"), user("late two"), user("late three")];
    const appended = Promise.all([target.append(late[0] as PiMessage), target.append([late[1] as PiMessage, late[2] as PiMessage])]);
    expect(target.messages).not.toContain(late[0]);
    gate.open();
    expect((await running)?.status).toBe("compacted");
    await appended;
    expect(target.messages[0]?.role).toBe("compactionSummary");
    expect(target.messages.slice(-3)).toEqual(late);
    expect(target.compacting).toBe(false);
  });

  it("keeps messages appended during a compaction that fails", async () => {
    const gate = new Gate();
    const failing: CompactionPlugin = {
      name: "failing",
      apply: (c) =>
        c.hooks.selectCut.tapPromise("failing", async () => {
          await gate.wait();
          throw new Error("summarizer offline");
        }),
    };
    const target = await manager({ plugins: [failing] });
    await fillPastThreshold(target);
    const before = [...target.messages];
    const running = target.check();
    await gate.entered;
    const late = user("typed while compacting");
    const appended = target.append(late);
    gate.open();
    expect((await running)?.status).toBe("failed");
    await appended;
    expect(target.messages).toEqual([...before, late]);
  });

  it("does not try again after a compaction that freed too little until the context grew by a quarter of the window", async () => {
    // Three turns of 300 tokens: the summary (about 240 tokens) is smaller than the turn it
    // replaces, so the compaction is written, but with the two turns kept the context stays over
    // the threshold (800).
    const target = await manager({ plugins: [keepRecent(700, { summary: words(160) })] });
    const log = record(target);
    await fillPastThreshold(target, 300);
    expect((await target.check())?.status).toBe("compacted");
    expect(target.tokens).toBeGreaterThan(target.threshold);
    const after = target.tokens;
    expect(await target.check()).toBeNull();
    // Small messages of the same turn: no compaction at each of them (no storm), until the context
    // has grown by a quarter of the window or (once) reaches the budget, whichever comes first.
    for (let i = 0; target.tokens + 60 <= Math.min(after + target.contextWindow / 4, target.contextWindow - target.reserveTokens); i++) {
      await target.append(assistant(`step ${i} ${words(40)}`));
      expect(await target.check()).toBeNull();
    }
    expect(log).toEqual(["start:threshold", "end:compacted", "warning:cannot-free"]);
    await target.append(assistant(words(80)));
    expect(target.tokens).toBeGreaterThan(Math.min(after + target.contextWindow / 4, target.contextWindow - target.reserveTokens));
    expect(await target.check()).not.toBeNull();
    expect(log[3]).toBe("start:threshold");
  });

  it("says in the cannot-free warning when it tries again", async () => {
    const target = await manager({ plugins: [keepRecent(700, { summary: words(160) })] });
    const warnings: string[] = [];
    target.on("warning", (e) => warnings.push(e.message));
    await fillPastThreshold(target, 300);
    await target.check();
    expect(warnings).toEqual([expect.stringMatching(/It tries again once the context has grown by 250 tokens \(a quarter of the window\), or earlier, once, when it reaches the window less the reserve; until then each request holds the newest messages that fit the budget\.$/)]);
  });

  it("does not try a declined compaction (noop) again at every message", async () => {
    const target = await manager({ plugins: [neverCuts] });
    const log = record(target);
    await fillPastThreshold(target);
    expect((await target.check())?.status).toBe("noop");
    expect(await target.check()).toBeNull();
    await target.append(user("one more"));
    expect(await target.check()).toBeNull();
    // A quarter of the window more: tried again (past the window now, so the core shrinks it in memory).
    await target.append(exchange(300, "more"));
    expect(await target.check()).not.toBeNull();
    expect(log.filter((entry) => entry === "start:threshold")).toHaveLength(2);
  });

  it("sends no cannot-free warning for a noop that leaves the context over the threshold but within the window", async () => {
    const target = await manager({ plugins: [neverCuts] });
    const log = record(target);
    await fillPastThreshold(target);
    expect(target.tokens).toBeLessThanOrEqual(target.contextWindow);
    const result = await target.check();
    expect(result?.status).toBe("noop");
    expect(result?.reason).toBe("No plugin selected a cut.");
    expect(log).toEqual(["start:threshold", "end:noop"]);
  });

  // Issue 10 changed this on purpose: over the budget, the core compacts even when no plugin selects a cut.
  it("compacts a context over the window itself even when no plugin selects a cut", async () => {
    const target = await manager({ plugins: [neverCuts], messages: [...exchange(300, "a"), ...exchange(900, "b")] });
    const log = record(target);
    expect(target.tokens).toBeGreaterThan(target.contextWindow);
    const result = await target.check();
    expect(result?.status).toBe("compacted");
    expect(result?.event?.strategy).toBe("core");
    // The newest exchange alone is over the threshold (not the window): still worth a warning.
    expect(log).toEqual(["start:threshold", "end:compacted", "warning:cannot-free"]);
    expect(target.tokens).toBeLessThanOrEqual(target.contextWindow);
  });

  it("warns cannot-free for an automatic compaction that fails, within the window too", async () => {
    const broken: CompactionPlugin = {
      name: "broken",
      apply: (c) =>
        c.hooks.selectCut.tap("broken", () => {
          throw new Error("index corrupt");
        }),
    };
    const target = await manager({ plugins: [broken] });
    const warnings: string[] = [];
    target.on("warning", (e) => warnings.push(`${e.kind}: ${e.message}`));
    await fillPastThreshold(target);
    expect(target.tokens).toBeLessThanOrEqual(target.contextWindow);
    expect((await target.check())?.status).toBe("failed");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^cannot-free: Auto-compaction could not free enough room: nothing was compacted \(failed\): Plugin 'broken' failed in selectCut: index corrupt/);
  });

  it("reports a listener that throws as an error event and still compacts", async () => {
    const target = await manager();
    const log = record(target);
    target.on("compaction-start", () => {
      throw new Error("listener bug");
    });
    await fillPastThreshold(target);
    expect((await target.check())?.status).toBe("compacted");
    expect(log).toEqual(["start:threshold", "error:listener", "end:compacted"]);
  });
});

describe("turning auto-compaction off", () => {
  it("does not compact automatically with autoCompact: false", async () => {
    const target = await manager({ autoCompact: false });
    const log = record(target);
    await fillPastThreshold(target);
    expect(await target.afterResponse()).toBeNull();
    expect(log).toEqual([]);
  });

  it("does not compact automatically when the compactor's settings turn it off", async () => {
    const target = await manager({ enabled: false });
    await fillPastThreshold(target);
    expect(await target.afterResponse()).toBeNull();
    expect(target.autoCompact).toBe(false);
  });

  it("still compacts by hand with autoCompact: false", async () => {
    const target = await manager({ autoCompact: false });
    const log = record(target);
    await fillPastThreshold(target);
    const result = await target.compact({ focus: "the open bug" });
    expect(result.status).toBe("compacted");
    expect(result.event?.trigger).toBe("manual");
    expect(result.event?.customInstruction).toBe("the open bug");
    expect(log).toEqual(["start:manual", "end:compacted"]);
  });
});

describe("the smallest context", () => {
  it("does not compact a context of fewer than 4 messages, even over the threshold, and says why", async () => {
    const big = (label: string) => user(`${label} ${words(200)}`);
    const target = await manager({ messages: [big("a"), big("b"), big("c")] });
    const log = record(target);
    expect(target.tokens).toBeGreaterThan(target.threshold);
    expect(target.tokens).toBeLessThanOrEqual(target.contextWindow);
    const result = await target.check();
    expect(result?.status).toBe("noop");
    expect(result?.reason).toMatch(/3 message\(s\); a compaction needs at least 4/);
    expect(target.messages).toHaveLength(3);
    expect(log).toEqual([]);
  });

  it("warns cannot-free when fewer than 4 messages are over the window", async () => {
    const big = (label: string) => user(`${label} ${words(400)}`);
    const target = await manager({ messages: [big("a"), big("b"), big("c")] });
    const log = record(target);
    expect(target.tokens).toBeGreaterThan(target.contextWindow);
    expect((await target.check())?.status).toBe("noop");
    expect(log).toEqual(["warning:cannot-free"]);
  });

  it("does not compact fewer than 4 messages by hand either", async () => {
    const target = await manager({ messages: exchange(2000) });
    const result = await target.compact();
    expect(result.status).toBe("noop");
    expect(target.compactions).toBe(0);
  });
});

describe("degradation warnings", () => {
  it("warns softly at 3 compactions and hard at 5, once each", async () => {
    const target = await manager({ autoCompact: false });
    const warnings: Array<[string, number]> = [];
    target.on("warning", (e) => warnings.push([e.kind, e.compactions]));
    for (let i = 0; i < 6; i++) {
      await fillPastThreshold(target);
      expect((await target.compact()).status).toBe("compacted");
    }
    expect(warnings).toEqual([
      ["degradation-soft", 3],
      ["degradation-hard", 5],
    ]);
    expect(target.degradation()).toMatchObject({ compactions: 6, risk: "high" });
  });

  it("suggests exporting and importing for a fresh start in the soft warning", async () => {
    const target = await manager({ autoCompact: false });
    const messages: string[] = [];
    target.on("warning", (e) => messages.push(e.message));
    for (let i = 0; i < 3; i++) {
      await fillPastThreshold(target);
      await target.compact();
    }
    expect(messages[0]).toMatch(/compacted 3 times.*compaction context export, then context import/);
  });
});

describe("maxAutoCompactions", () => {
  it("stops auto-compaction at the limit with a warning naming the option, once", async () => {
    const target = await manager({ maxAutoCompactions: 2 });
    const log = record(target);
    for (let i = 0; i < 3; i++) {
      await fillPastThreshold(target);
      await target.afterResponse();
    }
    await target.append(exchange(200));
    expect(await target.afterResponse()).toBeNull();
    expect(target.compactions).toBe(2);
    expect(log.filter((entry) => entry.startsWith("warning"))).toEqual(["warning:max-auto-compactions"]);
  });

  it("names maxAutoCompactions and the way out in the warning", async () => {
    const target = await manager({ maxAutoCompactions: 1 });
    const messages: string[] = [];
    target.on("warning", (e) => messages.push(e.message));
    await fillPastThreshold(target);
    await target.check();
    await fillPastThreshold(target);
    await target.check();
    expect(messages).toEqual([expect.stringMatching(/^Auto-compaction stopped: .*maxAutoCompactions \(1\).*compact\(\)/)]);
  });

  it("still compacts by hand past the limit", async () => {
    const target = await manager({ maxAutoCompactions: 1 });
    await fillPastThreshold(target);
    await target.check();
    await fillPastThreshold(target);
    expect(await target.check()).toBeNull();
    expect((await target.compact()).status).toBe("compacted");
    expect(target.compactions).toBe(2);
  });
});

describe("overflow recovery (send)", () => {
  it("compacts once and retries once when the provider rejects the request as too long", async () => {
    const target = await manager({ contextWindow: 100_000 });
    const log = record(target);
    for (let i = 0; i < 4; i++) await target.append(exchange(200, `t${i}`));
    const seen: Array<readonly PiMessage[]> = [];
    const reply = await target.send(async (messages) => {
      seen.push(messages);
      if (seen.length === 1) throw overflow();
      return "ok";
    });
    expect(reply).toBe("ok");
    expect(seen).toHaveLength(2);
    expect(seen[1]?.[0]?.role).toBe("compactionSummary");
    expect(log).toEqual(["start:overflow", "end:compacted"]);
  });

  it("throws COMPACTION_CONTEXT_OVERFLOW after one retry when the provider rejects it again, without looping", async () => {
    const target = await manager({ contextWindow: 100_000 });
    for (let i = 0; i < 4; i++) await target.append(exchange(200, `t${i}`));
    let calls = 0;
    const error = await target
      .send(async () => {
        calls += 1;
        throw overflow();
      })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(CompactionError);
    expect((error as CompactionError).code).toBe(ErrorCodes.CONTEXT_OVERFLOW);
    expect((error as CompactionError).message).toMatch(/again after one compaction and retry/);
    expect(calls).toBe(2);
    expect(target.compactions).toBe(1);
  });

  it("passes other errors through untouched, without compacting", async () => {
    const target = await manager({ contextWindow: 100_000 });
    for (let i = 0; i < 4; i++) await target.append(exchange(200, `t${i}`));
    const rateLimited = Object.assign(new Error("429 Too Many Requests: rate limit"), { status: 429 });
    let calls = 0;
    const error = await target
      .send(async () => {
        calls += 1;
        throw rateLimited;
      })
      .catch((thrown: unknown) => thrown);
    expect(error).toBe(rateLimited);
    expect(calls).toBe(1);
    expect(target.compactions).toBe(0);
  });

  // Issue 10 changed this on purpose: when the compaction frees nothing, the retry leaves older
  // turns out of what is sent (the context keeps them) instead of giving up without retrying.
  it("retries once, with older turns left out, when the compaction frees nothing; throws COMPACTION_CONTEXT_OVERFLOW when that is rejected too", async () => {
    const target = await manager({ contextWindow: 100_000, plugins: [neverCuts] });
    for (let i = 0; i < 4; i++) await target.append(exchange(200, `t${i}`));
    const sent: Array<readonly PiMessage[]> = [];
    const error = await target
      .send(async (messages) => {
        sent.push(messages);
        throw overflow();
      })
      .catch((thrown: unknown) => thrown);
    expect((error as CompactionError).code).toBe(ErrorCodes.CONTEXT_OVERFLOW);
    expect((error as CompactionError).message).toMatch(/rejected the request as too long again after one compaction and retry/);
    expect(sent).toHaveLength(2);
    const [first, retry] = sent as [readonly PiMessage[], readonly PiMessage[]];
    expect(target.compactor.tokens.total(retry)).toBeLessThanOrEqual(0.9 * target.compactor.tokens.total(first));
    expect(retry.at(-2)).toBe(target.messages.at(-2)); // the newest exchange, as it is
    expect(target.messages).toHaveLength(8); // the context keeps every message
  });

  it("throws COMPACTION_CONTEXT_OVERFLOW without compacting when auto-compaction is off", async () => {
    const target = await manager({ contextWindow: 100_000, autoCompact: false });
    for (let i = 0; i < 4; i++) await target.append(exchange(200, `t${i}`));
    let calls = 0;
    const error = await target
      .send(async () => {
        calls += 1;
        throw overflow();
      })
      .catch((thrown: unknown) => thrown);
    expect((error as CompactionError).code).toBe(ErrorCodes.CONTEXT_OVERFLOW);
    expect((error as CompactionError).message).toMatch(/auto-compaction is off/);
    expect(calls).toBe(1);
    expect(target.compactions).toBe(0);
  });

  // Issue 10 changed this on purpose: a summary over the budget on its own is left out of the
  // retry (the context keeps it), since the request alone fits; before, send() gave up.
  it("retries once with older turns left out of what is sent when a summary would not make the context smaller", async () => {
    // Budget 500 (window 1,000 minus 500 reserved), threshold 500 (90% of the usable window,
    // 500 / 0.9); the summary alone is 600 tokens, more than the 400 of the whole context: the
    // core refuses to write it, and the retry is shaped from the context as it is.
    const summary = `summary ${words(400)}`;
    const target = await manager({ contextWindow: 1000, reserveTokens: 500, threshold: 0.9, plugins: [keepRecent(100, { summary })] });
    for (let i = 0; i < 4; i++) await target.append(exchange(100, `t${i}`));
    expect(target.tokens).toBeLessThanOrEqual(target.threshold);
    const before = [...target.messages];
    const ends: CompactionResult<PiMessage>[] = [];
    target.on("compaction-end", (e) => ends.push(e.result));
    const sent: Array<readonly PiMessage[]> = [];
    const reply = await target.send(async (messages) => {
      sent.push(messages);
      if (sent.length === 1) throw overflow();
      return "ok";
    });
    expect(reply).toBe("ok");
    expect(ends.map((result) => result.status)).toEqual(["noop"]);
    expect(ends[0]?.reason).toMatch(/^The summary \(\d+ tokens\) would not be smaller than the \d+ tokens/);
    expect(target.compactions).toBe(0);
    expect(target.messages).toEqual(before); // nothing was compacted or lost
    const retry = sent[1] as readonly PiMessage[];
    expect(target.compactor.tokens.total(retry)).toBeLessThanOrEqual(Math.floor(target.compactor.tokens.total(sent[0]!) * RETRY_SHARE));
    expect(retry.length).toBeLessThan(before.length);
    // The newest exchange is sent whole: leaving older turns out freed room for it.
    expect(retry.slice(-2)).toEqual(target.messages.slice(-2));
    expect(retry.at(-1)).toBe(target.messages.at(-1));
  });

  it("recognises overflow with a custom isOverflow", async () => {
    const target = await manager({ contextWindow: 100_000 });
    for (let i = 0; i < 4; i++) await target.append(exchange(200, `t${i}`));
    let calls = 0;
    const reply = await target.send(
      async () => {
        calls += 1;
        if (calls === 1) throw new Error("E_CTX");
        return calls;
      },
      { isOverflow: (error) => (error as Error).message === "E_CTX" },
    );
    expect(reply).toBe(2);
    expect(target.compactions).toBe(1);
  });
});

describe("usage()", () => {
  it("gives no usage line at exactly half the window", async () => {
    const target = await manager({ messages: [user("x".repeat(1996))] }); // "x…" -> 1,996 chars = 499 tokens
    await target.append(user("")); // an empty message counts 0
    expect(target.usage()).toMatchObject({ tokens: 499, ratio: 0.499, line: null });
    await target.append(user("abcd"));
    expect(target.usage()).toEqual({ tokens: 500, contextWindow: 1000, ratio: 0.5, line: null });
  });

  it("shows the usage line above half the window", async () => {
    const target = await manager({ messages: [user("x".repeat(2000)), user("y")] });
    expect(target.usage().line).toBe("[█████░░░░░] 50% context (501 / 1,000 tokens)");
  });
});

describe("events", () => {
  it("sends the reason, trigger and token count before a compaction starts", async () => {
    const target = await manager();
    const starts: Array<ContextManagerEvents<PiMessage>["compaction-start"]> = [];
    target.on("compaction-start", (e) => starts.push(e));
    await fillPastThreshold(target);
    const tokens = target.tokens;
    await target.check();
    expect(starts).toEqual([
      { reason: "threshold", trigger: "auto", tokens, contextWindow: 1000, threshold: 800, messages: expect.any(Number), focus: null },
    ]);
  });

  it("stops calling a listener once it is removed", async () => {
    const target = await manager();
    let calls = 0;
    const off = target.on("compaction-end", () => void (calls += 1));
    await fillPastThreshold(target);
    await target.check();
    off();
    await fillPastThreshold(target);
    await target.check();
    expect(calls).toBe(1);
  });
});

describe("the size after a compaction in memory (issue 15)", () => {
  it("is the After the compaction's event records, in the measure of the Before it ran on", async () => {
    const turns = Array.from({ length: 8 }, (_, i) => exchange(120, `t${i}`)).flat();
    // The newest response carries a usage figure well over our count: the provider's measure.
    const last = turns.at(-1) as PiMessage & Record<string, unknown>;
    turns[turns.length - 1] = { ...last, usage: { input: 1500, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 1510 }, stopReason: "stop" } as PiMessage;
    const m = await manager({ messages: turns, contextWindow: 2000, autoCompact: false });
    expect(m.tokens).toBe(1510);
    const result = await m.compact();
    expect(result.status).toBe("compacted");
    const after = result.event?.tokensAfterCompaction as number;
    expect(after).toBeGreaterThan(result.countedTokensAfter ?? Number.POSITIVE_INFINITY);
    expect(result.tokensAfter).toBe(after);
    expect(m.tokens).toBe(after);
    m.append(user("next request"));
    await Promise.resolve();
    expect(m.tokens).toBe(m.compactor.tokens.contextTokens(m.messages, { tokens: after, lastIndex: result.messages.length - 1 }).tokens);
  });
});

describe("requestMessages", () => {
  it("returns a request that does not change when messages are appended after it", async () => {
    const target = await manager({ messages: [user(words(20, "first"))] });
    const sent = target.requestMessages();
    const before = JSON.stringify(sent);
    await target.append(exchange(50, "later"));
    expect(JSON.stringify(sent)).toBe(before);
    expect(target.requestMessages().length).toBeGreaterThan(sent.length);
  });
});
