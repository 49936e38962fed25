/**
 * Background compaction in the context engine, driven as OpenClaw drives it (assemble before each
 * model call, commitTurn after each turn) on a real pi session, with the real model summarizer
 * (`summarizer-openai` from `.compactionrc`) against a local server that holds each summary until
 * the test lets it answer. The same in the real OpenClaw: openclaw-host.test.ts.
 */
import { makeProject, removeProjects, startHeldModelServer, type HeldModelServer } from "@compaction/core/testing";
import { loadPiMessages, PI_FIXTURES } from "@compaction/fixtures";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { AgentMessage, ContextEngine } from "./openclaw-api.js";
import { fakeHost } from "./test-support/fake-host.js";

const SESSION = { sessionId: "s-bg", sessionKey: "agent:main:main" };
const BUDGET = 30_000;
const realMessages = loadPiMessages(PI_FIXTURES[0] as string, { context: true }) as unknown as AgentMessage[];

const servers: HeldModelServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});
afterAll(() => removeProjects());

async function engineWithHeldModel(pluginConfig: Record<string, unknown> = {}) {
  const server = await startHeldModelServer({ answerAfterMs: 10_000 });
  servers.push(server);
  const plugins = `[[summarizer-openai, { model: held-model, baseUrl: "${server.baseUrl}", maxRetries: 0 }]]`;
  const project = makeProject({ ".compactionrc": `preset: safeguard\ntokenizer: { counter: estimate }\nplugins: ${plugins}\n` });
  const host = fakeHost({ cwd: project, ...pluginConfig });
  const engine = await host.registered.engine!({ workspaceDir: project });
  return { server, engine, ...host };
}

/** OpenClaw's turns over the real session, four messages each: assemble, then commitTurn. */
class Turns {
  held: AgentMessage[] = realMessages.slice(0, 10);
  #next = 10;
  /** What each assemble returned. */
  readonly sent: AgentMessage[][] = [];

  constructor(readonly engine: ContextEngine) {}

  async one(): Promise<void> {
    const turn = realMessages.slice(this.#next, this.#next + 4);
    this.#next += 4;
    expect(turn.length, "the session has turns left").toBeGreaterThan(0);
    // OpenClaw's budget for the call is its context budget less the turn's pending prompt, which the messages do not hold yet.
    const pending = Math.ceil(JSON.stringify(turn.slice(0, 1)).length / 4);
    this.sent.push((await this.engine.assemble({ ...SESSION, messages: this.held, tokenBudget: BUDGET - pending })).messages);
    this.held = [...this.held, ...turn];
    await this.engine.commitTurn!({ ...SESSION, advancementKey: `turn-${this.#next}`, messages: turn });
  }

  async until(condition: () => boolean, most = 60): Promise<void> {
    for (let i = 0; i < most && !condition(); i++) await this.one();
    expect(condition()).toBe(true);
  }
}

const started = (infos: readonly string[]) => infos.filter((info) => info.startsWith("compaction: preparing the next compaction in the background"));
const readyOf = (infos: readonly string[]) => infos.filter((info) => info.startsWith("compaction: the compaction prepared in the background is ready"));
const putInPlace = (infos: readonly string[]) => infos.filter((info) => info.includes("put the compaction prepared in the background"));
const until = async (condition: () => boolean): Promise<void> => {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(condition()).toBe(true);
};

describe("the context engine, compacting in the background", () => {
  it("prepares after a turn past the prepare mark, and a later turn puts it in place without asking for a summary", async () => {
    const { server, engine, registered, namespaces } = await engineWithHeldModel();
    const turns = new Turns(engine);
    await turns.engine.assemble({ ...SESSION, messages: turns.held, tokenBudget: BUDGET });
    await turns.until(() => started(registered.infos).length > 0);
    expect(started(registered.infos)[0]).toMatch(/past the prepare mark\)\.$/);
    expect(namespaces.get("session-compactions")?.has(SESSION.sessionId) ?? false).toBe(false);
    // The user reads the answer and types: the summary is written meanwhile.
    await until(() => server.requests.length > 0);
    server.release();
    await until(() => readyOf(registered.infos).length > 0);
    server.hold();
    const asked = server.requests.length;
    await turns.until(() => putInPlace(registered.infos).length > 0);
    // Put in place with no summary asked for, and none waited for.
    expect(server.requests.length).toBe(asked);
    expect(registered.infos.some((info) => info.startsWith("compaction: waited"))).toBe(false);
    const record = namespaces.get("session-compactions")?.get(SESSION.sessionId) as { summary: string; preset: string } | undefined;
    expect(record?.summary).toContain("held summary");
    expect(record?.preset).toBe("safeguard");
    // The next request: the summary, then what it kept and every message since, the newest last.
    await turns.one();
    const sent = turns.sent.at(-1) ?? [];
    expect(sent[0]).toMatchObject({ role: "compactionSummary", summary: record?.summary });
    expect(sent.at(-1)).toEqual(turns.held.at(-5));
  });

  it("OpenClaw's /compact with instructions drops the prepared compaction, says what it cost, and asks the model for a new summary", async () => {
    const { server, engine, registered } = await engineWithHeldModel();
    const turns = new Turns(engine);
    await turns.until(() => started(registered.infos).length > 0);
    await until(() => server.requests.length > 0);
    server.release();
    await until(() => readyOf(registered.infos).length > 0);
    const asked = server.requests.length;
    const result = await engine.compact({ ...SESSION, tokenBudget: BUDGET, customInstructions: "the theme selector" });
    expect(result).toMatchObject({ ok: true, compacted: true });
    expect(server.requests.length).toBeGreaterThan(asked);
    expect(registered.infos).toContainEqual(expect.stringMatching(/^compaction: the compaction prepared in the background was dropped: the compaction asked for was given instructions .* \(it compacted \d+ messages of a \d+-token context in [\d.]+ s\)\.$/));
  });

  it("OpenClaw's compact without instructions takes the prepared compaction, waiting for it while it is in flight", async () => {
    const { server, engine, registered, namespaces } = await engineWithHeldModel();
    const turns = new Turns(engine);
    await turns.until(() => started(registered.infos).length > 0);
    await until(() => server.requests.length > 0);
    const asked = server.requests.length;
    const compacting = engine.compact({ ...SESSION, tokenBudget: BUDGET, force: true });
    server.release();
    const result = await compacting;
    expect(result).toMatchObject({ ok: true, compacted: true });
    // Only the preparation's own calls: its history summary and, the turn being split to keep the
    // newest messages, that turn's early part; compact asked for none of its own.
    expect(asked).toBe(1);
    expect(server.requests.length).toBe(2);
    expect(started(registered.infos)).toHaveLength(1);
    expect(registered.infos.some((info) => /dropped/.test(info))).toBe(false);
    expect(registered.infos).toContainEqual(expect.stringMatching(/^compaction: waited [\d.]+ s for the compaction prepared in the background\.$/));
    expect((namespaces.get("session-compactions")?.get(SESSION.sessionId) as { summary: string }).summary).toContain("held summary");
  });

  it("background: false compacts at the threshold, the turn asking for the summary itself", async () => {
    const { server, engine, registered, namespaces } = await engineWithHeldModel({ background: false });
    server.release();
    const turns = new Turns(engine);
    await turns.until(() => namespaces.get("session-compactions")?.has(SESSION.sessionId) ?? false);
    expect(started(registered.infos)).toEqual([]);
    expect(server.requests.length).toBeGreaterThan(0);
  });

  it("rejects a background setting it does not know, naming it", async () => {
    expect(() => fakeHost({ background: "later" })).toThrow(/plugins\.entries\.compaction\.config\.background must be true, false or "auto"/);
  });
});
