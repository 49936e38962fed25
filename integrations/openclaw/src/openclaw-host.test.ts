/**
 * The plugin in the real OpenClaw (the `openclaw` package the repo installs on Node 24), all
 * against a fake model on 127.0.0.1 and one OpenClaw Gateway on 127.0.0.1 (started once: an
 * OpenClaw process takes 20-40 s to start on a loaded machine, a turn through a running Gateway
 * a few seconds):
 * - OpenClaw's plugin loader installs it from a local path (`openclaw plugins install -l`: a copy
 *   of this package laid out as an install lays it out, see test-support/plugin-copy.ts), the
 *   install puts it in `plugins.slots.contextEngine`, and the Gateway loads it;
 * - agent main (safeguard): the fake model's "context length exceeded" makes OpenClaw call the
 *   engine's `compact` (its overflow recovery) and retry with the summary instead of the first turn;
 * - agent roller (rolling): `openclaw sessions compact` (the Gateway's manual compaction) evicts
 *   the first turn, and the agent's call of `compaction_recall` returns it;
 * - agent auto (safeguard at 30%): a turn past the threshold compacts, with no overflow or command;
 * - agent prepper (safeguard at 50%, summaries by the real `summarizer-openai` from a model on
 *   127.0.0.1 that holds each until the test lets it answer): the compaction is prepared after a
 *   turn, and put in place at a later one without a summary asked for then;
 * - agent keeper, with OpenClaw's own engine and `agents.defaults.compaction.provider:
 *   "compaction"`: OpenClaw's cut, our summary.
 * Each time the agent's preset from `.compactionrc` must have run, and OpenClaw's transcript must
 * still hold every message. OpenClaw (about 650 MB) is not part of the repository's `npm ci`:
 * scripts/host-install.mjs installs the version pinned in scripts/hosts/openclaw into a cache and
 * links it into this package's node_modules, and `npm test` runs it first. Where OpenClaw cannot
 * run (it needs Node >=24.16) the tests skip saying why; where it could run but is not installed,
 * they fail under CI (CI=true) and elsewhere skip naming the command that installs it.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openClawAgentDatabase, parseOpenClawSession, readOpenClawSession, buildContext } from "@compaction/transcript";
import { type HeldModelServer, startHeldModelServer } from "@compaction/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyPluginForInstall } from "./test-support/plugin-copy.js";
import { isCi, nodeSatisfies } from "../../../scripts/host-tests.mjs";

const PLUGIN_DIR = fileURLToPath(new URL("..", import.meta.url));
const require = createRequire(import.meta.url);

/** The installed openclaw package's directory (its exports hide package.json from require.resolve), or undefined. */
function openclawDir(): string | undefined {
  for (const base of require.resolve.paths("openclaw") ?? []) {
    if (existsSync(join(base, "openclaw", "package.json"))) return join(base, "openclaw");
  }
  return undefined;
}

const OPENCLAW_DIR = openclawDir();

/** The OpenClaw the tests run against, as scripts/host-install.mjs installs it. */
const PINNED = JSON.parse(readFileSync(new URL("../../../scripts/hosts/openclaw/package.json", import.meta.url), "utf8")) as {
  dependencies: { openclaw: string };
  compaction: { node: string };
};

const CI = isCi();

/** Why OpenClaw cannot run here, or undefined; throws under CI when it could run but is not installed. */
function skipReason(): string | undefined {
  const pinned = PINNED.dependencies.openclaw;
  if (!nodeSatisfies(PINNED.compaction.node)) return `openclaw ${pinned} needs Node ${PINNED.compaction.node}; this is Node ${process.versions.node}`;
  if (OPENCLAW_DIR === undefined) {
    const missing = `openclaw ${pinned} is not installed: it is not part of npm ci; run \`node scripts/host-install.mjs openclaw\` at the repository root (npm test does)`;
    if (CI) throw new Error(`CI must run the real-OpenClaw tests, but ${missing}`);
    return missing;
  }
  const manifest = JSON.parse(readFileSync(join(OPENCLAW_DIR, "package.json"), "utf8")) as { version: string; engines?: { node?: string } };
  const range = manifest.engines?.node ?? "";
  if (!nodeSatisfies(range)) return `openclaw ${manifest.version} needs Node ${range}; this is Node ${process.versions.node}`;
  return undefined;
}

const SKIP = skipReason();
if (SKIP !== undefined) console.warn(`openclaw-host.test: skipped: ${SKIP}`);

interface Recorded {
  readonly messages: { role: string; content: unknown; tool_calls?: unknown }[];
  /** The names of the tools the request offers the model. */
  readonly tools: string[];
  readonly status: number;
}

/** A tool call the fake model makes instead of answering. */
interface ScriptedCall {
  readonly name: string;
  readonly args: Record<string, unknown>;
}

/**
 * An OpenAI-compatible chat-completions server on 127.0.0.1 that answers "context length
 * exceeded" when told to, and calls a tool when `callTool` says so for a request.
 */
function fakeModel(callTool: (request: Recorded) => ScriptedCall | undefined = () => undefined) {
  const requests: Recorded[] = [];
  let overflowNext = false;
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      if (!req.url?.endsWith("/chat/completions")) {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data: [{ id: "fake-model", object: "model" }] }));
        return;
      }
      const request = JSON.parse(body) as { messages: Recorded["messages"]; tools?: { function?: { name?: string } }[]; stream?: boolean; model: string };
      const tools = (request.tools ?? []).map((tool) => String(tool.function?.name));
      if (overflowNext) {
        overflowNext = false;
        requests.push({ messages: request.messages, tools, status: 400 });
        res.writeHead(400, { "content-type": "application/json" }).end(
          JSON.stringify({ error: { message: "This model's maximum context length is 64000 tokens. Please reduce the length of the messages (context length exceeded).", type: "invalid_request_error", code: "context_length_exceeded" } }),
        );
        return;
      }
      const recorded: Recorded = { messages: request.messages, tools, status: 200 };
      requests.push(recorded);
      const call = callTool(recorded);
      const text = `reply ${requests.length}: noted.`;
      const usage = { prompt_tokens: 100, completion_tokens: 5, total_tokens: 105 };
      const toolCalls = call === undefined ? undefined : [{ index: 0, id: `call_${requests.length}`, type: "function", function: { name: call.name, arguments: JSON.stringify(call.args) } }];
      if (request.stream === true) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const chunk = (payload: object) => res.write(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: request.model, ...payload })}\n\n`);
        if (toolCalls === undefined) chunk({ choices: [{ index: 0, delta: { role: "assistant", content: text }, finish_reason: null }] });
        else chunk({ choices: [{ index: 0, delta: { role: "assistant", content: null, tool_calls: toolCalls }, finish_reason: null }] });
        chunk({ choices: [{ index: 0, delta: {}, finish_reason: toolCalls === undefined ? "stop" : "tool_calls" }] });
        chunk({ choices: [], usage });
        res.end("data: [DONE]\n\n");
      } else {
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            id: "c",
            object: "chat.completion",
            created: 1,
            model: request.model,
            choices: [{ index: 0, message: { role: "assistant", content: toolCalls === undefined ? text : null, ...(toolCalls === undefined ? {} : { tool_calls: toolCalls }) }, finish_reason: toolCalls === undefined ? "stop" : "tool_calls" }],
            usage,
          }),
        );
      }
    });
  });
  return {
    requests,
    overflowNext: () => {
      overflowNext = true;
    },
    start: () => new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port))),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment an OpenClaw process of this test runs in: its own home, and the Gateway's token. */
function openclawEnv(home: string): Record<string, string> {
  return { PATH: process.env["PATH"] ?? "", HOME: home, OPENCLAW_STATE_DIR: join(home, ".openclaw"), OPENCLAW_GATEWAY_TOKEN: GATEWAY_TOKEN, NO_COLOR: "1" };
}

const GATEWAY_TOKEN = "test-token";
/** Settings that keep OpenClaw off the network: no update check, no hosted model catalog. */
const OFFLINE = { update: { checkOnStart: false } } as const;
const OFFLINE_MODELS = { catalogRefresh: { enabled: false } } as const;

function openclaw(home: string, args: readonly string[]): Promise<Run> {
  const bin = join(OPENCLAW_DIR as string, "openclaw.mjs");
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env: openclawEnv(home),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Words enough to make a turn worth compacting, with a marker to find it by. */
function turn(marker: string, words: number): string {
  return `${marker}: ${Array.from({ length: words }, (_, i) => `item${i % 97} of ${marker.toLowerCase()}`).join(", ")}.`;
}

const TURN_TIMEOUT = 15 * 60_000;

/** A port on 127.0.0.1 nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** `openclaw gateway run` in `home`, resolved once the Gateway says it is ready. */
function startGateway(home: string): Promise<{ stop: () => Promise<void>; log: () => string }> {
  const bin = join(OPENCLAW_DIR as string, "openclaw.mjs");
  const child = spawn(process.execPath, [bin, "gateway", "run"], { env: openclawEnv(home), stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null) child.kill("SIGTERM");
    await exited;
  };
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/\[gateway\] ready/.test(output)) resolve({ stop, log: () => output });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("error", reject);
    child.on("close", (code) => reject(new Error(`openclaw gateway run exited (${code}) before it was ready:\n${output.slice(-4000)}`)));
  });
}

/** The text of a request's messages, as the model received it. */
const sentText = (request: Recorded | undefined): string => JSON.stringify(request?.messages ?? []);

describe.skipIf(SKIP !== undefined)("@compaction/openclaw in the real OpenClaw, through its Gateway", () => {
  const FIRST = "FIRSTTURN";
  const ASK = "RECALLNOW";
  // The model calls compaction_recall once when asked to recall, and answers after the tool result.
  const model = fakeModel((request) => {
    const asked = request.messages.some((message) => message.role === "user" && JSON.stringify(message.content).includes(ASK));
    const called = request.messages.some((message) => message.role === "tool");
    return asked && !called ? { name: "compaction_recall", args: { query: FIRST } } : undefined;
  });
  let home: string;
  let gateway: Awaited<ReturnType<typeof startGateway>> | undefined;
  /** Agent prepper's summary model. */
  let summaries: HeldModelServer;
  /** Why an OpenClaw command failed: its output, and the end of the Gateway's log. */
  const explain = (run: Run) => `${run.stderr}\n--- stdout (end):\n${run.stdout.slice(-2000)}\n--- Gateway log (end):\n${gateway?.log().slice(-6000) ?? "(no Gateway)"}`;
  /**
   * `openclaw agent` for one turn. OpenClaw 2026.9 can fail a turn before it starts with "Agent
   * database cleanup failed": opening an agent's database closes the previous agent's idle one,
   * and on a loaded machine that close can race OpenClaw's own background maintenance of that
   * database (its log then says "Agent database idle cleanup failed" beside a slow SQLite
   * reclamation worker whose "maintenance inputs changed before commit"). OpenClaw keeps that
   * failure for the Gateway's lifetime: the failed owner stays the idle one, and every later turn,
   * of any agent, first closes it and fails the same way (CI at 1ef11f3 ran the turn again in the
   * same Gateway, and it failed again in 89 ms). The same close can fail with "Agent native close
   * and lease cleanup failed | another OpenClaw process owns state-lifecycle" (CI at bd69d85); the
   * Gateway's log says "Agent database idle cleanup failed" either way. So when the turn never
   * reached the model and the Gateway logged that since the turn began, the Gateway is restarted,
   * as a user would restart it, and the turn runs once more; otherwise the failure stands. Nothing
   * of ours is in that path: the plugin never opens OpenClaw's databases.
   */
  const agentTurn = async (args: string[]): Promise<Run> => {
    const before = model.requests.length;
    const logged = gateway?.log().length ?? 0;
    const run = await openclaw(home, args);
    const idleCleanupFailed = /Agent database idle cleanup failed/.test(gateway?.log().slice(logged) ?? "") || /Agent database cleanup failed/.test(run.stdout + run.stderr);
    if (run.code === 0 || !idleCleanupFailed || model.requests.length !== before) return run;
    console.warn(`openclaw-host.test: OpenClaw failed a turn before it reached the model (its idle close of an agent database failed); restarting the Gateway and running it again: ${args.slice(0, 3).join(" ")}`);
    await gateway?.stop();
    await startCheckedGateway();
    return openclaw(home, args);
  };
  /** Starts the Gateway and checks that it loaded this plugin (a load error would leave OpenClaw's own engine running). */
  const startCheckedGateway = async () => {
    gateway = await startGateway(home);
    const log = gateway.log();
    expect(log, log).not.toMatch(/\[plugins\] compaction failed (?:during load|to load)|failed during load: .*\(plugin=compaction,/);
    // "[gateway] http server listening (15 plugins: anthropic, browser, canvas, compaction, ...; 20.3s)"
    const loaded = /http server listening \(\d+ plugins: ([^;)\n]*)/.exec(log)?.[1]?.split(", ") ?? [];
    expect(loaded, log).toContain("compaction");
  };

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), "compaction-openclaw-"));
    const workspace = join(home, "workspace");
    mkdirSync(join(home, ".openclaw"), { recursive: true });
    mkdirSync(workspace, { recursive: true });
    const [modelPort, gatewayPort] = [await model.start(), await freePort()];
    summaries = await startHeldModelServer({ answerAfterMs: 60_000 });
    const fake = (id: string, contextWindow: number) => ({ id, name: id, reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow, maxTokens: 1000 });
    const config = {
      ...OFFLINE,
      models: { ...OFFLINE_MODELS, providers: { fake: { baseUrl: `http://127.0.0.1:${modelPort}/v1`, apiKey: "test-key", api: "openai-completions", models: [fake("fake-model", 64000), fake("small-model", 32000)] } } },
      agents: { ownership: "explicit", defaults: { model: { primary: "fake/fake-model" }, workspace }, entries: { main: { model: "fake/fake-model" }, roller: { model: "fake/small-model" }, auto: { model: "fake/small-model" }, prepper: { model: "fake/small-model" }, keeper: { model: "fake/fake-model" } } },
      gateway: { mode: "local", port: gatewayPort, bind: "loopback", auth: { mode: "token", token: GATEWAY_TOKEN } },
    };
    writeFileSync(join(home, ".openclaw", "openclaw.json"), JSON.stringify(config, null, 2));
    // The default preset differs from agent main's: the record must name main's. Agent roller runs
    // rolling with recall; it compacts when asked (no compaction after a turn), so the test says when.
    writeFileSync(
      join(workspace, ".compactionrc"),
      "preset: sliding-window\ntokenizer: { counter: estimate }\nagents:\n  main:\n    preset: safeguard\n    options: { safeguard: { keepRecentTokens: 400 } }\n  auto:\n    preset: safeguard\n    autoCompact: { threshold: 0.3 }\n  roller:\n    preset: rolling\n    autoCompact: { enabled: false }\n" +
        `  prepper:\n    preset: safeguard\n    autoCompact: { threshold: 0.5 }\n    plugins: [[summarizer-openai, { model: held-model, baseUrl: "${summaries.baseUrl}", maxRetries: 0 }]]\n`,
    );
  }, TURN_TIMEOUT);

  afterAll(async () => {
    await gateway?.stop();
    await model.stop();
    await summaries?.close();
    if (home !== undefined) rmSync(home, { recursive: true, force: true });
  }, TURN_TIMEOUT);

  it("installs from a local path and takes the context-engine slot", async () => {
    // A copy, as an install lays it out: OpenClaw captures a linked plugin's package tree on load,
    // and the workspace changes under it while other packages' tests run (see plugin-copy.ts).
    // With the model summarizer installed beside it, as a user would for agent prepper's config.
    const source = copyPluginForInstall(PLUGIN_DIR, join(PLUGIN_DIR, "..", "..", "node_modules"), join(home, "plugin"), ["@compaction/plugin-summarizer-openai"]);
    const install = await openclaw(home, ["plugins", "install", "-l", "--force", "--accept-capabilities", source]);
    expect(install.code, explain(install)).toBe(0);
    const config = JSON.parse(readFileSync(join(home, ".openclaw", "openclaw.json"), "utf8"));
    expect(config.plugins.slots.contextEngine).toBe("compaction");
    expect(config.plugins.entries.compaction.enabled).toBe(true);
    // The Gateway loads it; the turns below go through the Gateway.
    await startCheckedGateway();
  }, TURN_TIMEOUT);

  it("on a context overflow OpenClaw calls our compact, which runs agent main's preset, and the retry carries the summary", async () => {
    for (const [index, marker] of [FIRST, "SECONDTURN"].entries()) {
      const run = await agentTurn(["agent", "--agent", "main", "--message", turn(marker, 400), "--json"]);
      expect(run.code, explain(run)).toBe(0);
      expect(model.requests.length).toBeGreaterThan(index);
    }
    const before = model.requests.length;
    model.overflowNext();
    const third = await agentTurn(["agent", "--agent", "main", "--message", turn("THIRDTURN", 50), "--json"]);
    expect(third.code, explain(third)).toBe(0);

    const overflowed = model.requests[before];
    expect(overflowed?.status).toBe(400);
    expect(JSON.stringify(overflowed?.messages)).toContain(FIRST);
    const retried = model.requests.slice(before + 1);
    expect(retried.length).toBeGreaterThan(0);
    const sent = JSON.stringify(retried[0]?.messages);
    expect(sent).toContain("THIRDTURN");
    expect(sent).toContain("SECONDTURN");
    expect((retried[0]?.messages.length ?? 0)).toBeLessThan(overflowed?.messages.length ?? 0);

    // Our record (in OpenClaw's plugin state, or, as OpenClaw 2026.9 keeps that store from a plugin
    // linked from a path, in the agent's directory): agent main's preset ran.
    const state = [...readPluginState(join(home, ".openclaw", "state", "openclaw.sqlite")), ...readRecordFiles(join(home, ".openclaw", "agents", "main", "agent", "compaction-plugin", "sessions"))];
    expect(state).toHaveLength(1);
    expect(state[0]).toMatchObject({ version: 1, agent: "main", preset: "safeguard" });
    expect(sent).toContain(JSON.stringify(String(state[0]?.["summary"]).slice(0, 40)).slice(1, -1)); // as it appears in the JSON sent

    // OpenClaw's transcript keeps every message: nothing was lost or rewritten.
    const session = readOpenClawSession(openClawAgentDatabase("main", { stateDir: join(home, ".openclaw") }), { sessionKey: "agent:main:main" });
    const messages = buildContext(parseOpenClawSession(session).entries).messages as { role: string; content: unknown }[];
    const users = messages.filter((message) => message.role === "user").map((message) => JSON.stringify(message.content));
    expect(users.some((text) => text.includes(FIRST))).toBe(true);
    expect(users.some((text) => text.includes("SECONDTURN"))).toBe(true);
    expect(users.some((text) => text.includes("THIRDTURN"))).toBe(true);
  }, 4 * TURN_TIMEOUT);

  it("`openclaw sessions compact` runs agent roller's rolling preset, and compaction_recall then returns the evicted turn", async () => {
    for (const marker of [FIRST, "SECONDTURN"]) {
      const run = await agentTurn(["agent", "--agent", "roller", "--message", turn(marker, 2800), "--json"]);
      expect(run.code, explain(run)).toBe(0);
    }
    // The Gateway's manual compaction reaches our engine: rolling evicts the first turn.
    const compact = await openclaw(home, ["sessions", "compact", "agent:roller:main", "--json"]);
    expect(compact.code, explain(compact)).toBe(0);
    expect(JSON.parse(compact.stdout.slice(compact.stdout.indexOf("{")))).toMatchObject({ ok: true, compacted: true });
    const records = readRecordFiles(join(home, ".openclaw", "agents", "roller", "agent", "compaction-plugin", "sessions"));
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ agent: "roller", preset: "rolling" });

    const before = model.requests.length;
    const ask = await agentTurn(["agent", "--agent", "roller", "--message", `${ASK}: what did the first turn list?`, "--json"]);
    expect(ask.code, explain(ask)).toBe(0);
    const [asked, answered] = model.requests.slice(before);
    // The agent sees the tool (directly, not behind OpenClaw's tool search), and the note that names it instead of the first turn.
    expect(asked?.tools).toContain("compaction_recall");
    // OpenClaw's own memory_search (memory-core, searching memory files) is still there, behind its tool search.
    expect(sentText(asked)).toContain("memory_search (memory-core)");
    expect(sentText(asked)).toContain("Full transcript available via compaction_recall");
    expect(sentText(asked)).not.toContain("item5 of firstturn");
    expect(sentText(asked)).toContain("item5 of secondturn");
    // OpenClaw ran the call: the tool result it sends back holds the evicted text.
    const result = answered?.messages.find((message) => message.role === "tool");
    expect(JSON.stringify(result?.content)).toContain(FIRST);
    expect(JSON.stringify(result?.content)).toContain("firstturn");

    // OpenClaw's transcript still holds every turn: eviction happened only in what is sent.
    const session = readOpenClawSession(openClawAgentDatabase("roller", { stateDir: join(home, ".openclaw") }), { sessionKey: "agent:roller:main" });
    const users = (buildContext(parseOpenClawSession(session).entries).messages as { role: string; content: unknown }[]).filter((message) => message.role === "user").map((message) => JSON.stringify(message.content));
    for (const marker of [FIRST, "SECONDTURN", ASK]) expect(users.some((text) => text.includes(marker))).toBe(true);
    // The plugin's copy for recall holds every turn too, the last one recorded at commitTurn.
    const journals = join(home, ".openclaw", "agents", "roller", "agent", "compaction-plugin", "recall");
    const copy = readdirSync(journals).filter((name) => name.endsWith(".jsonl")).map((name) => readFileSync(join(journals, name), "utf8")).join("\n");
    for (const marker of [FIRST, "SECONDTURN", ASK]) expect(copy).toContain(marker);
  }, 4 * TURN_TIMEOUT);

  it("a turn that takes agent auto past its preset's threshold compacts without overflow or a command (at commitTurn)", async () => {
    for (const marker of ["AUTOONE", "AUTOTWO", "AUTOTHREE"]) {
      const run = await agentTurn(["agent", "--agent", "auto", "--message", turn(marker, marker === "AUTOTHREE" ? 20 : 2800), "--json"]);
      expect(run.code, explain(run)).toBe(0);
    }
    const records = readRecordFiles(join(home, ".openclaw", "agents", "auto", "agent", "compaction-plugin", "sessions"));
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ agent: "auto", preset: "safeguard" });
    const sent = sentText(model.requests.at(-1));
    expect(sent).toContain("AUTOTHREE");
    expect(sent).not.toContain(JSON.stringify(turn("AUTOONE", 2800)).slice(1, -1));
  }, 4 * TURN_TIMEOUT);

  it("agent prepper (a model summarizer): the compaction prepared after a turn is put in place at a later one, which asks for no summary", async () => {
    const records = () => [...readPluginState(join(home, ".openclaw", "state", "openclaw.sqlite")), ...readRecordFiles(join(home, ".openclaw", "agents", "prepper", "agent", "compaction-plugin", "sessions"))].filter((record) => record["agent"] === "prepper");
    let turns = 0;
    // Short turns (about 700 tokens): several between the prepare mark and the threshold, and between it and the budget.
    const next = async (words = 150) => {
      turns += 1;
      const run = await agentTurn(["agent", "--agent", "prepper", "--message", turn(`PREPTURN${turns}`, words), "--json"]);
      expect(run.code, explain(run)).toBe(0);
    };
    // Turns until one ends past the prepare mark: the engine asks the summary model, beside OpenClaw.
    /** Our lines in the Gateway's log (the engine logs each background step). */
    const log = () => (gateway?.log() ?? "").split("\n").filter((line) => line.includes("compaction:")).join("\n").slice(-6000);
    for (let i = 0; i < 24 && summaries.requests.length === 0; i++) await next();
    expect(summaries.requests.length, `a turn's end asked the summary model\n${log()}`).toBeGreaterThan(0);
    expect(records(), log()).toHaveLength(0);
    // The user reads the answer and types: the summary is written meanwhile.
    summaries.release();
    for (let i = 0; i < 100 && summaries.pending > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    summaries.hold();
    const asked = summaries.requests.length;
    // Turns until the context is past the threshold: the prepared compaction is put in place.
    for (let i = 0; i < 24 && records().length === 0; i++) await next();
    expect(records(), log()).toHaveLength(1);
    expect(records()[0]).toMatchObject({ agent: "prepper", preset: "safeguard" });
    expect(String(records()[0]?.["summary"]), log()).toContain("held summary");
    expect(summaries.requests.length, "no summary asked for when it was put in place").toBe(asked);
    expect(gateway?.log()).toMatch(/put the compaction prepared in the background [\d.]+ s ago in place/);
    // The next request carries the summary instead of the first turn.
    await next(20);
    const sent = sentText(model.requests.at(-1));
    expect(sent).toContain("held summary");
    expect(sent).not.toContain(JSON.stringify(turn("PREPTURN1", 150)).slice(1, -1));
    expect(sent).toContain(`PREPTURN${turns}`);
  }, 8 * TURN_TIMEOUT);

  it("summary-only: with OpenClaw's own engine and our compaction provider, OpenClaw's cut carries our summary", async () => {
    // Select OpenClaw's legacy engine and our provider, and restart the Gateway to apply it.
    await gateway?.stop();
    const file = join(home, ".openclaw", "openclaw.json");
    const config = JSON.parse(readFileSync(file, "utf8"));
    config.plugins.slots.contextEngine = "legacy";
    config.agents.defaults.compaction = { provider: "compaction" };
    writeFileSync(file, JSON.stringify(config, null, 2));
    await startCheckedGateway();

    for (const marker of ["KEEPERONE", "KEEPERTWO", "KEEPERTHREE"]) {
      const run = await agentTurn(["agent", "--agent", "keeper", "--message", turn(marker, 2800), "--json"]);
      expect(run.code, explain(run)).toBe(0);
    }
    const before = model.requests.length;
    const compact = await openclaw(home, ["sessions", "compact", "agent:keeper:main", "--json"]);
    expect(compact.code, explain(compact)).toBe(0);
    expect(JSON.parse(compact.stdout.slice(compact.stdout.indexOf("{")))).toMatchObject({ ok: true, compacted: true });
    // OpenClaw did not ask the model for a summary: our provider wrote it.
    expect(model.requests.length).toBe(before);
    // OpenClaw recorded the compaction in its own transcript, with our extractive summary (its sections, the first request).
    const session = readOpenClawSession(openClawAgentDatabase("keeper", { stateDir: join(home, ".openclaw") }), { sessionKey: "agent:keeper:main" });
    const entries = parseOpenClawSession(session).entries as { type: string; summary?: string }[];
    const summary = entries.filter((entry) => entry.type === "compaction").at(-1)?.summary ?? "";
    expect(summary).toContain("## Goal");
    expect(summary).toContain("KEEPERONE");
    // Our engine kept nothing of its own: no record for keeper.
    expect(readRecordFiles(join(home, ".openclaw", "agents", "keeper", "agent", "compaction-plugin", "sessions"))).toHaveLength(0);

    const next = await agentTurn(["agent", "--agent", "keeper", "--message", "KEEPERFOUR: and now?", "--json"]);
    expect(next.code, explain(next)).toBe(0);
    const sent = sentText(model.requests.at(-1));
    expect(sent).toContain("KEEPERFOUR");
    expect(sent).toContain(JSON.stringify(summary.slice(0, 60)).slice(1, -1));
    // The first turn reaches the model only through the summary (which quotes the start of it), not whole.
    expect(sent).not.toContain(JSON.stringify(turn("KEEPERONE", 2800)).slice(1, -1));
    expect(sent).toContain(JSON.stringify(turn("KEEPERTHREE", 2800)).slice(1, -1));
  }, 4 * TURN_TIMEOUT);
});

/** The records of the plugin's own file store. */
function readRecordFiles(dir: string): Record<string, unknown>[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .map((name) => JSON.parse(readFileSync(join(dir, name), "utf8")) as Record<string, unknown>);
}

/** The values this plugin stored in OpenClaw's shared state database under its compactions namespace. */
function readPluginState(database: string): Record<string, unknown>[] {
  const { DatabaseSync } = require("node:sqlite") as { DatabaseSync: new (path: string, options: { readOnly: boolean }) => { prepare(sql: string): { all(...values: unknown[]): unknown[] }; close(): void } };
  const db = new DatabaseSync(database, { readOnly: true });
  try {
    const rows = db.prepare("SELECT * FROM plugin_state_entries WHERE plugin_id = ? AND namespace = ?").all("compaction", "session-compactions") as Record<string, unknown>[];
    return rows.map((row) => JSON.parse(String(row["value_json"] ?? row["value"])) as Record<string, unknown>);
  } finally {
    db.close();
  }
}
