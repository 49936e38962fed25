/**
 * The reply's reserve and what a request holds when a compaction cannot help: the reserve fits the
 * window or the manager is not created; a request never loses context silently.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type CompactionPlugin, ErrorCodes, type PiMessage } from "@compaction/core";
import { makeProject, removeProjects } from "@compaction/core/testing";
import { assistant, user, words } from "@compaction/core/testing/pi";
import { exchange, keepRecent, piCompactor } from "./__fixtures__/compactors.js";
import type { ContextManager } from "./context-manager.js";
import { createContextManager } from "./create-context-manager.js";
import type { ContextErrorEvent } from "./events.js";

const managers: Array<ContextManager<PiMessage>> = [];
afterEach(async () => {
  for (const manager of managers.splice(0)) await manager.dispose();
});
afterAll(() => removeProjects());

async function track(created: Promise<ContextManager<PiMessage>>): Promise<ContextManager<PiMessage>> {
  const manager = await created;
  managers.push(manager);
  return manager;
}

/** A compaction whose summarizer always fails, as a model summarizer whose provider is down. */
const failingSummary: CompactionPlugin = {
  name: "failing-summary",
  apply(compactor) {
    compactor.hooks.selectCut.tapPromise("failing-summary", async (run) => ({ firstKeptIndex: run.messages.length - 2, reason: "keep the newest exchange" }));
    compactor.hooks.summarize.tapPromise("failing-summary", async () => {
      throw new Error("503 Service Unavailable");
    });
  },
};

describe("the reply's reserve", () => {
  it("follows the window by default, so an 8k model compacts within its own window", async () => {
    const cwd = makeProject({ ".compactionrc.json": JSON.stringify({ preset: "safeguard", tokenizer: { counter: "estimate" } }) });
    const manager = await track(createContextManager<PiMessage>({ cwd, contextWindow: 8_000 }));
    expect(manager.reserveTokens).toBe(1_000);
    const failures: ContextErrorEvent[] = [];
    manager.on("error", (event) => failures.push(event));
    for (let turn = 0; turn < 40; turn++) {
      await manager.append(exchange(600, `turn ${turn}`));
      await manager.afterResponse();
      // The request holds more than the newest exchange: every turn that fits the budget.
      expect(manager.requestMessages().length).toBeGreaterThanOrEqual(Math.min(2 * (turn + 1), 4));
    }
    expect(failures).toEqual([]);
    expect(manager.compactions).toBeGreaterThan(0);
    expect(manager.tokens).toBeLessThanOrEqual(8_000 - 1_000);
  });

  it("takes the model's reply limit as the reserve when the config sets none", async () => {
    const manager = await track(createContextManager<PiMessage>({ compactor: withoutReserve(), contextWindow: 32_000, maxOutputTokens: 2_048 }));
    expect(manager.reserveTokens).toBe(2_048);
    expect(manager.budget).toBe(32_000 - 2_048);
  });

  it("refuses, when created, a reserveTokens option over half the window, naming the option", async () => {
    await expect(createContextManager<PiMessage>({ compactor: withoutReserve(), contextWindow: 8_000, reserveTokens: 16_384 })).rejects.toMatchObject({
      code: ErrorCodes.INPUT_INVALID,
      message: expect.stringMatching(/^The reply's reserve \(the reserveTokens option of createContextManager\) is 16384 tokens, which does not fit the 8,000-token context window/),
    });
  });

  it("refuses, when created, a config file's reserveTokens that the window given cannot hold, naming the file and the key", async () => {
    const cwd = makeProject({ ".compactionrc.json": JSON.stringify({ preset: "safeguard", reserveTokens: 16_384, agents: { small: { contextWindow: 64_000 } } }) });
    const error = await createContextManager<PiMessage>({ cwd, contextWindow: 16_000 }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: ErrorCodes.CONFIG_INVALID, path: "/reserveTokens" });
    expect((error as Error).message).toContain(`reserve (reserveTokens in ${cwd}/.compactionrc.json, /reserveTokens) is 16384 tokens`);
  });
});

describe("a request when a compaction cannot help", () => {
  it("holds the newest turns that fit when every compaction fails, and says so once with COMPACTION_CONTEXT_TRIMMED", async () => {
    const manager = await track(createContextManager<PiMessage>({ compactor: piCompactor({ plugins: [failingSummary], reserveTokens: 100 }), contextWindow: 1_000 }));
    const events: ContextErrorEvent[] = [];
    manager.on("error", (event) => events.push(event));
    const compactions: string[] = [];
    manager.on("compaction-end", (event) => compactions.push(event.result.status));
    // Six times the window: more than shrinking every message to head and tail can bring within it.
    const TURNS = 40;
    for (let turn = 0; turn < TURNS; turn++) {
      await manager.append(exchange(150, `t${turn}`));
      await manager.afterResponse();
    }
    expect(manager.tokens).toBeGreaterThan(manager.budget);
    const request = manager.requestMessages();
    expect(manager.compactor.tokens.total(request)).toBeLessThanOrEqual(manager.budget);
    // Every turn that fits, not only the newest message.
    expect(request.length).toBeGreaterThanOrEqual(4);
    expect(request).toContain(manager.messages.at(-2)); // the newest user message, whole
    const trimmed = events.filter((event) => event.during === "request");
    expect(trimmed.length).toBeGreaterThanOrEqual(1);
    expect(trimmed[0]?.error).toMatchObject({ code: ErrorCodes.CONTEXT_TRIMMED, message: expect.stringMatching(/^The request leaves out \d+ older message\(s\)/) });
    // Not said again for the same loss.
    const before = events.length;
    manager.requestMessages();
    expect(events.length).toBe(before);
    // The failing compaction is not retried at every message: at most one per quarter of the window appended.
    expect(compactions.length).toBeLessThanOrEqual(Math.floor((TURNS * 150) / 250) + 1);
  });

  it("send() throws COMPACTION_CONTEXT_OVERFLOW before sending when not even the newest request fits", async () => {
    const manager = await track(createContextManager<PiMessage>({ compactor: piCompactor({ plugins: [keepRecent(100)], reserveTokens: 100 }), contextWindow: 1_000 }));
    await manager.append([user(`${words(200)}`), assistant("ok"), { ...user(words(900)), pinned: true } as PiMessage, user("and now?")]);
    let sent = 0;
    await expect(
      manager.send(async () => {
        sent += 1;
        return "reply";
      }),
    ).rejects.toMatchObject({ code: ErrorCodes.CONTEXT_OVERFLOW, message: expect.stringMatching(/^The request does not fit the context window/) });
    expect(sent).toBe(0);
  });
});

/** A compactor whose reserve is left to the window (as one built from a config that sets none). */
function withoutReserve() {
  const compactor = piCompactor();
  compactor.reserveTokens = undefined;
  return compactor;
}
