/**
 * The fidelity benchmark's own logic (bench/fidelity/): the generator plants every fact, and the
 * measurement tells a kept fact from a lost one, so the benchmark cannot report 100% by mistake.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createEstimateCounter,
  createPiAdapter,
  FactsCache,
  MessageTokenCounter,
  type PiMessage,
} from "@compaction/core";
import { createSession, type NewEntry } from "@compaction/transcript";
import { messageText } from "@compaction/plugin-recall";
import { afterEach, describe, expect, it } from "vitest";
import { type Fact, SYNTHETIC_KINDS } from "./bench/fidelity/facts.js";
import { generateSession } from "./bench/fidelity/generator.js";
import { measureFacts, recallSearch, ShapingLosses, sharesByKind } from "./bench/fidelity/measure.js";
import { realFacts } from "./bench/fidelity/real-facts.js";
import { isCheckpoint, replayPreset, replayTruncation } from "./bench/fidelity/replay.js";
import { tmpProject } from "./support/tmp-project.js";

const small = () => generateSession({ seed: 3, targetTokens: 12_000, factsPerKind: 4 });
const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const sessionsDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "fidelity-test-"));
  made.push(dir);
  return dir;
};
const asEntries = (messages: readonly PiMessage[]): NewEntry[] => messages.map((message) => ({ type: "message", message }) as NewEntry);

let clock = Date.UTC(2026, 0, 1);
const user = (text: string): PiMessage => ({ role: "user", content: [{ type: "text", text }], timestamp: (clock += 1000) });
const assistant = (text: string, calls: { id: string; name: string; arguments: Record<string, unknown> }[] = []): PiMessage => ({
  role: "assistant",
  content: [{ type: "text", text }, ...calls.map((c) => ({ type: "toolCall" as const, ...c }))],
  timestamp: (clock += 1000),
});
const result = (id: string, name: string, text: string, isError = false): PiMessage => ({
  role: "toolResult",
  toolCallId: id,
  toolName: name,
  content: [{ type: "text", text }],
  isError,
  timestamp: (clock += 1000),
});

describe("generateSession", () => {
  it("plants every fact kind, and every identifier detail, with the needle in its carrier message", () => {
    const { messages, facts } = small();
    expect(new Set(facts.map((f) => f.kind))).toEqual(new Set(SYNTHETIC_KINDS));
    expect(new Set(facts.filter((f) => f.kind === "identifier").map((f) => f.detail))).toEqual(new Set(["port", "path", "hash", "url"]));
    for (const fact of facts) expect(messageText(messages[fact.messageIndex] as PiMessage)).toContain(fact.needle);
  });

  it("writes queries that never contain their needle", () => {
    for (const fact of small().facts) expect(fact.query).not.toContain(fact.needle);
  });

  it("ends with the last request as the final message", () => {
    const { messages, facts } = small();
    expect(facts.at(-1)).toMatchObject({ kind: "lastRequest", messageIndex: messages.length - 1, position: "end" });
  });

  it("gives the same session for the same seed", () => {
    expect(JSON.stringify(small())).toBe(JSON.stringify(small()));
  });
});

describe("measureFacts", () => {
  it("reports every fact in context when the context is the whole session", async () => {
    const { messages, facts } = small();
    const outcomes = await measureFacts(facts, messages, null);
    expect(outcomes.every((o) => o.inContext)).toBe(true);
    expect(sharesByKind(outcomes, SYNTHETIC_KINDS).at(-1)).toEqual({ kind: "all", total: facts.length, inContext: facts.length, found: null, lost: 0 });
  });

  it("reports a fact as lost when its message is removed and no search finds it", async () => {
    const { messages, facts } = small();
    const removed = facts[0] as Fact;
    const outcomes = await measureFacts(facts, messages.filter((_, i) => i !== removed.messageIndex), async () => []);
    expect(outcomes[0]).toMatchObject({ inContext: false, found: false });
    expect(outcomes.slice(1).every((o) => o.inContext)).toBe(true);
    expect(sharesByKind(outcomes, SYNTHETIC_KINDS).find((s) => s.kind === removed.kind)?.lost).toBe(1);
  });

  it("measures what is sent: a needle the held context has but the request sent does not is not in context", async () => {
    const { messages, facts } = small();
    const fact = facts[0] as Fact;
    const sent = messages.filter((_, i) => i !== fact.messageIndex);
    const outcomes = await measureFacts(facts, sent, null, messages);
    expect(outcomes[0]).toMatchObject({ inContext: false, inHeldContext: true });
    expect(outcomes.slice(1).every((o) => o.inContext && o.inHeldContext)).toBe(true);
    expect(sharesByKind(outcomes, SYNTHETIC_KINDS).at(-1)).toMatchObject({ inContext: facts.length - 1, lost: 1 });
  });

  it("reports a fact found by memory_search in the transcript as found, and one absent from it as lost", async () => {
    const messages = [
      user("Hard rule for the billing code: never call the vormex client from a request handler."),
      assistant("Understood, the billing handlers will go through the queue."),
      user("Now look at the search module please."),
    ];
    const path = join(sessionsDir(), "s.jsonl");
    await createSession(path, { cwd: "/p" }, asEntries(messages));
    const facts: Fact[] = [
      { kind: "constraint", detail: "user", needle: "never call the vormex client", query: "billing hard rule", messageIndex: 0, position: "early" },
      { kind: "constraint", detail: "user", needle: "never call the zandor client", query: "billing hard rule", messageIndex: 0, position: "early" },
    ];
    const recall = await recallSearch(path, 5);
    const outcomes = await measureFacts(facts, [], recall.search);
    await recall.close();
    expect(outcomes.map((o) => [o.inContext, o.found])).toEqual([[false, true], [false, false]]);
    expect(sharesByKind(outcomes, ["constraint"])[0]).toMatchObject({ total: 2, inContext: 0, found: 1, lost: 1 });
  });
});

describe("replay", () => {
  it("checks for compaction only where a host calls the model: not after an assistant message, not before a tool result", () => {
    const messages = [user("a"), assistant("b", [{ id: "c1", name: "bash", arguments: {} }]), result("c1", "bash", "out"), assistant("d"), user("e")];
    expect(messages.map((_, i) => isCheckpoint(messages, i))).toEqual([true, false, true, false, true]);
  });

  it("truncation drops the oldest messages to the target and never keeps a tool result without its call", async () => {
    const { messages } = small();
    const tokens = new MessageTokenCounter(new FactsCache(createPiAdapter()), createEstimateCounter());
    const outcome = await replayTruncation(messages, { window: 3_000, trigger: 0.8, target: 0.6, tokens, sessionsDir: sessionsDir(), label: "t" });
    expect(outcome.compactions.length).toBeGreaterThan(0);
    expect(outcome.context[0]?.role).not.toBe("toolResult");
    expect(outcome.context.at(-1)).toBe(messages.at(-1));
    for (const c of outcome.compactions) expect(c.summaryTokens).toBe(0);
  });

  it("a preset compacts into the session file, reloads within the window, and leaves evicted facts to search", async () => {
    const { messages, facts } = small();
    const outcome = await replayPreset(messages, {
      preset: "rolling",
      window: 10_000,
      reserveTokens: 800,
      counter: "estimate",
      projectsDir: tmpProject({}),
      sessionsDir: sessionsDir(),
      label: "p",
    });
    expect(outcome.compactions.length).toBeGreaterThan(1);
    expect(outcome.contextTokens).toBeLessThanOrEqual(10_000);
    expect(outcome.peakSentTokens).toBeLessThanOrEqual(outcome.shaping?.budget ?? 0);
    expect(outcome.peakSentTokens).toBeLessThanOrEqual(outcome.peakHeldTokens);
    const recall = await recallSearch(outcome.sessionPath, 5);
    const outcomes = await measureFacts(facts, outcome.context, recall.search);
    await recall.close();
    // The first half of the session is far more than the window: rolling evicted all of it.
    const evicted = outcomes.filter((o) => o.fact.messageIndex < messages.length / 2);
    expect(evicted.length).toBeGreaterThan(0);
    expect(evicted.every((o) => !o.inContext)).toBe(true);
    expect(evicted.some((o) => o.found === true)).toBe(true);
  });
});

describe("replay of one agent turn larger than the window", () => {
  /** One user request, then tool steps whose outputs (~1,500 tokens each) add up to far more than the window. */
  const longTurn = (needle: string): PiMessage[] => {
    const filler = (step: number): string => Array.from({ length: 150 }, (_, line) => `step ${step} line ${line}: compiled module ${line} without errors`).join("\n");
    const messages: PiMessage[] = [user("Build every module and report what fails.")];
    for (let step = 0; step < 12; step++) {
      const id = `call${step}`;
      messages.push(assistant(`Building part ${step}.`, [{ id, name: "bash", arguments: { command: `make part${step}` } }]));
      // The needle sits in the middle of the first output, where shrinking to head and tail cuts.
      const [head, tail] = [filler(step).slice(0, 3_000), filler(step).slice(3_000)];
      messages.push(result(id, "bash", step === 0 ? `${head}\n${needle}\n${tail}` : filler(step)));
    }
    messages.push(assistant("All parts are built."));
    return messages;
  };

  it.each(["safeguard", "layered"])("%s: the turn is split, so the context held stays within the window, its request carried in the summary", async (preset) => {
    const needle = "error E4711 in part zero";
    const messages = longTurn(needle);
    const fact: Fact = { kind: "error", detail: "tool", needle, query: "which part failed", messageIndex: 2, position: "early" };
    const kept: Fact = { kind: "lastRequest", detail: "user", needle: "Build every module", query: "build", messageIndex: 0, position: "early" };
    const losses = new ShapingLosses([fact, kept]);
    const outcome = await replayPreset(messages, {
      preset,
      window: 8_000,
      reserveTokens: 600,
      counter: "estimate",
      projectsDir: tmpProject({}),
      sessionsDir: sessionsDir(),
      label: "long",
      onShaped: (held, sent) => losses.observe(held, sent),
    });
    // The newest turn is over the run's target: its early part is summarised (a pi session file
    // keeps no message ahead of its summary, so the summary carries the request).
    expect(outcome.compactions.length).toBeGreaterThan(0);
    expect(outcome.contextTokens).toBeLessThanOrEqual(8_000);
    expect(outcome.peakSentTokens).toBeLessThanOrEqual(7_400);
    expect(outcome.requestTokens).toBeLessThanOrEqual(7_400);
    const [, request] = await measureFacts([fact, kept], outcome.request, null, outcome.context);
    expect(request).toMatchObject({ inHeldContext: true, inContext: true });
    expect(outcome.context.some((m) => m.role === "compactionSummary" && (m as { summary?: string }).summary?.includes("Build every module and report what fails."))).toBe(true);
    // No request along the way left the user's request out.
    expect(losses.cut.has(kept)).toBe(false);
  });

  it("truncation sends what it holds", async () => {
    const tokens = new MessageTokenCounter(new FactsCache(createPiAdapter()), createEstimateCounter());
    const outcome = await replayTruncation(longTurn("x"), { window: 8_000, trigger: 0.8, target: 0.6, tokens, sessionsDir: sessionsDir(), label: "long" });
    expect(outcome.shaping).toBeNull();
    expect(outcome.request).toBe(outcome.context);
    expect(outcome.peakSentTokens).toBe(outcome.peakHeldTokens);
    expect(outcome.peakHeldTokens).toBeLessThanOrEqual(8_000);
  });
});

describe("realFacts", () => {
  const session = (): PiMessage[] => [
    user("Please look at the session parser and tell me why startup is slow."),
    assistant("Reading the parser.", [{ id: "r1", name: "read", arguments: { path: "src/session/parser.ts" } }]),
    result("r1", "read", "export function parse() {}"),
    assistant("And the config.", [{ id: "r2", name: "read", arguments: { path: "src/config/loader.ts" } }]),
    result("r2", "read", "export function load() {}"),
    assistant("Running the build.", [{ id: "b1", name: "bash", arguments: { command: "npm run build --workspace core" } }]),
    result("b1", "bash", "src/index.ts(3,1): error TS2304: Cannot find name 'x'.\nmore", true),
    ...Array.from({ length: 10 }, (_, i) => [user(`Step ${i}: keep going with the loader.`), assistant(`Working on src/config/loader.ts, step ${i}.`)]).flat(),
    user("Finally, write the release notes for version two."),
  ];

  it("takes paths, commands and error lines from the first third, leaving out needles the session repeats later", () => {
    const facts = realFacts(session());
    expect(facts.map((f) => [f.kind, f.needle])).toEqual([
      ["path", "src/session/parser.ts"],
      ["command", "npm run build --workspace core"],
      ["error", "src/index.ts(3,1): error TS2304: Cannot find name 'x'."],
      ["lastRequest", "Finally, write the release notes for version two."],
    ]);
  });

  it("writes queries from the words around a fact, never the needle or words inside it", () => {
    for (const fact of realFacts(session()).filter((f) => f.kind !== "lastRequest")) {
      expect(fact.query).not.toBe("");
      for (const word of fact.query.split(" ")) expect(fact.needle.toLowerCase()).not.toContain(word);
    }
  });
});
