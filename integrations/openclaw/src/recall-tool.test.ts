import { loadPiMessages, PI_FIXTURES } from "@compaction/fixtures";
import { makeProject, removeProjects } from "@compaction/core/testing";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentMessage, AgentTool, ToolFactoryContext } from "./openclaw-api.js";
import { anchorOf } from "./anchor.js";
import { journalName, RecallJournal } from "./recall-journal.js";
import { RECALL_TOOL_NAME } from "./recall-tool.js";
import { fakeHost } from "./test-support/fake-host.js";

afterAll(() => removeProjects());

const MANIFEST = JSON.parse(readFileSync(new URL("../openclaw.plugin.json", import.meta.url), "utf8")) as { contracts?: { tools?: string[] } };
const realMessages = loadPiMessages(PI_FIXTURES[0] as string, { context: true }) as unknown as AgentMessage[];
/** A user request only the evicted part of the session holds. */
const PLANTED: AgentMessage = { role: "user", content: [{ type: "text", text: "Keep the ZEBRAFISH-42 migration behind the feature flag until the audit passes." }], timestamp: 1_700_000_000_000 };
const transcript = [PLANTED, ...realMessages];
const BUDGET = 60_000;
const CONFIG = "tokenizer: { counter: estimate }\nagents:\n  roller: { preset: rolling }\n  keeper: { preset: safeguard }\n";
const OURS = { plugins: { slots: { contextEngine: "compaction" } } };

function setUp() {
  const project = makeProject({ ".compactionrc": CONFIG });
  const agentDir = join(project, "state", "agents", "roller", "agent");
  const host = fakeHost({ cwd: project });
  const [tool] = host.registered.tools;
  if (tool === undefined) throw new Error("no tool registered");
  const context = (agent: string, extra: Partial<ToolFactoryContext> = {}): ToolFactoryContext => ({
    config: OURS,
    workspaceDir: project,
    agentDir,
    agentId: agent,
    sessionKey: `agent:${agent}:main`,
    sessionId: `${agent}-session`,
    ...extra,
  });
  return { project, agentDir, host, tool, context };
}

async function text(tool: AgentTool, args: unknown): Promise<string> {
  const result = await tool.execute("call-1", args);
  return result.content.map((part) => part.text).join("\n");
}

describe("compaction_recall, recall's tool in OpenClaw", () => {
  it("is registered as a factory under the one name the manifest declares, which is not OpenClaw's memory_search", () => {
    const { tool } = setUp();
    expect(tool.name).toBe(RECALL_TOOL_NAME);
    expect(RECALL_TOOL_NAME).not.toBe("memory_search");
    expect(MANIFEST.contracts?.tools).toEqual([RECALL_TOOL_NAME]);
  });

  it("after a rolling compaction, the eviction note names it and a call returns the evicted text", async () => {
    const { host, tool, context, agentDir } = setUp();
    const session = { sessionId: "roller-session", sessionKey: "agent:roller:main" };
    const engine = await host.registered.engine!({ workspaceDir: context("roller").workspaceDir, agentDir });
    await engine.assemble({ ...session, messages: transcript, tokenBudget: BUDGET });
    const result = await engine.compact({ ...session, tokenBudget: BUDGET, force: true });
    expect(result).toMatchObject({ ok: true, compacted: true });
    expect((result.result?.details as { strategy?: string }).strategy).toBe("rolling");

    const assembled = await engine.assemble({ ...session, messages: transcript, tokenBudget: BUDGET });
    const sent = JSON.stringify(assembled.messages);
    expect(sent).not.toContain("ZEBRAFISH-42"); // evicted
    expect(sent).toContain(`Full transcript available via ${RECALL_TOOL_NAME}`);
    expect(sent).not.toMatch(/memory_search/);

    // After a compaction OpenClaw hands the engine what assemble returned, plus the new turn: the
    // new turn is recorded after the kept messages, and the evicted ones stay.
    await engine.assemble({ ...session, messages: assembled.messages, tokenBudget: BUDGET });
    const next: AgentMessage[] = [{ role: "user", content: "Then tag the OKAPI-9 release.", timestamp: 1_900_000_000_000 }];
    await engine.commitTurn!({ ...session, advancementKey: "after-view", messages: next });
    const journal = new RecallJournal(join(agentDir, "compaction-plugin", "recall", journalName(session.sessionId)), session.sessionId);
    expect(journal.length).toBe(transcript.length + 1);

    const given = tool.factory(context("roller")) as AgentTool;
    expect(given.name).toBe(RECALL_TOOL_NAME);
    expect(given.parameters).toMatchObject({ type: "object" });
    const found = await text(given, { query: "ZEBRAFISH-42 migration" });
    expect(found).toContain("ZEBRAFISH-42");
    const entryId = /entry (\S+) ·/.exec(found)?.[1];
    expect(entryId).toBeDefined();
    expect(await text(given, { entryId })).toContain("Keep the ZEBRAFISH-42 migration behind the feature flag until the audit passes.");
    expect(await text(given, { query: "OKAPI-9" })).toContain("OKAPI-9 release");
    // Tool output the agent no longer sees is found too.
    const toolResult = realMessages.find((message) => message.role === "toolResult" && JSON.stringify(message["content"]).includes("package.json"));
    if (toolResult !== undefined) expect(await text(given, { query: "package.json" })).toMatch(/toolResult/);
  });

  it("a later process (a new OpenClaw run) finds the evicted text from the journal on disk", async () => {
    const { project, agentDir, context } = setUp();
    const session = { sessionId: "roller-session", sessionKey: "agent:roller:main" };
    const first = fakeHost({ cwd: project });
    const engine = await first.registered.engine!({ workspaceDir: project, agentDir });
    await engine.assemble({ ...session, messages: transcript, tokenBudget: BUDGET });
    expect((await engine.compact({ ...session, tokenBudget: BUDGET, force: true })).compacted).toBe(true);

    const second = fakeHost({ cwd: project });
    const factory = second.registered.tools[0]!.factory;
    const given = factory(context("roller")) as AgentTool; // nothing built in this process yet: offered, and loads on the call
    expect(given.name).toBe(RECALL_TOOL_NAME);
    expect(await text(given, { query: "ZEBRAFISH-42" })).toContain("ZEBRAFISH-42");
  });

  it("is not offered to an agent whose preset has no recall once its config is known, and says why if called before", async () => {
    const { tool, context } = setUp();
    const early = tool.factory(context("keeper")) as AgentTool;
    await expect(early.execute("call-1", { query: "anything" })).rejects.toThrow(/compaction_recall is not available for this agent: its \.compactionrc preset \(safeguard\) keeps no recall index/);
    expect(tool.factory(context("keeper"))).toBeNull();
  });

  it("is not offered where another context engine holds the slot, or without a session", () => {
    const { tool, context } = setUp();
    expect(tool.factory(context("roller", { config: { plugins: { slots: { contextEngine: "legacy" } } } }))).toBeNull();
    expect(tool.factory(context("roller", { config: {} }))).toBeNull();
    expect(tool.factory(context("roller", { sessionId: undefined }))).toBeNull();
  });

  it("answers a search before anything was recorded with a reason, not an empty index", async () => {
    const { tool, context } = setUp();
    const given = tool.factory(context("roller", { sessionId: "fresh" })) as AgentTool;
    await expect(given.execute("call-1", { query: "x" })).rejects.toThrow(/no message of this session has been recorded yet/);
  });

  it("records what each committed turn adds (OpenClaw 2026.9 calls commitTurn, not afterTurn), so the tool finds it", async () => {
    const { host, project, agentDir, tool, context } = setUp();
    const engine = await host.registered.engine!({ workspaceDir: project, agentDir });
    const session = { sessionId: "roller-session", sessionKey: "agent:roller:main" };
    const start = realMessages.slice(0, 10);
    await engine.assemble({ ...session, messages: start, tokenBudget: BUDGET });
    const journal = new RecallJournal(join(agentDir, "compaction-plugin", "recall", journalName(session.sessionId)), session.sessionId);
    expect(journal.length).toBe(10);
    const turn: AgentMessage[] = [
      { role: "user", content: "Rename the QUOKKA-7 bucket before Friday.", timestamp: 1_800_000_000_000 },
      { role: "assistant", content: [{ type: "text", text: "Noted." }], timestamp: 1_800_000_000_001 },
    ];
    expect(await engine.commitTurn!({ ...session, advancementKey: "turn-1", messages: turn })).toEqual({ status: "committed" });
    expect(new RecallJournal(journal.path, session.sessionId).length).toBe(12);
    const given = tool.factory(context("roller")) as AgentTool;
    expect(await text(given, { query: "QUOKKA-7" })).toContain("QUOKKA-7 bucket");
    // The next assemble shows the same messages: nothing is written again.
    await engine.assemble({ ...session, messages: [...start, ...turn], tokenBudget: BUDGET });
    expect(new RecallJournal(journal.path, session.sessionId).length).toBe(12);
  });

  it("the journal is written only for agents with recall", async () => {
    const { host, project, agentDir } = setUp();
    const engine = await host.registered.engine!({ workspaceDir: project, agentDir });
    const session = { sessionId: "keeper-session", sessionKey: "agent:keeper:main" };
    await engine.assemble({ ...session, messages: transcript, tokenBudget: BUDGET });
    await engine.afterTurn!({ ...session, messages: transcript, prePromptMessageCount: 0, tokenBudget: 10_000_000 });
    expect(existsSync(join(agentDir, "compaction-plugin", "recall"))).toBe(false);
    await engine.afterTurn!({ sessionId: "roller-session", sessionKey: "agent:roller:main", messages: transcript, prePromptMessageCount: 0, tokenBudget: 10_000_000 });
    expect(existsSync(join(agentDir, "compaction-plugin", "recall"))).toBe(true);
  });
});

describe("the recall journal", () => {
  const message = (n: number): AgentMessage => ({ role: n % 2 === 0 ? "user" : "assistant", content: `message ${n}`, timestamp: n });
  const journaled = (path: string): unknown[] =>
    readFileSync(path, "utf8")
      .split("\n")
      .slice(1)
      .filter((line) => line !== "")
      .map((line) => (JSON.parse(line) as { message: unknown }).message);

  it("holds exactly the newest messages OpenClaw showed, appending while they grow and starting again when they do not", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ keep: fc.nat({ max: 12 }), add: fc.nat({ max: 6 }), fresh: fc.boolean() }), { minLength: 1, maxLength: 12 }),
        (steps) => {
          const dir = makeProject({});
          const path = join(dir, "journal.jsonl");
          let journal = new RecallJournal(path, "s");
          let messages: AgentMessage[] = [];
          let next = 0;
          for (const [index, step] of steps.entries()) {
            // OpenClaw's view: a prefix of the last one (a rewind) plus new messages.
            messages = [...messages.slice(0, Math.min(step.keep, messages.length)), ...Array.from({ length: step.add }, () => message(next++))];
            const before = existsSync(path) ? journaled(path).length : 0;
            const result = journal.sync(messages);
            if (!result.rewritten && existsSync(path) && before > 0) expect(result.appended).toBe(Math.max(0, messages.length - before));
            if (step.fresh || index === steps.length - 1) journal = new RecallJournal(path, "s"); // another process
            const held = journaled(path);
            // Growth is appended; a shorter view that still matches leaves the longer journal alone.
            expect(held.slice(0, messages.length)).toEqual(messages);
          }
          const lines = readFileSync(path, "utf8").split("\n").filter((line) => line !== "");
          const ids = lines.slice(1).map((line) => (JSON.parse(line) as { id: string; parentId: string | null }).id);
          expect(new Set(ids).size).toBe(ids.length);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("from a view (the messages from a journaled one on) appends only what continues it, and never drops what it holds", () => {
    const dir = makeProject({});
    const path = join(dir, "journal.jsonl");
    const all = Array.from({ length: 8 }, (_, n) => message(n));
    const journal = new RecallJournal(path, "s");
    journal.sync(all.slice(0, 6));
    expect(journal.syncFrom(anchorOf(all[3] as AgentMessage), all.slice(3, 8))).toEqual({ appended: 2, rewritten: false });
    expect(journaled(path)).toEqual(all);
    expect(journal.syncFrom(anchorOf(all[3] as AgentMessage), all.slice(3, 6))).toEqual({ appended: 0, rewritten: false });
    expect(journal.syncFrom(anchorOf(message(99)), [message(99)])).toBeUndefined(); // not journaled
    expect(journal.syncFrom(anchorOf(all[3] as AgentMessage), [all[3] as AgentMessage, message(50)])).toBeUndefined(); // does not continue it
    expect(journaled(path)).toEqual(all);
  });

  it("a torn last line (a crash mid-append) is replaced from OpenClaw's messages", async () => {
    const dir = makeProject({});
    const path = join(dir, "journal.jsonl");
    const messages = [message(1), message(2), message(3)];
    new RecallJournal(path, "s").sync(messages.slice(0, 2));
    const { appendFileSync } = await import("node:fs");
    appendFileSync(path, '{"type":"message","id":"m3","parentId":"m2","timest');
    const again = new RecallJournal(path, "s");
    again.sync(messages);
    expect(journaled(path)).toEqual(messages);
  });
});
