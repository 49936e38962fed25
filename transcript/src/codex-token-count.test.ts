/**
 * The provider's usage figures and the model's window in Codex rollouts (`event_msg`
 * `token_count`, `task_started`): on the real rollout in ../shared/fixtures/real (CLI 0.47, which
 * writes the event before the call's items) and on small rollouts written here in both orders,
 * with events that carry nothing, repeat the one before, or hold figures that cannot be read.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { Compactor, createEstimateCounter, createOpenAIAdapter, type OpenAIAssistantMessage, type OpenAIChatMessage } from "@compaction/core";
import { importCodexRollout } from "./codex-import.js";

const REAL = fileURLToPath(new URL("../../../shared/fixtures/real/codex-pomodoro-example.jsonl", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "compaction-codex-usage-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const adapter = createOpenAIAdapter();

/** A copy of the real rollout in the temporary folder, so nothing can write to the original. */
const real = join(dir, "codex-pomodoro-example.jsonl");
copyFileSync(REAL, real);

type Payload = Record<string, unknown>;
let files = 0;

/** A rollout of these lines (`[type, payload]`), timestamps one second apart. */
function rollout(lines: readonly (readonly [string, Payload])[]): string {
  const path = join(dir, `rollout-${++files}.jsonl`);
  const text = lines.map(([type, payload], i) => JSON.stringify({ timestamp: new Date(Date.UTC(2025, 9, 29, 1, 0, i)).toISOString(), type, payload }));
  writeFileSync(path, `${text.join("\n")}\n`);
  return path;
}

const meta: [string, Payload] = ["session_meta", { id: "019a0000-0000-7000-8000-000000000000", cwd: "/home/dev/app", cli_version: "0.58.0" }];
const user = (text: string): [string, Payload] => ["response_item", { type: "message", role: "user", content: [{ type: "input_text", text }] }];
const reply = (text: string): [string, Payload] => ["response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text }] }];
const call = (id: string): [string, Payload] => ["response_item", { type: "function_call", name: "shell", arguments: '{"command":["ls"]}', call_id: id }];
const output = (id: string): [string, Payload] => ["response_item", { type: "function_call_output", call_id: id, output: "README.md\nsrc" }];
const reasoning: [string, Payload] = ["response_item", { type: "reasoning", summary: [{ type: "summary_text", text: "**Looking around**" }], content: null }];

interface Usage {
  input_tokens?: unknown;
  cached_input_tokens?: unknown;
  output_tokens?: unknown;
  reasoning_output_tokens?: unknown;
  total_tokens?: unknown;
}

/** Running sums for `tokenCount`: each call's figures added, as Codex's `total_token_usage`. */
let running = 0;
/** A token_count event for a call of `input` prompt and `output` reply tokens (its running sum unique unless `repeat`). */
function tokenCount(input: number, output: number, extra: { window?: unknown; last?: Usage; repeat?: boolean } = {}): [string, Payload] {
  if (extra.repeat !== true) running += input + output;
  const last = extra.last ?? { input_tokens: input, cached_input_tokens: 0, output_tokens: output, reasoning_output_tokens: 0, total_tokens: input + output };
  return [
    "event_msg",
    {
      type: "token_count",
      info: { total_token_usage: { total_tokens: running }, last_token_usage: last, model_context_window: "window" in extra ? extra.window : 272_000 },
      rate_limits: null,
    },
  ];
}
const infoNull: [string, Payload] = ["event_msg", { type: "token_count", info: null, rate_limits: { primary: { used_percent: 4 } } }];

const assistants = (messages: readonly OpenAIChatMessage[]) => messages.filter((m): m is OpenAIAssistantMessage => m.role === "assistant");
const figures = (messages: readonly OpenAIChatMessage[]) => assistants(messages).map((m) => adapter.readFacts(m).usageContextTokens);

describe("usage figures of the real rollout (CLI 0.47: the event before the call's items)", () => {
  const imported = importCodexRollout(real);
  /** The distinct calls' `last_token_usage`, in file order: an event with the running sum of the one before repeats it. */
  const calls: Usage[] = [];
  let previous = "";
  for (const line of readFileSync(real, "utf8").trimEnd().split("\n")) {
    const payload = (JSON.parse(line) as { payload: Payload }).payload;
    const info = payload["info"] as { total_token_usage: unknown; last_token_usage: Usage } | null | undefined;
    if (payload["type"] !== "token_count" || info == null) continue;
    const key = JSON.stringify(info.total_token_usage);
    if (key !== previous) calls.push(info.last_token_usage);
    previous = key;
  }

  it("gives each of its 21 model calls' replies the usage of that call, repeats left out", () => {
    expect(calls).toHaveLength(21);
    expect(assistants(imported.messages)).toHaveLength(21);
    expect(figures(imported.messages)).toEqual(calls.map((usage) => usage.total_tokens));
  });

  it("puts the call's figures on its reply as OpenAI Chat usage: the prompt with its cached part, the reply with its reasoning", () => {
    const first = assistants(imported.messages)[0];
    // Line 8 reports the call whose reasoning and shell call are lines 9 and 10.
    expect(imported.lines[imported.messages.indexOf(first as OpenAIChatMessage)]).toBe(10);
    expect(first?.usage).toEqual({
      prompt_tokens: 4990,
      completion_tokens: 108,
      total_tokens: 5098,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 64 },
    });
    // The context as pi records it: input + cacheRead + cacheWrite + output, the cached part counted once.
    const last = assistants(imported.messages).at(-1);
    expect(last?.usage).toMatchObject({ prompt_tokens: 18_733, completion_tokens: 1123, total_tokens: 19_856, prompt_tokens_details: { cached_tokens: 18_432 } });
  });

  it("reads the window the model had, 272,000 tokens, and ignores nothing", () => {
    expect(imported.contextWindow).toBe(272_000);
    expect(imported.ignoredFigures).toEqual([]);
  });

  it("is measured from the newest figure plus the count of what follows it", () => {
    const compactor = new Compactor<OpenAIChatMessage>({ adapter, tokenCounter: createEstimateCounter(), contextWindow: 272_000 });
    expect(compactor.tokens.contextTokens(imported.messages)).toMatchObject({ tokens: 19_856, base: "usage", lastUsageIndex: imported.messages.length - 1 });
    // Cut after a tool output: the figure of the call before it, plus the counted output.
    const upToOutput = imported.messages.slice(0, -1);
    expect(upToOutput.at(-1)?.role).toBe("tool");
    const size = compactor.tokens.contextTokens(upToOutput);
    expect(size.base).toBe("usage");
    expect(size.usageTokens).toBe(18_702);
    expect(size.tokens).toBeGreaterThan(18_702);
    compactor.dispose();
  });
});

describe("usage figures of generated rollouts", () => {
  it("gives a call's figures to its reply whether the event comes after the call's items (CLI 0.5x and later) or before them (0.47)", () => {
    const after = importCodexRollout(rollout([meta, user("list the files"), infoNull, reasoning, call("c1"), tokenCount(5000, 100), output("c1"), reply("Two files."), tokenCount(5200, 20)]));
    const before = importCodexRollout(rollout([meta, user("list the files"), infoNull, tokenCount(5000, 100), reasoning, call("c1"), output("c1"), tokenCount(5200, 20), reply("Two files.")]));
    expect(figures(after.messages)).toEqual([5100, 5220]);
    expect(figures(before.messages)).toEqual([5100, 5220]);
    expect(after.ignoredFigures).toEqual([]);
  });

  it("reads no figure from an event whose info is null (written before the first call completes), and reports nothing", () => {
    const imported = importCodexRollout(rollout([meta, user("hi"), infoNull, reply("Hello."), infoNull]));
    expect(figures(imported.messages)).toEqual([undefined]);
    expect(imported.ignoredFigures).toEqual([]);
    expect(imported.contextWindow).toBeUndefined();
  });

  it("takes an event with the running sum of the one before as a repeat, not as the figure of the next call", () => {
    // The second call was interrupted: Codex repeated the first call's event and wrote none of its own.
    const first = tokenCount(5000, 100);
    const repeat = tokenCount(5000, 100, { repeat: true });
    const imported = importCodexRollout(rollout([meta, user("go"), call("c1"), first, output("c1"), repeat, call("c2"), output("c2")]));
    expect(figures(imported.messages)).toEqual([5100, undefined]);
  });

  it("gives a figure to the newest reply of its span only", () => {
    const imported = importCodexRollout(rollout([meta, user("go"), tokenCount(5000, 300), reply("First, a note."), reply("Then the answer.")]));
    expect(figures(imported.messages)).toEqual([undefined, 5300]);
  });

  it("gives no reply after a compaction the figure of the call that wrote the summary", () => {
    const compacted: [string, Payload] = ["compacted", { message: "The user asked for the files; there are two." }];
    const imported = importCodexRollout(rollout([meta, user("go"), reply("Done."), tokenCount(5000, 10), user("more"), tokenCount(9000, 400), compacted, reply("After.")]));
    expect(figures(imported.messages)).toEqual([undefined]);
  });

  it("adds input and output when total_tokens is missing or 0, as Codex reads it, and reads no figure from an all-zero event", () => {
    const missing = importCodexRollout(rollout([meta, user("a"), reply("b"), tokenCount(0, 0, { last: { input_tokens: 700, output_tokens: 50 } })]));
    const zero = importCodexRollout(rollout([meta, user("a"), reply("b"), tokenCount(0, 0, { last: { input_tokens: 700, output_tokens: 50, total_tokens: 0 } })]));
    const empty = importCodexRollout(rollout([meta, user("a"), reply("b"), tokenCount(0, 0, { last: { input_tokens: 0, output_tokens: 0, total_tokens: 0 } })]));
    expect(figures(missing.messages)).toEqual([750]);
    expect(assistants(missing.messages)[0]?.usage).toEqual({ prompt_tokens: 700, completion_tokens: 50, total_tokens: 750 });
    expect(figures(zero.messages)).toEqual([750]);
    expect(figures(empty.messages)).toEqual([undefined]);
    expect(empty.ignoredFigures).toEqual([]);
  });

  it.each([
    ["a string", { input_tokens: "5000", output_tokens: 100 }, 'info.last_token_usage.input_tokens: expected a whole number of tokens (0 or more), found string "5000"'],
    ["a negative number", { input_tokens: 5000, output_tokens: -1 }, "info.last_token_usage.output_tokens: expected a whole number of tokens (0 or more), found integer -1"],
    ["a fraction", { input_tokens: 5000.5, output_tokens: 100 }, "info.last_token_usage.input_tokens: expected a whole number of tokens (0 or more), found number 5000.5"],
    ["a required count missing", { input_tokens: 5000 }, "info.last_token_usage.output_tokens: expected a whole number of tokens (0 or more), found nothing"],
    ["an optional count that is null", { input_tokens: 5000, output_tokens: 100, cached_input_tokens: null }, "info.last_token_usage.cached_input_tokens: expected a whole number of tokens (0 or more), found null"],
    ["a total that is an object", { input_tokens: 5000, output_tokens: 100, total_tokens: { n: 5100 } }, "info.last_token_usage.total_tokens: expected a whole number of tokens (0 or more), found an object"],
  ])("ignores, with the reason and the line, a figure whose count is %s, and reads the rest of the rollout", (_, last, reason) => {
    const imported = importCodexRollout(rollout([meta, user("go"), reply("Done."), tokenCount(0, 0, { last: last as Usage }), user("again"), reply("Done again."), tokenCount(6000, 50)]));
    expect(imported.ignoredFigures).toEqual([{ line: 4, reason: `token_count ${reason}; the event's usage figure is not read` }]);
    expect(figures(imported.messages)).toEqual([undefined, 6050]);
    expect(imported.contextWindow).toBe(272_000);
  });

  it.each([
    ["info is a string", { type: "token_count", info: "5000" }, "token_count info: expected an object or null, found string \"5000\""],
    ["info is an array", { type: "token_count", info: [] }, "token_count info: expected an object or null, found an empty array"],
    ["info is missing", { type: "token_count", rate_limits: null }, "token_count info: expected an object or null, found nothing"],
    [
      "last_token_usage is missing",
      { type: "token_count", info: { total_token_usage: { total_tokens: 1 }, model_context_window: 272_000 } },
      "token_count info.last_token_usage: expected an object of token counts, found nothing; the event's usage figure is not read",
    ],
  ])("ignores an event whose %s, saying so, without failing the import", (_, payload, reason) => {
    const imported = importCodexRollout(rollout([meta, user("go"), reply("Done."), ["event_msg", payload]]));
    expect(imported.ignoredFigures).toEqual([{ line: 4, reason }]);
    expect(figures(imported.messages)).toEqual([undefined]);
  });

  it("ignores a window that is not a whole number above 0 but still reads the event's usage", () => {
    const imported = importCodexRollout(rollout([meta, user("go"), reply("Done."), tokenCount(5000, 100, { window: "272000" }), tokenCount(5200, 10, { window: 0 })]));
    expect(imported.contextWindow).toBeUndefined();
    expect(imported.ignoredFigures).toEqual([
      { line: 4, reason: 'token_count info.model_context_window: expected a whole number of tokens above 0, found string "272000"; the window it states is not used' },
      { line: 5, reason: "token_count info.model_context_window: expected a whole number of tokens above 0, found integer 0; the window it states is not used" },
    ]);
    expect(figures(imported.messages)).toEqual([5210]);
  });

  it("takes the newest window stated, by a token_count or a task_started event, and none from a window of null", () => {
    const started = (window: unknown): [string, Payload] => ["event_msg", { type: "task_started", model_context_window: window }];
    expect(importCodexRollout(rollout([meta, started(400_000), user("go"), reply("Done.")])).contextWindow).toBe(400_000);
    expect(importCodexRollout(rollout([meta, started(400_000), user("go"), reply("Done."), tokenCount(5000, 100, { window: 353_400 })])).contextWindow).toBe(353_400);
    expect(importCodexRollout(rollout([meta, user("go"), reply("Done."), tokenCount(5000, 100, { window: null })])).contextWindow).toBeUndefined();
  });
});
