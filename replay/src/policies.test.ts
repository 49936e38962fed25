import { Compactor, createEstimateCounter, createPiAdapter, FactsCache, MessageTokenCounter, type PiMessage } from "@compaction/core";
import { builders } from "@compaction/core/testing";
import { describe, expect, it } from "vitest";
import { clearToolUsesPolicy, contextManagerPolicy, noCompactionPolicy } from "./policies.js";
import { replaySession } from "./replay.js";

const b = builders("pi");
const tokens = new MessageTokenCounter(new FactsCache(createPiAdapter()), createEstimateCounter());
const tokensOf = (m: PiMessage) => tokens.count(m);

/** A user request, then `n` steps each reading a file of `size` characters. */
function session(n: number, size: number): PiMessage[] {
  const messages: PiMessage[] = [b.user("look at the files")];
  for (let i = 0; i < n; i++) messages.push(b.assistant(`step ${i}`, [{ id: `c${i}` }]), ...b.toolResults([{ id: `c${i}`, text: `file ${i} ${"x".repeat(size)}` }]));
  messages.push(b.assistant("done"));
  return messages;
}

describe("clearToolUsesPolicy (Anthropic's clear_tool_uses_20250919)", () => {
  it("sends everything under the trigger", async () => {
    const host = await clearToolUsesPolicy({ adapter: tokens.facts.adapter, tokensOf, triggerTokens: 100_000 }).open();
    const messages = session(5, 400);
    await host.append(messages);
    expect(await host.request()).toBe(await host.request());
    expect((await host.request()).length).toBe(messages.length);
    expect(host.compactions).toBe(0);
  });

  it("past the trigger, replaces the results of every tool use but the newest three with a placeholder", async () => {
    const host = await clearToolUsesPolicy({ adapter: tokens.facts.adapter, tokensOf, triggerTokens: 2_000 }).open();
    await host.append(session(8, 2_000));
    const sent = await host.request();
    const outputs = sent.filter((m) => m.role === "toolResult").map((m) => tokens.facts.of(m).text);
    expect(outputs.slice(0, 5).every((text) => text === "[tool result cleared]")).toBe(true);
    expect(outputs.slice(5).every((text) => text.startsWith("file "))).toBe(true);
    expect(host.compactions).toBe(1);
  });

  it("clears nothing when that frees less than clearAtLeastTokens", async () => {
    const host = await clearToolUsesPolicy({ adapter: tokens.facts.adapter, tokensOf, triggerTokens: 1_000, clearAtLeastTokens: 1_000_000 }).open();
    const messages = session(8, 2_000);
    await host.append(messages);
    expect(await host.request()).toEqual(messages);
  });
});

describe("replaySession", () => {
  it("asks for a request before each reply of the assistant and measures the cache across them", async () => {
    const messages = session(4, 400);
    const calls: number[] = [];
    const result = await replaySession(messages, noCompactionPolicy(), { tokensOf, factsOf: (m) => tokens.facts.of(m), onCall: (call) => void calls.push(call.index) });
    // Every assistant message follows a user message or a tool result: one call each.
    expect(calls).toEqual(messages.flatMap((m, i) => (m.role === "assistant" ? [i] : [])));
    expect(result.calls).toBe(calls.length);
    // Sending everything only appends: one miss, the cold first request.
    expect(result.cache.misses).toBe(1);
  });
});

describe("contextManagerPolicy", () => {
  it("hands each session's context manager to onOpen before anything is appended, so its events can be heard", async () => {
    const seen: number[] = [];
    const ends: string[] = [];
    const compactor = new Compactor<PiMessage>({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), contextWindow: 4_000, reserveTokens: 500 });
    const policy = contextManagerPolicy("manual", async () => compactor, 4_000, {
      ownsCompactor: false,
      onOpen: (manager) => {
        seen.push(manager.messages.length);
        manager.on("compaction-end", (event) => void ends.push(event.result.status));
      },
    });
    await replaySession(session(20, 2_000), policy, { tokensOf, factsOf: (m) => tokens.facts.of(m) });
    expect(seen).toEqual([0]);
    expect(ends.length).toBeGreaterThan(0);
    compactor.dispose();
  });
});
