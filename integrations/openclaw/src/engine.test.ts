import { loadPiMessages, PI_FIXTURES } from "@compaction/fixtures";
import { createCompactor, type PiMessage } from "@compaction/core";
import { makeProject, removeProjects } from "@compaction/core/testing";
import fc from "fast-check";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { anchorOf, findAnchor } from "./anchor.js";
import type { AgentMessage } from "./openclaw-api.js";
import { fakeHost } from "./test-support/fake-host.js";

afterAll(() => removeProjects());

const SESSION = { sessionId: "s-1", sessionKey: "agent:main:main" };

const realMessages = loadPiMessages(PI_FIXTURES[0] as string, { context: true }) as unknown as AgentMessage[];

describe("the context engine on a real pi session", () => {
  it("registers an engine that owns compaction, with OpenClaw's durable-turn semantics", async () => {
    const project = makeProject({ ".compactionrc": "preset: safeguard\ntokenizer: { counter: estimate }\n" });
    const { registered } = fakeHost({ cwd: project });
    const engine = await registered.engine!({ workspaceDir: project });
    expect(engine.info).toMatchObject({ id: "compaction", ownsCompaction: true, transcriptSemantics: { currentTurnFence: "before-current-turn-entry-v1", turnAdvancementIdempotency: "atomic-idempotent-v1" } });
    expect(registered.provider?.id).toBe("compaction");
  });

  it("compacts by the agent's preset, keeps the transcript untouched, and assembles summary + kept messages within the budget", async () => {
    const project = makeProject({ ".compactionrc": "preset: sliding-window\ntokenizer: { counter: estimate }\nagents:\n  main: { preset: safeguard }\n" });
    const { registered, namespaces } = fakeHost({ cwd: project });
    const engine = await registered.engine!({ workspaceDir: project });
    const transcript = structuredClone(realMessages);
    const before = JSON.stringify(transcript);
    const budget = 60_000;
    // The session is over the budget; assemble sends it shaped to fit (issue 10: old outputs
    // pruned, what is still over shrunk), the transcript untouched.
    const full = await engine.assemble({ ...SESSION, messages: transcript, tokenBudget: budget });
    expect(full.estimatedTokens).toBeLessThanOrEqual(budget);
    expect(JSON.stringify(transcript)).toBe(before);

    const result = await engine.compact({ ...SESSION, tokenBudget: budget, force: true });
    expect(result).toMatchObject({ ok: true, compacted: true });
    expect((result.result?.details as { strategy?: string }).strategy).toBe("safeguard"); // agent "main" from the session key
    expect(JSON.stringify(transcript)).toBe(before); // nothing of OpenClaw's was changed
    expect(namespaces.get("session-compactions")?.has("s-1")).toBe(true); // kept in OpenClaw's plugin state
    // Before and After in one measure: the provider's (Before is its usage figure plus calibrated
    // counts; After the event's figure, scaled like Before), as the CLI and the pi extension show them.
    const details = result.result?.details as { tokensBeforeCompaction: number; tokensAfterCompaction: number };
    expect(result.result?.tokensBefore).toBe(details.tokensBeforeCompaction);
    expect(result.result?.tokensAfter).toBe(details.tokensAfterCompaction);
    expect(result.result?.tokensAfter).toBeGreaterThan(0);
    const record = namespaces.get("session-compactions")?.get("s-1") as { tokensAfter?: number } | undefined;
    expect(record?.tokensAfter).toBe(details.tokensAfterCompaction);

    const assembled = await engine.assemble({ ...SESSION, messages: transcript, tokenBudget: budget });
    expect(assembled.messages[0]?.role).toBe("compactionSummary");
    expect(String(assembled.messages[0]?.["summary"])).toBe(result.result?.summary);
    expect(assembled.estimatedTokens).toBeLessThan(budget);
    // The kept messages are OpenClaw's own, from the first kept one to the end, in order.
    const keptFrom = transcript.length - (assembled.messages.length - 1);
    expect(assembled.messages.slice(1)).toEqual(transcript.slice(keptFrom));

    // A new turn appears in OpenClaw's transcript: it is sent after the kept messages.
    const next = [...transcript, { role: "user", content: "one more question", timestamp: 42 } as AgentMessage];
    const later = await engine.assemble({ ...SESSION, messages: next, tokenBudget: budget });
    expect(later.messages.at(-1)).toEqual(next.at(-1));
    expect(later.messages.length).toBe(assembled.messages.length + 1);
  });

  it("assemble takes OpenClaw's tokenBudget as the room for the messages: what fits it is sent unchanged, no reserve comes off it", async () => {
    const project = makeProject({ ".compactionrc": "preset: rolling\ntokenizer: { counter: estimate }\nreserveTokens: 16384\n" });
    const { registered } = fakeHost({ cwd: project });
    const engine = await registered.engine!({ workspaceDir: project });
    const messages = [
      { role: "user", content: `a long question ${"word ".repeat(12_000)}`, timestamp: 1 },
      { role: "user", content: "and a short one", timestamp: 2 },
    ] as unknown as AgentMessage[];
    const tokens = Math.ceil(JSON.stringify(messages).length / 4);
    // The budget holds the messages, but not the messages and the config's 16,384 reserved tokens.
    const budget = 20_000;
    expect(tokens).toBeLessThan(budget);
    const assembled = await engine.assemble({ ...SESSION, messages, tokenBudget: budget });
    expect(assembled.messages).toEqual(messages);
    // Over the budget, it is shaped to the budget itself.
    const tight = await engine.assemble({ ...SESSION, messages, tokenBudget: 5_000 });
    expect(tight.estimatedTokens).toBeLessThanOrEqual(5_000);
    expect(tight.estimatedTokens).toBeGreaterThan(1_000); // to the budget, not to the budget less the reserve
  });

  it("a second compaction updates the first: the summary stays one message and the kept tail moves forward", async () => {
    const project = makeProject({ ".compactionrc": "preset: safeguard\ntokenizer: { counter: estimate }\n" });
    const { registered } = fakeHost({ cwd: project });
    const engine = await registered.engine!({ workspaceDir: project });
    const half = realMessages.slice(0, Math.floor(realMessages.length / 2));
    await engine.assemble({ ...SESSION, messages: half, tokenBudget: 30_000 });
    expect((await engine.compact({ ...SESSION, tokenBudget: 30_000, force: true })).compacted).toBe(true);
    const first = await engine.assemble({ ...SESSION, messages: realMessages, tokenBudget: 30_000 });
    expect((await engine.compact({ ...SESSION, tokenBudget: 30_000, force: true })).compacted).toBe(true);
    const second = await engine.assemble({ ...SESSION, messages: realMessages, tokenBudget: 30_000 });
    expect(second.messages.filter((message) => message.role === "compactionSummary")).toHaveLength(1);
    expect(second.messages.length).toBeLessThan(first.messages.length);
  });

  it("a /compact in a new process reads the session through OpenClaw and answers a config error with a reason", async () => {
    const project = makeProject({ ".compactionrc": "preset: no-such-preset\n" });
    const { registered } = fakeHost({ cwd: project });
    const engine = await registered.engine!({ workspaceDir: project });
    const unseen = await engine.compact({ ...SESSION, force: true });
    expect(unseen.ok).toBe(false);
    expect(unseen.reason).toMatch(/no messages of session s-1/);
    await engine.assemble({ ...SESSION, messages: realMessages.slice(0, 10), tokenBudget: 100_000 });
    const broken = await engine.compact({ ...SESSION, force: true });
    expect(broken).toMatchObject({ ok: false, compacted: false });
    expect(broken.reason).toMatch(/COMPACTION_PLUGIN_NOT_FOUND/);
    // assemble still answers, with the messages unchanged, and says why once
    const assembled = await engine.assemble({ ...SESSION, messages: realMessages.slice(0, 10), tokenBudget: 100_000 });
    expect(assembled.messages).toEqual(realMessages.slice(0, 10));
    expect(registered.warnings.some((warning) => warning.includes("COMPACTION_PLUGIN_NOT_FOUND"))).toBe(true);
  });

  it("a committed turn that takes the context past the preset's threshold compacts (OpenClaw 2026.9 calls commitTurn, not afterTurn)", async () => {
    const project = makeProject({ ".compactionrc": "preset: safeguard\ntokenizer: { counter: estimate }\nautoCompact: { threshold: 0.5 }\n" });
    const { registered, namespaces } = fakeHost({ cwd: project });
    const engine = await registered.engine!({ workspaceDir: project });
    const start = realMessages.slice(0, 20);
    const budget = 60_000;
    await engine.assemble({ ...SESSION, messages: start, tokenBudget: budget });
    // A small turn: under the threshold, nothing happens.
    await engine.commitTurn!({ ...SESSION, advancementKey: "small", messages: [{ role: "user", content: "ok", timestamp: 1 } as AgentMessage] });
    expect(namespaces.get("session-compactions")?.has("s-1") ?? false).toBe(false);
    // The rest of the session in one turn: past half the budget, so the engine compacts.
    await engine.commitTurn!({ ...SESSION, advancementKey: "big", messages: realMessages.slice(20) });
    expect(namespaces.get("session-compactions")?.has("s-1")).toBe(true);
    const assembled = await engine.assemble({ ...SESSION, messages: [...start, { role: "user", content: "ok", timestamp: 1 } as AgentMessage, ...realMessages.slice(20)], tokenBudget: budget });
    expect(assembled.messages[0]?.role).toBe("compactionSummary");
  });

  it("compares OpenClaw's budgets (the provider's measure) with our count at the calibrated ratio", async () => {
    const project = makeProject({ ".compactionrc": "preset: safeguard\ntokenizer: { counter: estimate }\nautoCompact: { threshold: 0.5 }\n" });
    const compactor = await createCompactor<PiMessage>({ cwd: project });
    // Usage figures of a provider counting 1.5x what we count.
    const messages: AgentMessage[] = [];
    let counted = 0;
    for (let i = 0; i < 12; i++) {
      const user = { role: "user", content: [{ type: "text", text: `step ${i}: ${"check the parser and its tests. ".repeat(60)}` }], timestamp: 2 * i + 1 } as unknown as PiMessage;
      const reply = { role: "assistant", content: [{ type: "text", text: `done ${i}: ${"fixed an off-by-one in parse.ts. ".repeat(60)}` }], stopReason: "stop", timestamp: 2 * i + 2 } as unknown as PiMessage;
      counted += compactor.tokens.count(user) + compactor.tokens.count(reply);
      const total = Math.round(1.5 * counted);
      messages.push(user as unknown as AgentMessage, { ...reply, usage: { input: total, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: total } } as unknown as AgentMessage);
    }
    const ratio = compactor.tokens.budgetRatio(messages as unknown as PiMessage[]);
    expect(ratio).toBeCloseTo(1.5, 1);

    const { registered, namespaces } = fakeHost({ cwd: project });
    const engine = await registered.engine!({ workspaceDir: project });
    // A budget our count of the messages fits, but the provider's does not: the request is shaped to it.
    const budget = Math.round(counted * 1.2);
    const assembled = await engine.assemble({ ...SESSION, messages, tokenBudget: budget });
    expect(assembled.messages).not.toEqual(messages);
    expect(assembled.estimatedTokens).toBeLessThanOrEqual(budget);
    expect(assembled.estimatedTokens).toBeGreaterThan(budget * 0.8); // the estimate is the provider's measure, not our count
    // Past half the budget as the provider counts (0.6 by ours, 0.9 by the provider's), a committed turn compacts.
    await engine.commitTurn!({ ...SESSION, advancementKey: "turn", messages });
    expect(namespaces.get("session-compactions")?.has("s-1"), registered.warnings.join("\n")).toBe(true);
    // After the compaction, what is sent (a summary and a few messages) holds too few usage figures
    // to learn from; the ratio comes from OpenClaw's whole transcript.
    const after = await engine.assemble({ ...SESSION, messages, tokenBudget: budget });
    expect(after.messages[0]?.role).toBe("compactionSummary");
    expect(compactor.tokens.calibration(after.messages as unknown as PiMessage[]).source).toBe("none");
    expect(after.estimatedTokens).toBeGreaterThanOrEqual(1.4 * compactor.tokens.total(after.messages as unknown as PiMessage[]));
    compactor.dispose();
  });

  it("compacts for a small model whose OpenClaw budget is below the config's reserve (16,384 by default)", async () => {
    const project = makeProject({ ".compactionrc": "preset: safeguard\ntokenizer: { counter: estimate }\n" });
    const { registered } = fakeHost({ cwd: project });
    const engine = await registered.engine!({ workspaceDir: project });
    await engine.assemble({ ...SESSION, messages: realMessages.slice(0, 60), tokenBudget: 12_000 });
    // Failed with "reserveTokens must be ... below the context window (12000); found 16384".
    const result = await engine.compact({ ...SESSION, tokenBudget: 12_000, force: true });
    expect(result).toMatchObject({ ok: true, compacted: true });
    const assembled = await engine.assemble({ ...SESSION, messages: realMessages.slice(0, 60), tokenBudget: 12_000 });
    expect(assembled.estimatedTokens).toBeLessThanOrEqual(12_000);
  });

  it("a compaction after a turn that fails waits until the context has grown by a quarter of the budget (not again after every turn, nor when the turn's pending messages change the budget), and another model starts a new wait", async () => {
    const key = `failingSummaries${Date.now()}`;
    const project = makeProject({
      ".compactionrc": "preset: safeguard\ntokenizer: { counter: estimate }\nplugins: [./failing-summarizer.mjs]\n",
      "failing-summarizer.mjs": `export default function failing() {
  return {
    name: "failing-summarizer",
    apply(compactor) {
      compactor.summarizer = { name: "failing", summarize: async () => { globalThis[${JSON.stringify(key)}] = (globalThis[${JSON.stringify(key)}] ?? 0) + 1; throw new Error("model unavailable"); } };
    },
  };
}
`,
    });
    const calls = () => ((globalThis as Record<string, unknown>)[key] as number | undefined) ?? 0;
    const { registered } = fakeHost({ cwd: project, projectCode: true });
    const engine = await registered.engine!({ workspaceDir: project });
    const budget = 30_000;
    const estimate = (messages: readonly AgentMessage[]) => Math.ceil(JSON.stringify(messages).length / 4);
    const start = realMessages.slice(0, 10);
    await engine.assemble({ ...SESSION, messages: start, tokenBudget: budget, model: "claude-sonnet-4-5" });
    let pastThreshold = 0;
    let held: AgentMessage[] = [...start];
    for (let from = 10; from < realMessages.length; from += 4) {
      const turn = realMessages.slice(from, from + 4);
      // OpenClaw's budget for a call is its context budget less the turn's pending messages.
      await engine.assemble({ ...SESSION, messages: held, tokenBudget: budget - estimate(turn.slice(0, 1)), model: "claude-sonnet-4-5" });
      held = [...held, ...turn];
      await engine.commitTurn!({ ...SESSION, advancementKey: `turn-${from}`, messages: turn });
      if (estimate(held) > 0.8 * budget) pastThreshold += 1;
    }
    const appended = estimate(held) - estimate(start);
    const perQuarter = Math.floor(appended / (budget / 4)) + 1;
    expect(pastThreshold).toBeGreaterThan(perQuarter + 5); // without the wait, a summary after each of these turns
    expect(calls()).toBeGreaterThan(1);
    expect(calls()).toBeLessThanOrEqual(perQuarter);
    expect(registered.warnings.filter((warning) => warning.includes("the compaction after a turn failed"))[0]).toMatch(/waits until the context has grown by 7500 tokens/);
    // Another model (and its budget) is another loop: the compaction is tried again at once.
    const before = calls();
    await engine.assemble({ ...SESSION, messages: held, tokenBudget: 40_000, model: "gpt-5" });
    await engine.afterTurn!({ ...SESSION, messages: held, prePromptMessageCount: held.length - 4, tokenBudget: 40_000 });
    expect(calls()).toBe(before + 1);
  });

  it("says so when what assemble sends leaves older messages out (COMPACTION_CONTEXT_TRIMMED), once per loss", async () => {
    const project = makeProject({ ".compactionrc": "preset: safeguard\ntokenizer: { counter: estimate }\n" });
    const { registered } = fakeHost({ cwd: project });
    const engine = await registered.engine!({ workspaceDir: project });
    const trimmed = () => registered.warnings.filter((warning) => warning.includes("[COMPACTION_CONTEXT_TRIMMED]"));
    const first = await engine.assemble({ ...SESSION, messages: realMessages, tokenBudget: 20_000 });
    expect(first.messages.length).toBeLessThan(realMessages.length);
    expect(first.estimatedTokens).toBeLessThanOrEqual(20_000);
    expect(trimmed()).toHaveLength(1);
    expect(trimmed()[0]).toMatch(/^compaction: session s-1: The request leaves out \d+ older message\(s\) of the context's \d+ to fit the budget/);
    // The same messages left out again, with a new message at the end: nothing new to say.
    const next = [...realMessages, { role: "user", content: "one more question", timestamp: 42 } as AgentMessage];
    const second = await engine.assemble({ ...SESSION, messages: next, tokenBudget: 20_000 });
    expect(second.messages.at(-1)).toEqual(next.at(-1));
    expect(trimmed()).toHaveLength(1);
  });

  it("commitTurn is idempotent per advancement key", async () => {
    const project = makeProject({ ".compactionrc": "preset: safeguard\n" });
    const { registered } = fakeHost({ cwd: project });
    const engine = await registered.engine!({ workspaceDir: project });
    const turn = { ...SESSION, advancementKey: "turn-1", messages: realMessages.slice(0, 2) };
    expect(await engine.commitTurn!(turn)).toEqual({ status: "committed" });
    expect(await engine.commitTurn!(turn)).toEqual({ status: "duplicate" });
    expect(await engine.commitTurn!({ ...turn, advancementKey: "turn-2" })).toEqual({ status: "committed" });
  });

  it("when OpenClaw keeps its state store from the plugin, the records go to the agent's directory and survive a restart", async () => {
    const project = makeProject({ ".compactionrc": "preset: safeguard\ntokenizer: { counter: estimate }\n" });
    const agentDir = join(project, "agent");
    const untrusted = (): ReturnType<typeof fakeHost> => {
      const host = fakeHost({ cwd: project }, "untrusted");
      return host;
    };
    const first = untrusted();
    const engine = await first.registered.engine!({ workspaceDir: project, agentDir });
    await engine.assemble({ ...SESSION, messages: realMessages, tokenBudget: 30_000 });
    expect((await engine.compact({ ...SESSION, tokenBudget: 30_000, force: true })).compacted).toBe(true);
    expect(first.registered.warnings.join("\n")).toMatch(/only available for trusted plugins.*kept in .*compaction-plugin/s);
    // A new OpenClaw process: the compaction is applied again, and a committed turn is a duplicate.
    const second = untrusted();
    const again = await second.registered.engine!({ workspaceDir: project, agentDir });
    const assembled = await again.assemble({ ...SESSION, messages: realMessages, tokenBudget: 30_000 });
    expect(assembled.messages[0]?.role).toBe("compactionSummary");
    const turn = { ...SESSION, advancementKey: "k", messages: [] };
    expect(await engine.commitTurn!(turn)).toEqual({ status: "committed" });
    expect(await again.commitTurn!(turn)).toEqual({ status: "duplicate" });
  });

  it("rejects settings that are not the plugin's, naming the key", () => {
    expect(() => fakeHost({ presets: "rolling" })).toThrow(/plugins\.entries\.compaction\.config\.presets is not a setting/);
    expect(() => fakeHost({ pruneContext: "yes" })).toThrow(/pruneContext must be true or false/);
  });
});

describe("the summary-only compaction provider", () => {
  it("summarizes what OpenClaw hands it with the config's summarizer, updating the previous summary", async () => {
    const project = makeProject({ ".compactionrc": "preset: safeguard\n" });
    const { registered } = fakeHost({ cwd: project });
    const messages = realMessages.slice(0, 40);
    const summary = await registered.provider!.summarize({ messages, previousSummary: "Earlier: the user set up the repo.", customInstructions: "the theme" });
    expect(summary.length).toBeGreaterThan(0);
    expect(summary).toContain("Earlier: the user set up the repo.");
  });

  it("reads the .compactionrc of OpenClaw's default agent workspace when the plugin names no cwd", async () => {
    const workspace = makeProject({ ".compactionrc": "preset: no-such-preset\n" });
    const { registered } = fakeHost({}, "trusted", { agents: { defaults: { workspace } } });
    await expect(registered.provider!.summarize({ messages: realMessages.slice(0, 4) })).rejects.toMatchObject({ code: "COMPACTION_PLUGIN_NOT_FOUND" });
    const elsewhere = makeProject({ ".compactionrc": "preset: safeguard\n" });
    const named = fakeHost({ cwd: elsewhere }, "trusted", { agents: { defaults: { workspace } } });
    expect((await named.registered.provider!.summarize({ messages: realMessages.slice(0, 4) })).length).toBeGreaterThan(0);
  });
});

describe("anchors", () => {
  it("find the last message with the same role, timestamp and content, and no other", () => {
    fc.assert(
      fc.property(fc.array(fc.record({ role: fc.constantFrom("user", "assistant"), content: fc.string({ maxLength: 6 }), timestamp: fc.integer({ min: 0, max: 5 }) }), { minLength: 1, maxLength: 30 }), fc.nat(), (list, pick) => {
        const messages = list as AgentMessage[];
        const index = pick % messages.length;
        const found = findAnchor(messages, anchorOf(messages[index] as AgentMessage));
        expect(found).toBeGreaterThanOrEqual(index);
        expect(anchorOf(messages[found] as AgentMessage)).toEqual(anchorOf(messages[index] as AgentMessage));
        expect(messages.slice(found + 1).some((m) => JSON.stringify(anchorOf(m)) === JSON.stringify(anchorOf(messages[index] as AgentMessage)))).toBe(false);
      }),
    );
  });

  it("sends the whole transcript, and says why, when the first kept message was rewound away", async () => {
    const project = makeProject({ ".compactionrc": "preset: safeguard\ntokenizer: { counter: estimate }\n" });
    const { registered } = fakeHost({ cwd: project });
    const engine = await registered.engine!({ workspaceDir: project });
    await engine.assemble({ ...SESSION, messages: realMessages, tokenBudget: 30_000 });
    expect((await engine.compact({ ...SESSION, tokenBudget: 30_000, force: true })).compacted).toBe(true);
    const rewound = realMessages.slice(0, 20); // OpenClaw rewound the session to before the kept messages
    const assembled = await engine.assemble({ ...SESSION, messages: rewound, tokenBudget: 1_000_000 });
    expect(assembled.messages).toEqual(rewound);
    expect(registered.warnings.join("\n")).toMatch(/no longer in OpenClaw's transcript/);
  });
});

describe("the workspace's code configuration (issue 16)", () => {
  // A .compactionrc.mjs that writes a marker file when it runs, and picks a preset that shows it applied.
  const codeConfig = (marker: string) =>
    `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "ran");\nexport default { preset: "sliding-window", tokenizer: { counter: "estimate" } };\n`;

  it("is not run unless the user enables projectCode: the defaults apply and one warning says how to trust it", async () => {
    const project = makeProject({});
    const marker = join(project, "marker.txt");
    const withConfig = makeProject({ ".compactionrc.mjs": codeConfig(marker) });
    const { registered } = fakeHost({ cwd: withConfig });
    const engine = await registered.engine!({ workspaceDir: withConfig });
    await engine.assemble({ ...SESSION, messages: structuredClone(realMessages), tokenBudget: 60_000 });
    const result = await engine.compact({ ...SESSION, tokenBudget: 60_000, force: true });
    expect(result).toMatchObject({ ok: true, compacted: true });
    expect((result.result?.details as { strategy?: string }).strategy).toBe("safeguard"); // the default preset
    const { existsSync } = await import("node:fs");
    expect(existsSync(marker)).toBe(false);
    const untrusted = registered.warnings.filter((warning) => warning.includes(".compactionrc.mjs"));
    expect(untrusted).toHaveLength(1);
    expect(untrusted[0]).toContain("projectCode: true");
  });

  it("is run when the user enables projectCode in OpenClaw's config", async () => {
    const project = makeProject({});
    const marker = join(project, "marker.txt");
    const withConfig = makeProject({ ".compactionrc.mjs": codeConfig(marker) });
    const { registered } = fakeHost({ cwd: withConfig, projectCode: true });
    const engine = await registered.engine!({ workspaceDir: withConfig });
    await engine.assemble({ ...SESSION, messages: structuredClone(realMessages), tokenBudget: 60_000 });
    const result = await engine.compact({ ...SESSION, tokenBudget: 60_000, force: true });
    expect((result.result?.details as { strategy?: string }).strategy).toBe("sliding-window");
    const { existsSync } = await import("node:fs");
    expect(existsSync(marker)).toBe(true);
  });

  it("rejects a projectCode that is not true or false", () => {
    expect(() => fakeHost({ projectCode: "yes" })).toThrow(/projectCode must be true or false/);
  });
});
