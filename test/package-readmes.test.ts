/**
 * The code samples of the package READMEs, run as a reader runs them. Each block marked
 * `<!-- example: <name> -->` is written into a project folder as a module of its own (beside a
 * `.compactionrc` where the sample reads one) and run with Node. What a sample uses but leaves to
 * its host (`messages`, a model, a session file) is given ahead of it, as real as the repository
 * has it: the shipped pi session (examples/sessions/pi-large-session.jsonl), the AI SDK's and
 * LangChain's own fake models, a model server answering through `fetch`. What the README says the
 * code prints or returns is compared with what it does. Every sample module (given part included)
 * is also type-checked against the packages' own types, under `strict` as a user's tsconfig has it.
 *
 * And what else the READMEs say the code is: the presets' objects are their packages' exports;
 * recall's search answer is what `memory_search` answers on the shipped session; every YAML block
 * loads as a `.compactionrc`; every plugin's option table is its schema's options and defaults;
 * every `npm install` line names the package and its required peers; every `npx compaction …` a
 * README writes is a command that takes the options written.
 *
 * The READMEs checked: core/README.md, context-manager/README.md, replay/README.md,
 * plugins/safeguard/README.md, plugins/layered/README.md, plugins/rolling/README.md,
 * plugins/sliding-window/README.md, plugins/last-turn-injection/README.md,
 * plugins/recall/README.md, plugins/summarizer-extractive/README.md,
 * plugins/summarizer-openai/README.md, plugins/summarizer-anthropic/README.md,
 * presets/safeguard/README.md, presets/layered/README.md, presets/rolling/README.md,
 * presets/sliding-window/README.md, integrations/ai-sdk/README.md, integrations/langchain/README.md,
 * integrations/pi/README.md, stores/postgres/README.md, cli/README.md.
 */
import { execFile } from "node:child_process";
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createCompactor, loadConfig, type OpenAIChatMessage, type PiMessage } from "@compaction/core";
import { loadPiMessages } from "@compaction/fixtures";
import { memorySearchTool, openRecallIndex } from "@compaction/plugin-recall";
import { upgradeSession } from "@compaction/transcript";
import { createDatabase, findPostgresBinaries, type PostgresServer, startPostgresServer } from "@compaction/store-postgres/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isCi } from "../scripts/host-tests.mjs";
import { type CodeBlock, codeBlocks } from "./support/markdown.js";
import { tmpProject } from "./support/tmp-project.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SHIPPED_SESSION = join(ROOT, "examples", "sessions", "pi-large-session.jsonl");

/** The block after `marker` (`<!-- example: name -->`) in `page` (a path from the repository's root). */
function markedBlock(page: string, marker: string): CodeBlock {
  const block = codeBlocks(join(ROOT, page)).find((b) => b.before === marker);
  if (block === undefined) throw new Error(`${page} has no block marked ${marker}`);
  return block;
}

/** The name in a `<!-- example: name -->` marker. */
function nameOf(marker: string): string {
  return /^<!-- example: (\S+) -->$/.exec(marker)?.[1] ?? marker;
}

/** What the samples leave to their host, as each is given it (written ahead of the sample). */
const GIVEN = {
  /** The shipped pi session's messages, as a host that read them holds them. */
  piMessages: `import { loadPiMessages as givenPiMessages } from "@compaction/fixtures";
let messages = givenPiMessages(${JSON.stringify(SHIPPED_SESSION)});`,
  /** The same conversation as OpenAI Chat Completions messages, a system prompt first (messages.json, written by the test). */
  openAIMessages: `import { readFileSync as givenRead } from "node:fs";
import type { OpenAIChatMessage as GivenOpenAI } from "@compaction/core";
let messages: GivenOpenAI[] = JSON.parse(givenRead("messages.json", "utf8"));`,
  /** A strategy plugin of the host's: safeguard's. */
  myStrategy: `import givenSafeguard from "@compaction/plugin-safeguard";
const myStrategy = givenSafeguard();`,
} as const;

interface Sample {
  /** The README, from the repository's root. */
  readonly page: string;
  /** The marker on the line before the block: `<!-- example: <name> -->`. */
  readonly marker: string;
  /** Written ahead of the sample: what it uses and leaves to its host. */
  readonly given?: readonly string[];
  /** Written after the sample: prints, as the last line of stdout, one JSON object for `check`. */
  readonly then?: string;
  /** Files of the project besides the sample (`messages.json`, `.compactionrc`, a session). */
  readonly files?: (dir: string) => void | Promise<void>;
  /** A module run instead of the sample, which imports it (`./sample.ts`): for a sample that only exports. */
  readonly runner?: string;
  /** What the README says of the sample's result, against what it printed (its last line parsed as JSON when `then` is given). */
  readonly check: (run: { readonly stdout: string; readonly facts: Record<string, unknown> }) => void;
}

/** pi messages as OpenAI Chat Completions messages (text, tool calls and results; thinking and calls never answered left out), after a system prompt. */
function asOpenAI(messages: readonly PiMessage[]): OpenAIChatMessage[] {
  const answered = new Set(messages.map((message) => (message as { toolCallId?: string }).toolCallId).filter((id) => id !== undefined));
  const text = (content: unknown): string =>
    typeof content === "string" ? content : (content as { type: string; text?: string }[]).filter((part) => part.type === "text").map((part) => part.text ?? "").join("\n");
  const out: OpenAIChatMessage[] = [{ role: "system", content: "You are a coding agent working in the user's repository." }];
  for (const message of messages) {
    const m = message as { role: string; content: unknown; toolCallId?: string };
    if (m.role === "user") out.push({ role: "user", content: text(m.content) });
    else if (m.role === "toolResult") out.push({ role: "tool", tool_call_id: m.toolCallId as string, content: text(m.content) });
    else if (m.role === "assistant") {
      const calls = (m.content as { type: string; id?: string; name?: string; arguments?: unknown }[]).filter((part) => part.type === "toolCall" && answered.has(part.id as string));
      const said = text(m.content);
      if (said === "" && calls.length === 0) continue;
      out.push({
        role: "assistant",
        content: said === "" ? null : said,
        ...(calls.length === 0 ? {} : { tool_calls: calls.map((call) => ({ id: call.id as string, type: "function" as const, function: { name: call.name as string, arguments: JSON.stringify(call.arguments) } })) }),
      });
    }
  }
  return out;
}

/** pi messages as AI SDK `ModelMessage`s (text, tool calls and results; thinking and calls never answered left out). */
function asModelMessages(messages: readonly PiMessage[]): unknown[] {
  const answered = new Set(messages.map((message) => (message as { toolCallId?: string }).toolCallId).filter((id) => id !== undefined));
  const out: unknown[] = [];
  for (const message of messages) {
    const m = message as { role: string; content: unknown; toolCallId?: string; toolName?: string };
    const parts = (typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content) as { type: string; text?: string; id?: string; name?: string; arguments?: unknown }[];
    const text = parts.filter((part) => part.type === "text").map((part) => part.text ?? "").join("\n");
    if (m.role === "user") out.push({ role: "user", content: text });
    else if (m.role === "toolResult") {
      out.push({ role: "tool", content: [{ type: "tool-result", toolCallId: m.toolCallId, toolName: m.toolName, output: { type: "text", value: text } }] });
    } else if (m.role === "assistant") {
      const content = [
        ...(text === "" ? [] : [{ type: "text", text }]),
        ...parts.filter((part) => part.type === "toolCall" && answered.has(part.id as string)).map((call) => ({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: call.arguments })),
      ];
      if (content.length > 0) out.push({ role: "assistant", content });
    }
  }
  return out;
}

/** The AI SDK's own mock model, answering "Done." (generate and stream), recording the size of each prompt it is sent. */
const AI_SDK_MODEL = `import { MockLanguageModelV3 as GivenMockModel } from "ai/test";
const givenPrompts: number[] = [];
const givenUsage = { inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } };
const model = new GivenMockModel({
  doGenerate: async ({ prompt }) => {
    givenPrompts.push(prompt.length);
    return { content: [{ type: "text", text: "Done." }], finishReason: { unified: "stop", raw: "stop" }, usage: givenUsage, warnings: [] };
  },
  doStream: async ({ prompt }) => {
    givenPrompts.push(prompt.length);
    const parts = [
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Done." },
      { type: "text-end", id: "t" },
      { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: givenUsage },
    ] as const;
    return { stream: new ReadableStream({ start(controller) { for (const part of parts) controller.enqueue(part); controller.close(); } }) };
  },
});`;

/** AI_SDK_MODEL for a JavaScript sample (the same, without the types). */
const AI_SDK_MODEL_JS = AI_SDK_MODEL.replace("const givenPrompts: number[] = [];", "const givenPrompts = [];").replace("] as const;", "];");

/** A model server answering every chat completions or Messages request with a summary, through `fetch`; the requests' addresses recorded. */
const MODEL_SERVER = `const givenRequests: string[] = [];
const givenSummary = "## Goal\\n- Port the theme selector to the new TUI\\n\\n## Next Steps\\n- Run the selector tests";
globalThis.fetch = async (url: string | URL | Request) => {
  givenRequests.push(String(url));
  const body = String(url).endsWith("/v1/messages")
    ? { type: "message", role: "assistant", content: [{ type: "text", text: givenSummary }], stop_reason: "end_turn" }
    : { choices: [{ message: { role: "assistant", content: givenSummary }, finish_reason: "stop" }] };
  return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
};`;

/** The shipped session, copied into the project as session.jsonl. */
const copySession = (dir: string) => copyFileSync(SHIPPED_SESSION, join(dir, "session.jsonl"));

/** The presets' `createCompactor` samples, one marker each. */
const PRESET_CREATE_MARKERS = {
  safeguard: "<!-- example: preset-safeguard-create -->",
  layered: "<!-- example: preset-layered-create -->",
  rolling: "<!-- example: preset-rolling-create -->",
  "sliding-window": "<!-- example: preset-sliding-window-create -->",
} as const;

/** The presets' READMEs show each preset object. */
const PRESET_OBJECT_MARKERS = {
  safeguard: "<!-- example: preset-safeguard-object -->",
  layered: "<!-- example: preset-layered-object -->",
  rolling: "<!-- example: preset-rolling-object -->",
  "sliding-window": "<!-- example: preset-sliding-window-object -->",
} as const;

/** Run on a real Postgres server when the binaries are installed (its own describe, below). */
const POSTGRES_SAMPLE: Sample = {
  page: "stores/postgres/README.md",
  marker: "<!-- example: postgres-store -->",
  then: `console.log(JSON.stringify({ entries: entries.map((entry) => entry.type), location: store.location }));`,
  check: ({ facts }) => {
    expect(facts["entries"]).toEqual(["message"]);
    // The location names the session, never the password.
    expect(facts["location"]).toMatch(/^postgres:\/\/[^@]*#a1b2c3d4-…$/);
  },
};

const SAMPLES: readonly Sample[] = [
  {
    page: "core/README.md",
    marker: "<!-- example: core-compactor -->",
    given: [GIVEN.piMessages, GIVEN.myStrategy],
    then: `console.log(JSON.stringify({ status: result.status, summary: result.summary }));`,
    check: ({ facts }) => {
      expect(facts["status"]).toBe("compacted");
      // The focus goes into the summary the extractive summarizer writes.
      expect(facts["summary"]).toContain("the parser bug");
    },
  },
  {
    page: "core/README.md",
    marker: "<!-- example: core-create-compactor -->",
    files: (dir) => writeFileSync(join(dir, ".compactionrc"), "preset: safeguard\nagents:\n  coder: { preset: layered }\n"),
    then: `import type { ResolvedConfig as GivenConfig } from "@compaction/core";
const givenConfig = compactor.config as GivenConfig;
console.log(JSON.stringify({ file: givenConfig.filepath, preset: givenConfig.preset, section: givenConfig.agentSection }));`,
    check: ({ facts }) => {
      // It read the project's .compactionrc and applied the agent's section.
      expect(facts["file"]).toMatch(/\.compactionrc$/);
      expect(facts).toMatchObject({ preset: "layered", section: "coder" });
    },
  },
  {
    page: "context-manager/README.md",
    marker: "<!-- example: context-manager -->",
    given: [
      `import type { PiMessage as GivenPi } from "@compaction/core";
const userMessage: GivenPi = { role: "user", content: [{ type: "text", text: "Now port the theme selector's tests." }], timestamp: Date.now() };
const givenSent: number[] = [];
const model = {
  async complete(messages: readonly GivenPi[]) {
    givenSent.push(messages.length);
    const reply: GivenPi = { role: "assistant", content: [{ type: "text", text: "Ported." }], stopReason: "stop", timestamp: Date.now() };
    return { messages: [reply] };
  },
};`,
    ],
    files: async (dir) => {
      copySession(dir);
      await upgradeSession(join(dir, "session.jsonl"));
    },
    then: `import { readFileSync as givenRead } from "node:fs";
await context.dispose();
const givenTypes = givenRead("session.jsonl", "utf8").split("\\n").filter((line) => line !== "").map((line) => JSON.parse(line).type as string);
console.log(JSON.stringify({ sent: givenSent, compactions: givenTypes.filter((type) => type === "compaction").length, lastTwo: givenTypes.slice(-2) }));`,
    check: ({ facts }) => {
      // The shipped session (177,657 tokens) is past the threshold at 200,000: send() compacts
      // first, records the compaction in the session file, and the model gets the compacted context.
      expect(facts["compactions"]).toBe(1);
      const sent = facts["sent"] as number[];
      expect(sent).toHaveLength(1);
      expect(sent[0]).toBeLessThan(loadPiMessages(SHIPPED_SESSION).length);
      // Then the model's reply was appended after the compaction.
      expect(facts["lastTwo"]).toEqual(["compaction", "message"]);
    },
  },
  {
    page: "replay/README.md",
    marker: "<!-- example: replay -->",
    given: [GIVEN.piMessages],
    then: `console.log(JSON.stringify({ compactions: result.compactions, calls: result.calls, hitShare: result.cache.hitShare, billed: result.cache.billed.anthropic }));`,
    check: ({ stdout, facts }) => {
      // At 64k the shipped session outgrows the window: safeguard compacts, and most of each request is a cache hit.
      expect(facts["compactions"]).toBeGreaterThan(0);
      expect(facts["calls"]).toBeGreaterThan(100);
      expect(facts["hitShare"]).toBeGreaterThan(0.5);
      expect(facts["hitShare"]).toBeLessThan(1);
      // What the sample prints is those figures.
      expect(stdout.split("\n")[0]).toBe(`${facts["compactions"]} ${facts["hitShare"]} ${facts["billed"]}`);
    },
  },
  {
    page: "plugins/safeguard/README.md",
    marker: "<!-- example: safeguard-compactor -->",
    given: [GIVEN.piMessages],
    then: `console.log(JSON.stringify({ status: result.status, layer: result.event?.layer, messages: messages.length }));`,
    check: ({ facts }) => {
      expect(facts["status"]).toBe("compacted");
      expect(facts["layer"]).toBe("summarize");
      // `messages` is now the compacted context.
      expect(facts["messages"]).toBeLessThan(loadPiMessages(SHIPPED_SESSION).length);
    },
  },
  {
    page: "plugins/layered/README.md",
    marker: "<!-- example: layered-compactor -->",
    given: [GIVEN.piMessages],
    then: `const givenTexts = result.messages.flatMap((message): unknown[] => ("content" in message && Array.isArray(message.content) ? message.content : [])).map((part) => (part as { text?: string }).text ?? "");
console.log(JSON.stringify({ markers: givenTexts.filter((text) => text.startsWith("[pruned tool output: ")) }));`,
    check: ({ stdout, facts }) => {
      // The comment quotes what it prints on the shipped session.
      const quoted = /console\.log\(result\.status, result\.event\?\.layer\); \/\/ (.*)$/m.exec(markedBlock("plugins/layered/README.md", "<!-- example: layered-compactor -->").body)?.[1];
      expect(quoted).toBeDefined();
      expect(stdout.split("\n")[0]).toBe((quoted as string).split(", on ")[0]);
      // The markers layered's README and the pi extension's (which prunes what is sent by layered's rules) quote are among those it wrote.
      const markers = facts["markers"] as string[];
      for (const page of ["plugins/layered/README.md", "integrations/pi/README.md"]) {
        const shown = /`(\[pruned tool output: [^`]+\])`/.exec(readFileSync(join(ROOT, page), "utf8"))?.[1];
        expect(markers, page).toContain(shown);
      }
    },
  },
  {
    page: "plugins/rolling/README.md",
    marker: "<!-- example: rolling-compactor -->",
    given: [GIVEN.piMessages],
    then: `console.log(JSON.stringify({ layer: result.event?.layer, summary: result.summary, warnings: result.warnings }));`,
    check: ({ facts }) => {
      expect(facts["layer"]).toBe("evict");
      // The note the README shows at its top, "…" standing for the rest of a list of names.
      const note = markedBlock("plugins/rolling/README.md", "<!-- example: rolling-note -->").body.trim();
      const pattern = new RegExp(`^${note.split("…").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[^;\\]]*")}$`);
      expect(facts["summary"]).toMatch(pattern);
    },
  },
  {
    page: "plugins/rolling/README.md",
    marker: "<!-- example: rolling-evict -->",
    given: [GIVEN.openAIMessages],
    files: (dir) => writeFileSync(join(dir, "messages.json"), JSON.stringify(asOpenAI(loadPiMessages(SHIPPED_SESSION)))),
    then: `console.log(JSON.stringify({ kept: kept.length, evicted: evicted.length, evictedCount, keptTokens, evictedTokens, firstEvictedTimestamp, lastEvictedTimestamp, targetMet }));`,
    check: ({ facts }) => {
      expect(facts["evictedCount"]).toBeGreaterThan(0);
      expect(facts["evicted"]).toBe(facts["evictedCount"]);
      expect(facts["targetMet"]).toBe(true);
      // The default target: 80% of maxContextTokens.
      expect(facts["keptTokens"]).toBeLessThanOrEqual(Math.floor(128_000 * 0.8));
      // OpenAI messages carry no timestamps.
      expect(facts).toMatchObject({ firstEvictedTimestamp: null, lastEvictedTimestamp: null });
    },
  },
  {
    page: "plugins/sliding-window/README.md",
    marker: "<!-- example: sliding-window-compactor -->",
    given: [GIVEN.openAIMessages],
    files: (dir) => writeFileSync(join(dir, "messages.json"), JSON.stringify(asOpenAI(loadPiMessages(SHIPPED_SESSION)))),
    then: `console.log(JSON.stringify({ status: result.status, reason: result.reason, first: result.messages[0], second: result.messages[1] }));`,
    check: ({ facts }) => {
      expect(facts["status"], String(facts["reason"])).toBe("compacted");
      // As the comment shows it: the system prompt, then the summary as a user message.
      expect(facts["first"]).toMatchObject({ role: "system" });
      const second = facts["second"] as { role: string; content: string };
      expect(second.role).toBe("user");
      expect(second.content).toMatch(/<summary>\nPreviously:\n\n## Goal\n/);
    },
  },
  {
    page: "plugins/last-turn-injection/README.md",
    marker: "<!-- example: last-turn-injection-compactor -->",
    then: `console.log(JSON.stringify({ plugins: compactor.plugins.map((plugin) => plugin.name) }));`,
    check: ({ facts }) => expect(facts["plugins"]).toEqual(["last-turn-injection"]),
  },
  {
    page: "plugins/last-turn-injection/README.md",
    marker: "<!-- example: last-turn-injection-helpers -->",
    given: [GIVEN.piMessages],
    then: `console.log(JSON.stringify({ keys: turn === null ? null : Object.keys(turn), section, none: formatLastTurnSection(null, 2000) }));`,
    check: ({ facts }) => {
      expect(facts["keys"]).toEqual(["user", "assistant"]);
      expect(facts["section"]).toMatch(/^## Last Exchange \(Verbatim\)\n\n> \*\*User:\*\* /);
      expect(facts["none"]).toBe("");
    },
  },
  {
    page: "plugins/recall/README.md",
    marker: "<!-- example: recall-connect -->",
    given: [
      `const cwd = process.cwd();
const sessionPath = "session.jsonl";
const session = { leafId: undefined as string | undefined };
const agent = { tools: [] as { name: string }[] };`,
    ],
    files: (dir) => {
      copySession(dir);
      writeFileSync(join(dir, ".compactionrc"), "agents:\n  researcher: { preset: rolling }\n");
    },
    then: `import { existsSync as givenExists } from "node:fs";
console.log(JSON.stringify({ tools: agent.tools.map((tool) => tool.name), index: givenExists("session.jsonl.recall.json") }));`,
    check: ({ facts }) => expect(facts).toEqual({ tools: ["memory_search"], index: true }),
  },
  {
    page: "plugins/recall/README.md",
    marker: "<!-- example: recall-index -->",
    given: [`const sessionPath = "session.jsonl";`],
    files: copySession,
    then: `console.log(JSON.stringify({ hits: hits.length, hit: Object.keys(hits[0] ?? {}), entry: Object.keys(entry ?? {}), tool: tool.definition.openai.function.name }));
await index.close();`,
    check: ({ facts }) => {
      expect(facts["hits"]).toBe(5);
      // The fields the comments name.
      expect(facts["hit"]).toEqual(expect.arrayContaining(["entryId", "timestamp", "role", "snippet", "score", "exact"]));
      expect(facts["entry"]).toEqual(expect.arrayContaining(["text", "role", "parentId", "line", "entry", "onBranch"]));
      expect(facts["tool"]).toBe("memory_search");
    },
  },
  {
    page: "plugins/summarizer-extractive/README.md",
    marker: "<!-- example: summarizer-extractive-compactor -->",
    given: [GIVEN.myStrategy],
    then: `console.log(JSON.stringify({ summarizer: compactor.summarizer?.name ?? null }));`,
    check: ({ facts }) => expect(facts["summarizer"]).toBe("extractive"),
  },
  {
    page: "plugins/summarizer-openai/README.md",
    marker: "<!-- example: summarizer-openai-compactor -->",
    given: [GIVEN.piMessages, MODEL_SERVER],
    then: `console.log(JSON.stringify({ status: result.status, summary: result.summary, urls: [...new Set(givenRequests)] }));`,
    check: ({ facts }) => {
      expect(facts["status"]).toBe("compacted");
      expect(facts["urls"]).toEqual(["http://localhost:11434/v1/chat/completions"]);
      expect(facts["summary"]).toContain("Port the theme selector to the new TUI");
    },
  },
  {
    page: "plugins/summarizer-anthropic/README.md",
    marker: "<!-- example: summarizer-anthropic-compactor -->",
    given: [
      `import { loadClaudeMessages as givenClaude } from "@compaction/fixtures";
const messages = givenClaude("claude-code-log-37f83ec9.jsonl");
process.env["ANTHROPIC_API_KEY"] = "sk-ant-readme-test";`,
      MODEL_SERVER,
    ],
    then: `console.log(JSON.stringify({ status: result.status, summary: result.summary, urls: [...new Set(givenRequests)] }));`,
    check: ({ facts }) => {
      expect(facts["status"]).toBe("compacted");
      expect(facts["urls"]).toEqual(["https://api.anthropic.com/v1/messages"]);
      expect(facts["summary"]).toContain("Port the theme selector to the new TUI");
    },
  },
  ...(["safeguard", "layered", "rolling", "sliding-window"] as const).map(
    (preset): Sample => ({
      page: `presets/${preset}/README.md`,
      marker: PRESET_CREATE_MARKERS[preset],
      then: `console.log(JSON.stringify({ preset: (compactor.config as { preset: string }).preset, plugins: compactor.plugins.map((plugin) => plugin.name) }));`,
      check: ({ facts }) => {
        expect(facts["preset"]).toBe(preset);
        expect(facts["plugins"]).toContain(preset);
      },
    }),
  ),
  {
    page: "integrations/ai-sdk/README.md",
    marker: "<!-- example: ai-sdk-prepare-step -->",
    given: [AI_SDK_MODEL_JS, `const tools = {};`, `import { readFileSync as givenRead } from "node:fs";\nconst messages = JSON.parse(givenRead("messages.json", "utf8"));`],
    files: (dir) => writeFileSync(join(dir, "messages.json"), JSON.stringify(asModelMessages(loadPiMessages(SHIPPED_SESSION)))),
    then: `console.log(JSON.stringify({ text: result.text, prompts: givenPrompts, messages: messages.length }));`,
    check: ({ stdout, facts }) => {
      // `on: console.log` prints the events: the shipped session is past the threshold at 128k.
      expect(stdout).toContain("type: 'compaction-start'");
      expect(stdout).toMatch(/type: 'compaction-end',[\s\S]*status: 'compacted'/);
      expect(facts["text"]).toBe("Done.");
      const prompts = facts["prompts"] as number[];
      expect(prompts).toHaveLength(1);
      expect(prompts[0]).toBeLessThan(facts["messages"] as number);
    },
  },
  {
    page: "integrations/ai-sdk/README.md",
    marker: "<!-- example: ai-sdk-route -->",
    given: [AI_SDK_MODEL_JS],
    files: (dir) => {
      // The chat route's agent at a 16k window, and a chat (the shipped session's words) well over it.
      writeFileSync(join(dir, ".compactionrc"), "agents:\n  chat: { contextWindow: 16000 }\n");
      const chat = asModelMessages(loadPiMessages(SHIPPED_SESSION))
        .filter((message) => (message as { role: string }).role !== "tool")
        .map((message, i) => {
          const m = message as { role: "user" | "assistant"; content: string | { type: string; text?: string }[] };
          const text = typeof m.content === "string" ? m.content : m.content.map((part) => part.text ?? "").join("\n");
          return { id: `m${i}`, role: m.role, parts: [{ type: "text", text: text === "" ? "(tool calls)" : text }] };
        });
      writeFileSync(join(dir, "chat.json"), JSON.stringify({ messages: chat }));
    },
    then: `import { readFileSync as givenRead } from "node:fs";
const givenResponse = await POST(new Request("http://localhost/api/chat", { method: "POST", body: givenRead("chat.json", "utf8") }));
const givenBody = await givenResponse.text();
console.log(JSON.stringify({ status: givenResponse.status, done: givenBody.includes("Done."), prompts: givenPrompts, chat: JSON.parse(givenRead("chat.json", "utf8")).messages.length }));`,
    check: ({ facts }) => {
      expect(facts).toMatchObject({ status: 200, done: true });
      // The route compacted the chat before the model saw it.
      const prompts = facts["prompts"] as number[];
      expect(prompts).toHaveLength(1);
      expect(prompts[0]).toBeLessThan(facts["chat"] as number);
    },
  },
  {
    page: "integrations/ai-sdk/README.md",
    marker: "<!-- example: ai-sdk-thread -->",
    given: [AI_SDK_MODEL_JS, `const threadId = "thread-readme-0194f3a2";\nconst text = "Which warehouse ships order ORD-55120?";`],
    then: `import { openSqliteStore as givenOpen } from "@compaction/transcript";
const givenStore = await givenOpen({ file: "threads.sqlite", session: threadId });
const givenEntries = await givenStore.entries();
await givenStore.close();
console.log(JSON.stringify({ prompts: givenPrompts, roles: givenEntries.map((entry) => entry.message?.role ?? entry.type) }));`,
    check: ({ facts }) => {
      expect(facts["prompts"]).toEqual([1]);
      // The thread kept the user's message and the model's reply.
      expect(facts["roles"]).toEqual(["user", "assistant"]);
    },
  },
  {
    page: "integrations/langchain/README.md",
    marker: "<!-- example: langchain-middleware -->",
    given: [
      `import { tool as givenTool } from "langchain";
const fetchPage = givenTool(async ({ url }: { url: string }) => \`The page at \${url}.\`, {
  name: "fetch_page",
  description: "Fetch a web page.",
  schema: { type: "object", properties: { url: { type: "string" } }, required: ["url"] },
});`,
    ],
    then: `console.log(JSON.stringify({ invoke: typeof agent.invoke }));`,
    check: ({ facts }) => expect(facts["invoke"]).toBe("function"),
  },
  {
    page: "integrations/pi/README.md",
    marker: "<!-- example: pi-extension-file -->",
    runner: `import extension from "./sample.ts";\nconsole.log(JSON.stringify({ extension: typeof extension }));`,
    check: ({ facts }) => expect(facts["extension"]).toBe("function"),
  },
];

/** A user's project: an ES module package, as the samples (top-level await, import) are written for. */
const PACKAGE_JSON = JSON.stringify({ name: "user-project", private: true, type: "module" });

/** Runs `file` in `cwd` with Node, as `node file` (Node strips the types of a .ts file), `env` added to the environment. */
async function node(cwd: string, file: string, env: Readonly<Record<string, string>> = {}): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, ["--no-warnings", file], { cwd, encoding: "utf8", timeout: 120_000, env: { ...process.env, ...env } });
}

/** The module a sample is run as: what it is given, the sample, then what prints its facts. */
function moduleOf(sample: Sample): string {
  return [...(sample.given ?? []), markedBlock(sample.page, sample.marker).body, sample.then ?? "", "export {};", ""].join("\n");
}

/** The sample's file name: a TypeScript block as .ts, a JavaScript one as .mjs. */
function fileOf(sample: Sample): string {
  return markedBlock(sample.page, sample.marker).lang === "ts" ? "sample.ts" : "sample.mjs";
}

/** Writes the sample's project and runs it (with `env` added to the environment); what it printed. */
async function runSample(sample: Sample, env: Readonly<Record<string, string>> = {}): Promise<{ stdout: string; facts: Record<string, unknown> }> {
  const dir = tmpProject({ "package.json": PACKAGE_JSON, [fileOf(sample)]: moduleOf(sample), ...(sample.runner === undefined ? {} : { "runner.ts": sample.runner }) });
  await sample.files?.(dir);
  const { stdout } = await node(dir, sample.runner === undefined ? fileOf(sample) : "runner.ts", env);
  const last = stdout.trimEnd().split("\n").at(-1) ?? "";
  return { stdout, facts: sample.then === undefined && sample.runner === undefined ? {} : (JSON.parse(last) as Record<string, unknown>) };
}

describe("the package READMEs' code samples", () => {
  it.each(SAMPLES.map((sample) => [`${sample.page}: ${nameOf(sample.marker)}`, sample] as const))("%s runs and does what the README says", async (_name, sample) => {
    sample.check(await runSample(sample));
  });

  it("the TypeScript ones type-check against the packages' types, under strict", async () => {
    const typed = [...SAMPLES, POSTGRES_SAMPLE].filter((sample) => fileOf(sample) === "sample.ts");
    expect(typed.length).toBeGreaterThan(10);
    const files = Object.fromEntries(typed.map((sample) => [`${nameOf(sample.marker)}.ts`, moduleOf(sample)]));
    const tsconfig = { compilerOptions: { strict: true, target: "ES2022", lib: ["ES2023", "DOM"], module: "NodeNext", moduleResolution: "NodeNext", types: ["node"], skipLibCheck: true, noEmit: true }, files: Object.keys(files) };
    const dir = tmpProject({ "package.json": PACKAGE_JSON, ...files, "tsconfig.json": JSON.stringify(tsconfig) });
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    const result = await promisify(execFile)(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: dir, encoding: "utf8" }).catch((error: { stdout: string }) => ({ stdout: error.stdout }));
    expect(result.stdout).toBe("");
  });
});

const postgres = findPostgresBinaries();
const postgresMissing = "missing" in postgres ? postgres.missing : undefined;
if (postgresMissing !== undefined && isCi()) throw new Error(`CI must run the Postgres README's sample, but ${postgresMissing}`);

describe.skipIf(postgresMissing !== undefined)(`stores/postgres/README.md's sample${postgresMissing === undefined ? "" : ` (skipped: ${postgresMissing})`}`, () => {
  let server: PostgresServer;
  beforeAll(async () => {
    server = await startPostgresServer();
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  it("runs on a real server (DATABASE_URL) and reads back what it appended", async () => {
    const url = await createDatabase(server.url, `readme_${process.pid}`);
    POSTGRES_SAMPLE.check(await runSample(POSTGRES_SAMPLE, { DATABASE_URL: url }));
  });
});

describe("the presets' READMEs", () => {
  it.each(Object.entries(PRESET_OBJECT_MARKERS))("presets/%s/README.md shows the preset object the package exports", async (name, marker) => {
    const shown: unknown = new Function(`return (${markedBlock(`presets/${name}/README.md`, marker).body});`)();
    const { default: preset } = (await import(`@compaction/preset-${name}`)) as { default: unknown };
    expect(shown).toEqual(preset);
  });
});

describe("plugins/recall/README.md's search answer", () => {
  it("is what memory_search answers on the shipped session", async () => {
    const dir = tmpProject({});
    copySession(dir);
    const index = await openRecallIndex(join(dir, "session.jsonl"));
    try {
      const answer = await memorySearchTool(index, { name: "memory_search" }).handle({ query: "theme selector", limit: 2 });
      expect(answer.isError).toBe(false);
      expect(answer.text).toBe(markedBlock("plugins/recall/README.md", "<!-- example: recall-answer -->").body);
    } finally {
      await index.close();
    }
  });
});

describe("the plugins' READMEs' option tables", () => {
  const plugins = readdirSync(join(ROOT, "plugins"));

  it.each(plugins)("plugins/%s/README.md lists the options of the plugin's schema, with their defaults", async (name) => {
    const text = readFileSync(join(ROOT, "plugins", name, "README.md"), "utf8");
    const at = text.indexOf("\n## Options\n");
    expect(at).toBeGreaterThan(0);
    const end = text.indexOf("\n## ", at + 1);
    const rows = [...text.slice(at, end < 0 ? undefined : end).matchAll(/^\| `([A-Za-z]+)` \| ([^|]+) \|/gm)].map((match) => [match[1] as string, (match[2] as string).trim()] as const);
    const module = (await import(`@compaction/plugin-${name}`)) as Record<string, unknown>;
    const schemas = Object.entries(module).filter(([key]) => key.endsWith("_OPTIONS_SCHEMA"));
    expect(schemas).toHaveLength(1);
    const properties = ((schemas[0]?.[1] as { properties?: Record<string, { default?: unknown }> }).properties ?? {});
    // A model object is no JSON: the AI SDK summarizer's `model` and `providerOptions` are options outside its schema (its README says so).
    const outside = name === "summarizer-ai-sdk" ? ["model", "providerOptions"] : [];
    expect(rows.map(([option]) => option).filter((option) => !outside.includes(option)).sort()).toEqual(Object.keys(properties).sort());
    for (const [option, shown] of rows) {
      const value = properties[option]?.default;
      if (value === undefined) continue;
      expect(shown, `plugins/${name}/README.md: the default of ${option}`).toBe(`\`${typeof value === "string" && !shown.includes('"') ? value : JSON.stringify(value)}\``);
    }
  });
});

/** Every package README (workspaces with one), from the repository's root. */
const PACKAGE_READMES: readonly string[] = workspaceReadmes();

function workspaceReadmes(): string[] {
  const { workspaces } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { workspaces: string[] };
  return workspaces
    .flatMap((pattern) => (pattern.endsWith("/*") ? readdirSync(join(ROOT, pattern.slice(0, -2))).map((name) => `${pattern.slice(0, -2)}/${name}`) : [pattern]))
    .map((dir) => `${dir}/README.md`)
    .filter((page) => existsSync(join(ROOT, page)));
}

describe("the package READMEs' configuration files", () => {
  /** Every YAML block of a package README: each is a `.compactionrc`. */
  const configs = PACKAGE_READMES.flatMap((page) => codeBlocks(join(ROOT, page)).filter((block) => block.lang === "yaml").map((block) => [`${page}:${block.line}`, block.body] as const));

  it("finds them (the check is not vacuous)", () => {
    expect(configs.length).toBeGreaterThan(15);
  });

  it.each(configs)("%s loads as a .compactionrc, for every agent it has a section for", async (_where, yaml) => {
    const cwd = tmpProject({ ".compactionrc": yaml });
    const { agentSections: agents } = await loadConfig({ cwd });
    for (const agent of [undefined, ...agents]) {
      const compactor = await createCompactor(agent === undefined ? { cwd } : { cwd, agent });
      compactor.dispose();
    }
  });
});

describe("the package READMEs' commands", () => {
  /** `npm install …` lines of the package READMEs: the page, and the packages it names. */
  const installs = PACKAGE_READMES.flatMap((page) =>
    codeBlocks(join(ROOT, page))
      .filter((block) => ["sh", "bash"].includes(block.lang))
      .flatMap((block) => block.body.split("\n"))
      .filter((line) => line.startsWith("npm install "))
      .map((line) => [page, line.slice("npm install ".length).trim().split(/\s+/)] as const),
  );
  const workspacePackages = new Map(
    PACKAGE_READMES.filter((page) => existsSync(join(ROOT, page.replace(/README\.md$/, "package.json")))).map((page) => JSON.parse(readFileSync(join(ROOT, page.replace(/README\.md$/, "package.json")), "utf8")) as { name: string; private?: boolean; peerDependencies?: Record<string, string>; peerDependenciesMeta?: Record<string, { optional?: boolean }> }).map((pkg) => [pkg.name, pkg]),
  );

  it("has install lines to check (the check is not vacuous)", () => {
    expect(installs.length).toBeGreaterThanOrEqual(3);
  });

  it.each(installs)("%s: `npm install` names the package, its required peers, and only published packages of this repository", (page, names) => {
    const own = JSON.parse(readFileSync(join(ROOT, page.replace(/README\.md$/, "package.json")), "utf8")) as { name: string; peerDependencies?: Record<string, string>; peerDependenciesMeta?: Record<string, { optional?: boolean }> };
    expect(names).toContain(own.name);
    const required = Object.keys(own.peerDependencies ?? {}).filter((peer) => own.peerDependenciesMeta?.[peer]?.optional !== true);
    expect(names).toEqual(expect.arrayContaining(required));
    for (const name of names.filter((n) => n.startsWith("@compaction/"))) expect(workspacePackages.get(name)?.private, `${name} is a public package of this repository`).not.toBe(true);
    for (const name of names.filter((n) => !n.startsWith("@compaction/"))) expect(Object.keys(own.peerDependencies ?? {}), `${name} is a peer dependency of ${own.name}`).toContain(name);
  });

  /**
   * The `npx compaction …` command lines the package READMEs write: in their text (a code span
   * each), and as the lines of their blocks that are commands (not a sample run's `$ ` line, which
   * cli/src/readme-samples.test.ts runs).
   */
  const commandLines = [
    ...new Set(
      PACKAGE_READMES.flatMap((page) => {
        const text = readFileSync(join(ROOT, page), "utf8");
        const spans = [...text.matchAll(/`npx compaction ([^`]+)`/g)].map((match) => (match[1] as string).replaceAll("\\|", "|"));
        const blockLines = codeBlocks(join(ROOT, page))
          .flatMap((block) => block.body.split("\n"))
          .filter((line) => line.startsWith("npx compaction "))
          .map((line) => line.slice("npx compaction ".length));
        return [...spans, ...blockLines];
      }),
    ),
  ];

  it("has command lines to check (the check is not vacuous)", () => {
    expect(commandLines.length).toBeGreaterThan(20);
  });

  it.each(commandLines.filter((line) => line !== "…"))("`npx compaction %s`: the command exists and takes every option written", async (line) => {
    const words = line.replace(/[[\]]/g, " ").split(/\s+/).filter((word) => word !== "");
    const globals = words.filter((word) => GLOBAL_OPTIONS.includes(word));
    const rest = words.filter((word) => !GLOBAL_OPTIONS.includes(word));
    // A command, or a group (`context`, `session`) and its command; what follows is arguments and options.
    const path = rest.slice(0, ["context", "session"].includes(rest[0] ?? "") ? 2 : 1);
    expect(path.length).toBeGreaterThan(0);
    const help = await cliHelp(path);
    // The help of that command, not the program's (commander shows the program's for an unknown one).
    expect(help.split("\n")[0]).toMatch(new RegExp(`^Usage: compaction ${path.join(" ")} \\[options\\]`));
    for (const option of rest.filter((word) => word.startsWith("--"))) expect(help, `${option} of ${path.join(" ")}`).toMatch(new RegExp(`(^|[ ,])${option}([ ,=]|$)`, "m"));
    for (const option of globals) expect(await cliHelp([]), option).toContain(option);
  });
});

/** The program's own options, written before a command (`npx compaction --no-project-code context status`). */
const GLOBAL_OPTIONS = ["--no-project-code", "--skip-corrupt", "--no-color", "--verbose"];

/** `compaction <path> --help`, run as the bin is, outside npx. */
async function cliHelp(path: readonly string[]): Promise<string> {
  const bin = join(ROOT, "cli", "bin", "compaction.js");
  const { stdout } = await promisify(execFile)(process.execPath, [bin, ...path, "--help"], { encoding: "utf8", env: { PATH: process.env["PATH"] ?? "", HOME: ROOT, NO_COLOR: "1", COLUMNS: "200" } });
  return stdout;
}
