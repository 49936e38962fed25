/**
 * Background compaction in compactionHistory, in a real LangChain v1 agent (`createAgent`, driven
 * by @langchain/core's `fakeModel()`), threads in a real SQLite session store, with the real model
 * summarizer (`summarizer-openai` from `.compactionrc`) against a local server that holds each
 * summary until the test lets it answer. A compaction prepared in one run is written while no run
 * is on the thread, and put in place at the threshold of a later one.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ErrorCodes } from "@compaction/core";
import { type HeldModelServer, startHeldModelServer } from "@compaction/core/testing";
import { createContextManager, type ThreadEvent } from "@compaction/context-manager";
import { buildContext, type CompactionEntry, type EntryStore, MemoryEntryStore, openSqliteStore } from "@compaction/transcript";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { createAgent } from "langchain";
import { afterEach, describe, expect, it } from "vitest";
import { compactionHistory } from "./compaction-history.js";
import { toPiMessage } from "./pi-messages.js";

const TMP = fileURLToPath(new URL("../../.tmp/", import.meta.url));
const WORKER = fileURLToPath(new URL("../test-support/history-exit-worker.mjs", import.meta.url));
const made: string[] = [];
const servers: HeldModelServer[] = [];
const histories: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const history of histories.splice(0)) await history.close();
  for (const server of servers.splice(0)) await server.close();
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const THREAD_ID = "audit-thread-5c1d";
const SYSTEM = "You are a terse build auditor.";
/**
 * The window and the turns: each chatter message is about 500 tokens, so the first run's input
 * (ten of them, with the replies between) is past the prepare mark (0.8 of the threshold of about
 * 6,200 tokens) and below the threshold, and three more take the thread past the threshold and
 * below the window less the reserve (7,000).
 */
const CONFIG = { contextWindow: 8_000, reserveTokens: 1_000 };
const FIRST_RUN_TURNS = 10;

/** A project (inside the repo, so packages resolve as installed) whose safeguard preset summarises with a held model. */
async function heldProject(answerAfterMs?: number): Promise<{ cwd: string; server: HeldModelServer }> {
  const server = await startHeldModelServer(answerAfterMs === undefined ? {} : { answerAfterMs });
  servers.push(server);
  const cwd = project({ ...CONFIG, agents: { auditor: { preset: "safeguard", plugins: [["summarizer-openai", { model: "held-model", baseUrl: server.baseUrl, maxRetries: 0 }]] } } });
  return { cwd, server };
}

function project(config: object): string {
  mkdirSync(TMP, { recursive: true });
  const cwd = mkdtempSync(join(TMP, "thread-"));
  made.push(cwd);
  writeFileSync(join(cwd, "package.json"), JSON.stringify({ name: "user-project", private: true }));
  writeFileSync(join(cwd, ".compactionrc.json"), JSON.stringify(config));
  return cwd;
}

/** About 500 tokens of distinct text for turn `turn`. */
function chatter(turn: number): string {
  return Array.from({ length: 24 }, (_, line) => `Turn ${turn} note ${line}: the build of service-${turn}-${line} passed on runner ${(turn * 7 + line) % 13}.`).join(" ");
}

/** Turns `from` to `to` (exclusive) as a run's input: each a question, all but the last answered. */
function turns(from: number, to: number): BaseMessage[] {
  const messages: BaseMessage[] = [];
  for (let turn = from; turn < to; turn++) {
    messages.push(new HumanMessage({ id: `h-${turn}`, content: chatter(turn) }));
    if (turn < to - 1) messages.push(new AIMessage({ id: `a-${turn}`, content: `Noted turn ${turn}.` }));
  }
  return messages;
}

/** A history on `file` whose stores are counted as they are opened and closed. */
function historyOn(file: string, cwd: string, extra: { background?: boolean } = {}) {
  const events: ThreadEvent[] = [];
  const stores = { opened: 0, closed: 0 };
  const history = compactionHistory({
    cwd,
    agent: "auditor",
    ...extra,
    on: (event) => events.push(event),
    openStore: async (threadId) => {
      const store = await openSqliteStore({ file, session: threadId, create: { cwd } });
      stores.opened += 1;
      const close = store.close.bind(store);
      return Object.assign(store, { close: () => ((stores.closed += 1), close()) }) as EntryStore;
    },
  });
  histories.push(history);
  const model = fakeModel();
  for (let reply = 0; reply < 10; reply++) model.respond(new AIMessage(`Noted, reply ${reply}.`));
  const agent = createAgent({ model, tools: [history.memorySearch], systemPrompt: SYSTEM, middleware: [history.middleware] });
  const invoke = (messages: BaseMessage[]) => agent.invoke({ messages }, { configurable: { thread_id: THREAD_ID } });
  return { history, events, stores, model, invoke };
}

const background = (events: readonly ThreadEvent[], type: string) => events.filter((event) => event.type === "background" && event.background.type === type);

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1_000 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!condition()) throw new Error(`timed out waiting until ${what}`);
}

function databaseFile(cwd: string): string {
  return join(cwd, "threads.sqlite");
}

/** The first run: past the prepare mark, so a compaction starts and is held; its store stays open while it is written. */
async function firstRun(thread: ReturnType<typeof historyOn>, server: HeldModelServer): Promise<void> {
  await thread.invoke(turns(0, FIRST_RUN_TURNS));
  expect(background(thread.events, "start")).toHaveLength(1);
  expect(thread.events.filter((event) => event.type === "compaction-start")).toEqual([]);
  await until(() => server.pending === 1, "the summary was asked for");
  expect(thread.stores).toEqual({ opened: 1, closed: 0 });
}

/** Lets the held summary answer, and waits until the store left open for it is closed. */
async function settle(thread: ReturnType<typeof historyOn>, server: HeldModelServer): Promise<void> {
  server.release();
  await until(() => thread.stores.closed === thread.stores.opened, "the store left open for the compaction was closed");
  server.hold();
}

describe("compactionHistory in the background", () => {
  it("puts a compaction prepared in one run in place at the threshold of a later run, asking for no summary and waiting for none; the thread is then its summary, what it kept and everything appended since", async () => {
    const { cwd, server } = await heldProject();
    const file = databaseFile(cwd);
    const thread = historyOn(file, cwd);
    await firstRun(thread, server);
    await settle(thread, server);
    expect(background(thread.events, "ready")).toMatchObject([{ background: { status: "compacted" } }]);
    // Ready below the threshold: kept for a later run, nothing written yet, and the claim released with the store.
    const check = await openSqliteStore({ file, session: THREAD_ID });
    expect((await check.entries()).filter((entry) => entry.type === "compaction")).toEqual([]);
    expect(await check.preparationClaims?.current()).toBeNull();
    await check.close();

    const snapshot = (background(thread.events, "start")[0] as { background: { messages: number } }).background.messages;
    // The preparation's own calls (its history summary, and a split turn's early part when the
    // newest messages kept start inside a turn); the second run asks for none.
    const asked = server.requests.length;
    await thread.invoke(turns(FIRST_RUN_TURNS, FIRST_RUN_TURNS + 3));
    expect(server.requests).toHaveLength(asked);
    expect(background(thread.events, "waiting")).toEqual([]);
    const applied = thread.events.find((event) => event.type === "compaction-start");
    // The first run's reply and the second run's input (three questions, two answers) came after its snapshot.
    expect(applied).toMatchObject({ type: "compaction-start", prepared: { appended: 6 } });
    const end = thread.events.find((event) => event.type === "compaction-end");
    expect(end).toMatchObject({ type: "compaction-end", status: "compacted" });
    // The model call of the second run already had the prepared summary first.
    const sent = (thread.model.calls[1]!.messages as BaseMessage[]).filter((message) => message.getType() !== "system");
    expect(sent[0]!.additional_kwargs["lc_source"]).toBe("compaction_summary");

    const store = await openSqliteStore({ file, session: THREAD_ID });
    const entries = await store.entries();
    const context = buildContext((await store.branch({ fromBoundary: true })).entries);
    await store.close();
    const compaction = entries.find((entry): entry is CompactionEntry => entry.type === "compaction")!;
    expect(compaction.id).toBe(end?.type === "compaction-end" ? end.entryId : undefined);
    expect(compaction.summary).toContain("held summary 1");
    // Every message is in the store; the context is the summary, then a run of them from the first
    // one kept (within the snapshot) to the newest: nothing appended since the snapshot is missing.
    const messageIds = entries.filter((entry) => entry.type === "message").map((entry) => entry.id);
    expect(messageIds).toHaveLength(FIRST_RUN_TURNS * 2 + 6);
    const firstKept = messageIds.indexOf(compaction.firstKeptEntryId);
    expect(firstKept).toBeGreaterThan(0);
    expect(firstKept).toBeLessThan(snapshot);
    expect(context.entryIds).toEqual([compaction.id, ...messageIds.slice(firstKept)]);
    expect(context.messages[0]).toMatchObject({ role: "compactionSummary", summary: compaction.summary });
  });

  it("goes on with the store the last run left open when a run starts while the compaction is still being written, and closes it once it is ready", async () => {
    const { cwd, server } = await heldProject();
    const thread = historyOn(databaseFile(cwd), cwd);
    await firstRun(thread, server);
    const state = await thread.invoke([new HumanMessage({ id: "status", content: "Any failures so far?" })]);
    expect(state.messages.at(-1)?.text).toMatch(/^Noted, reply 1/);
    // The second run used the store left open, and left it open again: the compaction is still held.
    expect(thread.stores).toEqual({ opened: 1, closed: 0 });
    expect(background(thread.events, "start")).toHaveLength(1);
    await settle(thread, server);
    expect(thread.stores).toEqual({ opened: 1, closed: 1 });
  });

  it.each([
    [
      "compacted by hand",
      async (file: string, plainCwd: string) => {
        const store = await openSqliteStore({ file, session: THREAD_ID });
        const manager = await createContextManager({ store, cwd: plainCwd, background: false });
        expect((await manager.compact()).status).toBe("compacted");
        await manager.dispose();
        await store.close();
      },
      1,
    ],
    [
      "branched from its second message",
      async (file: string) => {
        const store = await openSqliteStore({ file, session: THREAD_ID });
        const second = (await store.entries())[1]!.id;
        await store.append([{ type: "message", parentId: second, message: toPiMessage(new HumanMessage({ id: "again", content: "Start again from the first answer." }), "the branch", Date.now()) }]);
        await store.close();
      },
      0,
    ],
  ] as const)("drops the prepared compaction, never applying it, when the thread was %s between runs, and reports what it cost", async (_, change, compactions) => {
    const { cwd, server } = await heldProject();
    const file = databaseFile(cwd);
    const thread = historyOn(file, cwd);
    await firstRun(thread, server);
    await settle(thread, server);
    await change(file, project({ ...CONFIG, preset: "safeguard" }));

    await thread.invoke([new HumanMessage({ id: "after", content: "Which builds failed?" })]);
    const dropped = background(thread.events, "dropped");
    expect(dropped).toHaveLength(1);
    expect(dropped[0]).toMatchObject({ background: { cost: { reason: "prepare", why: expect.stringContaining("no longer applies") } } });
    expect((dropped[0] as { background: { cost: { compactedMessages: number; tokens: number } } }).background.cost.compactedMessages).toBeGreaterThan(0);
    expect(thread.events.filter((event) => event.type === "compaction-start")).toEqual([]);
    const store = await openSqliteStore({ file, session: THREAD_ID });
    const written = (await store.entries()).filter((entry): entry is CompactionEntry => entry.type === "compaction");
    await store.close();
    expect(written).toHaveLength(compactions);
    for (const entry of written) expect(entry.summary).not.toContain("held summary");
  });

  it("with background: false compacts at the threshold in the run, the run waiting for the model's summary, and closes the store at the run's end", async () => {
    const { cwd, server } = await heldProject(50);
    const file = databaseFile(cwd);
    const thread = historyOn(file, cwd, { background: false });
    await thread.invoke(turns(0, FIRST_RUN_TURNS + 3));
    expect(thread.events.filter((event) => event.type === "background")).toEqual([]);
    const start = thread.events.find((event) => event.type === "compaction-start");
    expect(start).toBeDefined();
    expect(start).not.toHaveProperty("prepared");
    expect(thread.events.find((event) => event.type === "compaction-end")).toMatchObject({ status: "compacted" });
    expect(server.requests).toHaveLength(1);
    expect(thread.stores).toEqual({ opened: 1, closed: 1 });
    const store = await openSqliteStore({ file, session: THREAD_ID });
    const written = (await store.entries()).filter((entry): entry is CompactionEntry => entry.type === "compaction");
    await store.close();
    expect(written.map((entry) => entry.summary)).toEqual([expect.stringContaining("held summary 1")]);
  });

  it("checks background, waitMs and cacheTtlMs when it is created", () => {
    const openStore = () => new MemoryEntryStore();
    expect(() => compactionHistory({ openStore, background: "soon" as never })).toThrow(expect.objectContaining({ code: ErrorCodes.INPUT_INVALID, path: "/background" }));
    expect(() => compactionHistory({ openStore, waitMs: -1 })).toThrow(expect.objectContaining({ code: ErrorCodes.INPUT_INVALID, path: "/waitMs" }));
    expect(() => compactionHistory({ openStore, cacheTtlMs: 0 })).toThrow(expect.objectContaining({ code: ErrorCodes.INPUT_INVALID, path: "/cacheTtlMs" }));
    for (const value of [true, false, "auto"] as const) expect(() => compactionHistory({ openStore, background: value })).not.toThrow();
  });

  it("leaves no store, claim or timer behind once the compaction it prepared is ready: a process that never calls close() exits on its own", async () => {
    const { cwd, server } = await heldProject();
    const file = databaseFile(cwd);
    const child = execFile(process.execPath, ["--disable-warning=ExperimentalWarning", WORKER, file, cwd, THREAD_ID], { cwd, timeout: 60_000 });
    let stdout = "";
    let stderr = "";
    child.stderr?.on("data", (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    // The child's first run ends with its compaction held here; then the summary is let go.
    await new Promise<void>((resolve) => {
      child.stdout?.on("data", (chunk: string) => {
        stdout += chunk;
        if (stdout.includes("ran\n")) resolve();
      });
    });
    await until(() => server.pending === 1, "the child asked for the summary");
    server.release();
    const code = await exited;
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const report = JSON.parse(stdout.slice(stdout.indexOf("ran\n") + 4)) as { opened: number; closed: number; claim: unknown; timers: number; events: string[] };
    expect(report).toEqual({ opened: 1, closed: 1, claim: null, timers: 0, events: ["start", "ready"] });
  });
});
