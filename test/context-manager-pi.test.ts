/**
 * The context manager on a real pi session with the real safeguard preset: what it writes, pi
 * itself (SessionManager) opens and builds the same context from.
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ContextManager, createContextManager } from "@compaction/context-manager";
import { type PiMessage, createEstimateCounter, createPiAdapter, Compactor } from "@compaction/core";
import { loadBoundary, upgradeSession } from "@compaction/transcript";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { tmpProject } from "./support/tmp-project.js";

const PI_LARGE = fileURLToPath(new URL("../../shared/fixtures/real/pi-large-session.jsonl", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "context-manager-pi-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let count = 0;

const managers: Array<ContextManager<PiMessage>> = [];
afterEach(async () => {
  for (const manager of managers.splice(0)) await manager.dispose();
});

let clock = Date.parse("2030-01-01T00:00:00Z");
const text = (label: string, words: number) => `${label} ${Array.from({ length: words }, (_, i) => `word${i}`).join(" ")}`;
const user = (label: string): PiMessage => ({ role: "user", content: [{ type: "text", text: text(label, 120) }], timestamp: (clock += 1000) }) as PiMessage;
const assistant = (label: string): PiMessage =>
  ({
    role: "assistant",
    content: [{ type: "text", text: text(label, 120) }],
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    api: "anthropic-messages",
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "stop",
    timestamp: (clock += 1000),
  }) as unknown as PiMessage;

/** An upgraded copy of the real session, and a context window whose 80% threshold is just above its context. */
async function realSession(): Promise<{ path: string; contextWindow: number }> {
  const path = join(dir, `s${++count}.jsonl`);
  copyFileSync(PI_LARGE, path);
  await upgradeSession(path);
  const probe = new Compactor<PiMessage>({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), contextWindow: 1 });
  const tokens = probe.tokens.contextTokens(loadBoundary(path).messages).tokens;
  probe.dispose();
  return { path, contextWindow: Math.ceil(tokens / 0.8) + 2000 };
}

function piContext(path: string): unknown[] {
  return SessionManager.open(path, dir).buildSessionContext().messages;
}

const asJson = (messages: readonly unknown[]): unknown => JSON.parse(JSON.stringify(messages));

/** The provider rejects the first request as too long: one compaction, one smaller retry, and pi agrees with the file. */
async function expectOverflowRecovered(manager: ContextManager<PiMessage>, path: string): Promise<void> {
  const sent: number[] = [];
  const reply = await manager.send(async (messages) => {
    sent.push(messages.length);
    if (sent.length === 1) throw Object.assign(new Error("prompt is too long: 213462 tokens > 200000 maximum"), { status: 400 });
    return "done";
  });
  expect(reply).toBe("done");
  expect(sent).toHaveLength(2);
  expect(sent[1]).toBeLessThan(sent[0] as number);
  expect(piContext(path)).toStrictEqual(asJson(manager.messages));
}

describe("createContextManager on a real pi session, read back by pi", () => {
  it("auto-compacts with the safeguard preset, and pi builds the manager's messages from the file", async () => {
    const { path, contextWindow } = await realSession();
    const cwd = tmpProject({
      ".compactionrc.json": JSON.stringify({ preset: "safeguard", tokenizer: { counter: "estimate" }, contextWindow, reserveTokens: 16384 }),
    });
    const manager = await createContextManager<PiMessage>({ cwd, session: path });
    managers.push(manager);
    const reasons: string[] = [];
    manager.on("compaction-start", (e) => reasons.push(e.reason));
    for (let turn = 0; turn < 40 && reasons.length === 0; turn++) {
      await manager.append([user(`question ${turn}`), assistant(`answer ${turn}`)]);
      await manager.afterResponse();
    }
    expect(reasons).toEqual(["threshold"]);
    expect(manager.messages[0]?.role).toBe("compactionSummary");
    expect(piContext(path)).toStrictEqual(asJson(manager.messages));

    await manager.append([user("after the compaction"), assistant("still here")]);
    expect(piContext(path)).toStrictEqual(asJson(manager.messages));
  });

  it("recovers from an overflow error by compacting once, and pi builds the retried context", async () => {
    const { path } = await realSession();
    const cwd = tmpProject({ ".compactionrc.json": JSON.stringify({ preset: "safeguard", tokenizer: { counter: "estimate" }, contextWindow: 1_000_000 }) });
    const manager = await createContextManager<PiMessage>({ cwd, session: path });
    managers.push(manager);
    await expectOverflowRecovered(manager, path);
  });

  it.each(["safeguard", "layered", "sliding-window"])(
    "recovers from an overflow with the %s preset when our count puts the context below the preset's thresholds (at three quarters of the window)",
    async (preset) => {
      const { path, contextWindow } = await realSession();
      // realSession's window puts the context at 80%; this one at 75%, under every threshold.
      const window = Math.ceil((contextWindow - 2000) * 0.8 / 0.75);
      const cwd = tmpProject({ ".compactionrc.json": JSON.stringify({ preset, tokenizer: { counter: "estimate" }, contextWindow: window, reserveTokens: 8000 }) });
      const manager = await createContextManager<PiMessage>({ cwd, session: path });
      managers.push(manager);
      await expectOverflowRecovered(manager, path);
    },
  );
});
