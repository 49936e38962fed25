/**
 * Issue 10, tried as a user would: one enormous tool output in the newest turn, for every
 * built-in preset and every message format, through the context manager (in memory, and for pi
 * on a session file, which records only summary + unchanged suffix and shrinks at send time);
 * and the split-turn case, a newest turn whose tool results fill the budget.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ContextManager, createContextManager } from "@compaction/context-manager";
import { SHRINK_MARKER_PATTERN } from "@compaction/core";
import { builders, FORMATS, type Format } from "@compaction/core/testing";
import { createSession } from "@compaction/transcript";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { holdsNewestRequest, PRESETS, requestProblems } from "./support/never-stuck.js";
import { tmpProject } from "./support/tmp-project.js";

const dir = mkdtempSync(join(tmpdir(), "never-stuck-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const managers: Array<ContextManager<unknown>> = [];
afterEach(async () => {
  for (const manager of managers.splice(0)) await manager.dispose();
});

const WINDOW = 32_000;
/** About `tokens` tokens by chars/4, in numbered lines so head and tail can be recognised. */
function output(tokens: number, label: string): string {
  const line = `${label} line 0000000 ${"x".repeat(40)}\n`;
  const lines = Math.ceil((tokens * 4) / line.length);
  return Array.from({ length: lines }, (_, i) => `${label} line ${String(i).padStart(7, "0")} ${"x".repeat(40)}`).join("\n");
}

function rc(preset: string, format: Format, contextWindow = WINDOW, extra: object = {}): string {
  return tmpProject({
    ".compactionrc.json": JSON.stringify({ preset, adapter: format, contextWindow, tokenizer: { counter: "estimate" }, ...extra }),
  });
}

async function managerFor(preset: string, format: Format, session?: string): Promise<ContextManager<unknown>> {
  const manager = await createContextManager<unknown>({
    cwd: rc(preset, format),
    ...(session === undefined ? { messages: [] } : { session }),
  });
  managers.push(manager);
  return manager;
}

/** Ten ordinary turns, then a request whose tool call returns about 300,000 tokens. */
async function hugeTurn(manager: ContextManager<unknown>, format: Format): Promise<{ request: string }> {
  const b = builders(format);
  const system = b.system("You are a coding agent.");
  if (system !== undefined) await manager.append(system);
  for (let turn = 0; turn < 10; turn++) {
    await manager.append([
      b.user(`turn ${turn}: ${output(300, `ask${turn}`)}`),
      b.assistant(`checking ${turn}`, [{ id: `t${turn}`, name: "read" }]),
      ...b.toolResults([{ id: `t${turn}`, text: output(600, `file${turn}`) }]),
      b.assistant(`done with turn ${turn}`),
    ]);
    await manager.afterResponse();
  }
  const request = "Run the whole test suite and tell me which tests fail.";
  await manager.append([b.user(request), b.assistant("Running it.", [{ id: "huge", name: "bash" }])]);
  await manager.afterResponse();
  await manager.append(b.toolResults([{ id: "huge", text: output(300_000, "testlog") }]));
  return { request };
}

/** A provider that rejects any request over the window by our count, like a real one would. */
function provider(manager: ContextManager<unknown>) {
  const sent: number[] = [];
  const request = async (messages: readonly unknown[]) => {
    const tokens = manager.compactor.tokens.total(messages);
    sent.push(tokens);
    if (tokens > manager.contextWindow) throw Object.assign(new Error(`prompt is too long: ${tokens} tokens > ${manager.contextWindow} maximum`), { status: 400 });
    return messages;
  };
  return { sent, request };
}

describe.each(PRESETS)("one enormous tool output in the newest turn (preset %s)", (preset) => {
  it.each(FORMATS)("%s, in memory: compacts, the request fits the window and holds the user's request", async (format) => {
    const manager = await managerFor(preset, format);
    const { request } = await hugeTurn(manager, format);
    const result = await manager.afterResponse();
    expect(result?.status, result?.reason ?? "").toBe("compacted");
    const sent = manager.requestMessages();
    expect(manager.compactor.tokens.total(sent)).toBeLessThanOrEqual(WINDOW);
    expect(requestProblems(manager.compactor.adapter, sent, request)).toEqual([]);
    // The huge output is there as head and tail, with the marker naming its call.
    const outputs = sent.map((m) => manager.compactor.facts.of(m).text).filter((t) => t.includes("testlog line 0000000"));
    expect(outputs).toHaveLength(1);
    expect(outputs[0]).toMatch(SHRINK_MARKER_PATTERN);
    expect(outputs[0]).toContain("tool call huge");
    if (preset === "rolling") expect(outputs[0]).toContain("memory_search");
    // send() goes through at once; nothing is thrown.
    const { sent: sizes, request: call } = provider(manager);
    await manager.send(call);
    expect(sizes).toHaveLength(1);
  });

  it("pi on a session file: the file keeps the full output, send() shrinks what goes out", async () => {
    const path = join(dir, `${preset}.jsonl`);
    await createSession(path, { cwd: dir });
    const manager = await managerFor(preset, "pi", path);
    const { request } = await hugeTurn(manager, "pi");
    const result = await manager.afterResponse();
    expect(result?.status, result?.reason ?? "").toBe("compacted");
    // The newest turn is split; a session file keeps no message ahead of the summary, which carries the request.
    expect(holdsNewestRequest(manager, request)).toBe(true);
    const full = manager.messages.map((m) => manager.compactor.facts.of(m).text).find((t) => t.includes("testlog line 0000000"));
    expect(full).not.toMatch(SHRINK_MARKER_PATTERN); // the context (and its file) keep every line
    const sent = manager.requestMessages();
    expect(manager.compactor.tokens.total(sent)).toBeLessThanOrEqual(WINDOW);
    expect(requestProblems(manager.compactor.adapter, sent, request)).toEqual([]);
    expect(manager.requestMessages()).toEqual(sent); // the same context gives the same request
    const { sent: sizes, request: call } = provider(manager);
    await manager.send(call);
    expect(sizes).toHaveLength(1);
  });
});

describe("overflow recovery with an enormous output", () => {
  it.each(FORMATS)("%s: the provider's rejection is followed by one retry that goes through", async (format) => {
    // Auto-compaction off until the request: the first send holds everything and is rejected.
    const manager = await createContextManager<unknown>({ cwd: rc("safeguard", format), messages: [], autoCompact: false });
    managers.push(manager);
    const { request } = await hugeTurn(manager, format);
    const sizes: number[] = [];
    let rejected = false;
    const reply = await manager.send(async (messages) => {
      sizes.push(manager.compactor.tokens.total(messages));
      // Rejects the first request whatever its size: our count and the provider's can differ.
      if (!rejected) {
        rejected = true;
        throw Object.assign(new Error("prompt is too long"), { status: 400 });
      }
      return messages;
    }).catch((error: unknown) => error);
    // With auto-compaction off, nothing may be compacted: the error says so.
    expect((reply as { code?: string }).code).toBe("COMPACTION_CONTEXT_OVERFLOW");
    expect(String((reply as Error).message)).toMatch(/auto-compaction is off/);

    const on = await createContextManager<unknown>({ cwd: rc("safeguard", format), messages: [...manager.messages] });
    managers.push(on);
    let first = true;
    const sent = await on.send(async (messages) => {
      if (first) {
        first = false;
        throw Object.assign(new Error("prompt is too long"), { status: 400 });
      }
      return messages;
    });
    expect(on.compactor.tokens.total(sent)).toBeLessThanOrEqual(WINDOW);
    expect(requestProblems(on.compactor.adapter, sent, request)).toEqual([]);
  });

  it("throws COMPACTION_CONTEXT_OVERFLOW with the numbers only when the pinned messages and the request alone are too large", async () => {
    const b = builders("openai");
    const pinned = b.pin(b.user(output(40_000, "policy")));
    const manager = await createContextManager<unknown>({
      cwd: rc("safeguard", "openai"),
      messages: [b.system("You are a coding agent."), pinned, b.assistant("noted"), b.user("go"), b.assistant("ok"), b.user("now this")],
    });
    managers.push(manager);
    const error = await manager
      .send(async () => {
        throw Object.assign(new Error("prompt is too long"), { status: 400 });
      })
      .catch((thrown: unknown) => thrown as Error & { code?: string });
    expect(error.code, error.message).toBe("COMPACTION_CONTEXT_OVERFLOW");
    expect(error.message).toMatch(/the system prompt \(\d+ tokens\), the pinned messages \(4\d{4}\) and the newest user message \(\d+, cut to head and tail\)/);
    // The window less its own reserve (an eighth of 32,000).
    expect(error.message).toMatch(/budget of 28000 tokens/);
  });
});

describe("the split-turn case", () => {
  it.each(FORMATS)("%s, safeguard, 16k window: a newest turn whose tool results fill the budget keeps the request", async (format) => {
    const b = builders(format);
    const manager = await createContextManager<unknown>({ cwd: rc("safeguard", format, 16_000, { reserveTokens: 2000 }), messages: [] });
    managers.push(manager);
    for (let turn = 0; turn < 3; turn++) {
      await manager.append([b.user(`earlier ${turn}`), b.assistant(`answer ${turn} ${output(500, `a${turn}`)}`)]);
    }
    const request = "Refactor the parser and run every check.";
    await manager.append(b.user(request));
    for (let step = 0; step < 8; step++) {
      await manager.append([
        b.assistant(`step ${step}`, [{ id: `s${step}a` }, { id: `s${step}b` }]),
        ...b.toolResults([
          { id: `s${step}a`, text: output(1500, `out${step}a`) },
          { id: `s${step}b`, text: output(700, `out${step}b`), isError: step % 3 === 0 },
        ]),
      ]);
      const result = await manager.afterResponse();
      if (result?.status === "compacted") expect(manager.compactor.tokens.total(manager.requestMessages())).toBeLessThanOrEqual(16_000);
      expect(requestProblems(manager.compactor.adapter, manager.requestMessages(), request)).toEqual([]);
      // Verbatim: the request is small, so it is never shrunk.
      expect(manager.requestMessages().some((m) => manager.compactor.facts.of(m).text === request)).toBe(true);
    }
    expect(manager.compactions).toBeGreaterThan(0);
  });
});
