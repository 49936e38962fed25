import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  type CompactionPlugin,
  Compactor,
  createEstimateCounter,
  createOpenAIAdapter,
  ErrorCodes,
  type PiMessage,
} from "@compaction/core";
import { rejection } from "@compaction/core/testing";
import { assistant, toolResult, user, words } from "@compaction/core/testing/pi";
import {
  appendEntries,
  autoCompactEntry,
  buildContext,
  type CompactionEntry,
  compactionAnchor,
  createSession,
  loadBoundary,
  type NewEntry,
  readSession,
  upgradeSession,
} from "@compaction/transcript";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import { Gate, exchange, keepRecent, piCompactor, type PiCompactorOptions } from "./__fixtures__/compactors.js";
import type { ContextManager } from "./context-manager.js";
import { createContextManager } from "./create-context-manager.js";

const PI_LARGE = fileURLToPath(new URL("../../../shared/fixtures/real/pi-large-session.jsonl", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "compaction-context-manager-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileCount = 0;
const newPath = () => join(dir, `s${++fileCount}.jsonl`);

const managers: Array<ContextManager<PiMessage>> = [];
afterEach(async () => {
  for (const manager of managers.splice(0)) await manager.dispose();
});

const entry = (message: PiMessage): NewEntry => ({ type: "message", message });

/** A version 3 session holding `messages`, plus any other entries after them. */
async function session(messages: readonly PiMessage[], extra: readonly NewEntry[] = []): Promise<string> {
  const path = newPath();
  await createSession(path, { cwd: "/project" }, [...messages.map(entry), ...extra]);
  return path;
}

async function open(path: string, options: PiCompactorOptions & { autoCompact?: boolean } = {}): Promise<ContextManager<PiMessage>> {
  const manager = await createContextManager<PiMessage>({
    compactor: piCompactor(options),
    session: path,
    ...(options.autoCompact === undefined ? {} : { autoCompact: options.autoCompact }),
  });
  managers.push(manager);
  return manager;
}

/** The file's context as our full reader builds it, through JSON (as any reader of the file sees it). */
function fileContext(path: string): unknown[] {
  return JSON.parse(JSON.stringify(buildContext(readSession(path).entries).messages)) as unknown[];
}

const asJson = (messages: readonly unknown[]): unknown[] => JSON.parse(JSON.stringify(messages)) as unknown[];

function compactionEntries(path: string): CompactionEntry[] {
  return readSession(path).entries.filter((e): e is CompactionEntry => e.type === "compaction");
}

async function fillPastThreshold(manager: ContextManager<PiMessage>): Promise<void> {
  let turn = 0;
  while (manager.tokens <= manager.threshold) await manager.append(exchange(200, `fill${turn++}`));
}

describe("a context manager on a pi session file", () => {
  it("starts from the session's context by the boundary rule", async () => {
    const path = await session([...exchange(100, "a"), ...exchange(100, "b")]);
    const manager = await open(path);
    expect(asJson(manager.messages)).toEqual(asJson(loadBoundary(path).messages));
    expect(manager.session).toBe(path);
  });

  it("appends messages to the file as message entries, in order", async () => {
    const path = await session(exchange(100));
    const manager = await open(path);
    const added = [user("first"), user("second"), user("third")];
    await manager.append(added[0] as PiMessage);
    await manager.append(added.slice(1));
    expect(fileContext(path).slice(-3)).toEqual(asJson(added));
    expect(asJson(manager.messages)).toEqual(fileContext(path));
  });

  it("writes the compaction entry and reloads the context the file now gives", async () => {
    const path = await session(exchange(100));
    const manager = await open(path);
    await fillPastThreshold(manager);
    const result = await manager.afterResponse();
    expect(result?.status).toBe("compacted");
    const [compaction] = compactionEntries(path);
    expect(compaction?.details).toMatchObject({ trigger: "auto", summary: "summary of the earlier conversation" });
    expect(manager.messages[0]?.role).toBe("compactionSummary");
    expect(asJson(manager.messages)).toEqual(fileContext(path));
    expect(manager.tokens).toBeLessThanOrEqual(manager.threshold);
  });

  it("tells the id of the compaction entry it wrote in compaction-end", async () => {
    const path = await session(exchange(100));
    const manager = await open(path);
    const ids: Array<string | null> = [];
    manager.on("compaction-end", (e) => ids.push(e.entryId));
    await fillPastThreshold(manager);
    await manager.check();
    expect(ids).toEqual([compactionEntries(path)[0]?.id]);
  });

  it("writes messages appended during the compaction after the compaction entry, in order", async () => {
    const gate = new Gate();
    const path = await session(exchange(100));
    const manager = await open(path, { plugins: [keepRecent(200, { gate })] });
    await fillPastThreshold(manager);
    const running = manager.check();
    await gate.entered;
    const late = [user("late one"), user("late two")];
    const appended = Promise.all(late.map((message) => manager.append(message)));
    gate.open();
    await running;
    await appended;
    const entries = readSession(path).entries;
    const compactionIndex = entries.findIndex((e) => e.type === "compaction");
    expect(entries.slice(compactionIndex + 1).map((e) => (e.type === "message" ? e.message : e))).toEqual(asJson(late));
    expect(asJson(manager.messages)).toEqual(fileContext(path));
  });

  it("counts the compactions already on the branch and warns when the next one makes 3", async () => {
    const path = await session(exchange(100));
    const first = await open(path, { autoCompact: false });
    for (let i = 0; i < 2; i++) {
      await fillPastThreshold(first);
      await first.compact();
    }
    await first.dispose();
    const manager = await open(path, { autoCompact: false });
    const warnings: string[] = [];
    manager.on("warning", (e) => warnings.push(`${e.kind}:${e.compactions}`));
    expect(manager.compactions).toBe(2);
    await fillPastThreshold(manager);
    await manager.compact();
    expect(warnings).toEqual(["degradation-soft:3"]);
    expect(compactionEntries(path)).toHaveLength(3);
  });

  it("does not write a compaction that keeps pinned messages from before its cut, and says why", async () => {
    const pinned = user(`keep this ${words(100)}`, { pinned: true });
    const path = await session([pinned, ...exchange(400, "a"), ...exchange(400, "b")]);
    const manager = await open(path, { autoCompact: false });
    const size = statSync(path).size;
    const result = await manager.compact();
    expect(result.status).toBe("failed");
    expect(result.error?.code).toBe(ErrorCodes.CUT_REFUSED);
    expect(result.reason).toMatch(/keeps 1 message\(s\) from before its cut .* Nothing was written\./);
    expect(statSync(path).size).toBe(size);
    expect(manager.compactions).toBe(0);
  });
});

describe("compactions that pi's entry can record (suffixOnly)", () => {
  /** Records `run.suffixOnly`, then lets keepRecent cut. */
  const spy = (seen: boolean[]): CompactionPlugin => ({
    name: "spy",
    apply: (c) => c.hooks.beforeCompact.tap("spy", (run) => void seen.push(run.suffixOnly)),
  });

  it("asks for a summary and an unchanged suffix only with a session file, not in memory", async () => {
    const seen: boolean[] = [];
    const messages = () => [...exchange(400, "a"), ...exchange(400, "b")];
    const inFile = await open(await session(messages()), { plugins: [spy(seen), keepRecent(200)] });
    await inFile.compact();
    const inMemory = await createContextManager<PiMessage>({ compactor: piCompactor({ plugins: [spy(seen), keepRecent(200)] }), messages: messages() });
    managers.push(inMemory);
    await inMemory.compact();
    expect(seen).toEqual([true, false]);
  });

  it("treats an automatic run that only changed messages in place as a noop: no warning, file untouched", async () => {
    const inPlace: CompactionPlugin = {
      name: "in-place",
      apply: (c) => c.hooks.beforeCompact.tap("in-place", (run) => run.replaceMessages(run.messages.map((m) => ({ ...m }) as PiMessage))),
    };
    const path = await session([]);
    const manager = await open(path, { plugins: [inPlace] });
    await fillPastThreshold(manager);
    const warnings: string[] = [];
    manager.on("warning", (e) => warnings.push(e.kind));
    const size = statSync(path).size;
    const result = await manager.check();
    expect(result?.status).toBe("noop");
    expect(result?.reason).toContain("Plugin 'in-place' changed the messages in place");
    expect(warnings).toEqual([]);
    expect(statSync(path).size).toBe(size);
  });
});

describe("the session's own auto-compaction setting", () => {
  it("does not compact automatically when the session turned it off, but compacts by hand", async () => {
    const path = await session(exchange(100), [autoCompactEntry(false)]);
    const manager = await open(path);
    expect(manager.autoCompact).toBe(false);
    await fillPastThreshold(manager);
    expect(await manager.afterResponse()).toBeNull();
    expect((await manager.compact()).status).toBe("compacted");
  });

  it("wins over the autoCompact option", async () => {
    const path = await session(exchange(100), [autoCompactEntry(true)]);
    const manager = await open(path, { autoCompact: false });
    expect(manager.autoCompact).toBe(true);
  });

  it("is read again when another process turns it off while the manager runs", async () => {
    const path = await session(exchange(100));
    const manager = await open(path);
    await manager.append(user("hello"));
    expect(manager.autoCompact).toBe(true);
    await appendEntries(path, [autoCompactEntry(false)]);
    await fillPastThreshold(manager);
    expect(await manager.check()).toBeNull();
    expect(manager.autoCompact).toBe(false);
  });
});

describe("opening a session", () => {
  it("refuses a version 1 file, naming upgradeSession", async () => {
    const path = newPath();
    copyFileSync(PI_LARGE, path);
    const error = await rejection(createContextManager({ compactor: piCompactor(), session: path }));
    expect(error.code).toBe(ErrorCodes.TRANSCRIPT_INVALID);
    expect(error.hint).toMatch(/upgradeSession/);
  });

  it("refuses a compactor that does not read pi messages", async () => {
    const path = await session(exchange(100));
    const openai = new Compactor({ summarizer: createExtractiveSummarizer(), adapter: createOpenAIAdapter(), tokenCounter: createEstimateCounter(), contextWindow: 1000 });
    const error = await rejection(createContextManager({ compactor: openai, session: path }));
    expect(error.code).toBe(ErrorCodes.INPUT_INVALID);
    expect(error.message).toMatch(/a session file holds pi messages, but the messages would be read as 'openai'/);
  });
});

describe("on the real pi-large-session fixture", () => {
  it("auto-compacts when appended turns cross the threshold, and the file gives the same context", async () => {
    const path = newPath();
    copyFileSync(PI_LARGE, path);
    await upgradeSession(path);
    const probe = piCompactor();
    const tokens = probe.tokens.contextTokens(loadBoundary(path).messages).tokens;
    probe.dispose();
    const contextWindow = Math.ceil(tokens / 0.8) + 500;
    const manager = await open(path, { contextWindow, plugins: [keepRecent(Math.round(contextWindow * 0.3))] });
    expect(manager.tokens).toBe(tokens);
    const starts: number[] = [];
    manager.on("compaction-start", (e) => starts.push(e.tokens));
    let checks = 0;
    while (starts.length === 0 && checks < 50) {
      await manager.append(exchange(200, `new${checks}`));
      await manager.afterResponse();
      checks += 1;
    }
    expect(starts).toHaveLength(1);
    expect(starts[0]).toBeGreaterThan(manager.threshold);
    expect(compactionEntries(path)).toHaveLength(1);
    expect(asJson(manager.messages)).toEqual(fileContext(path));
    expect(manager.tokens).toBeLessThan(manager.threshold);
    expect(readFileSync(`${path}.bak`, "utf8")).toBe(readFileSync(PI_LARGE, "utf8"));
  });
});

describe("the size after a compaction: the After the compaction recorded (issue 15)", () => {
  it("is the event's After right after the compaction, and when the file is opened again; later messages add their calibrated count", async () => {
    const path = newPath();
    copyFileSync(PI_LARGE, path);
    await upgradeSession(path);
    const probe = piCompactor();
    const contextWindow = Math.ceil(probe.tokens.contextTokens(loadBoundary(path).messages).tokens / 0.8) + 500;
    probe.dispose();
    const options = { contextWindow, plugins: [keepRecent(Math.round(contextWindow * 0.3))], autoCompact: false };
    const manager = await open(path, options);
    const ends: number[] = [];
    manager.on("compaction-end", (e) => ends.push(e.tokens));
    const result = await manager.compact();
    expect(result.status).toBe("compacted");
    const after = result.event?.tokensAfterCompaction as number;
    // The usage figures make the provider's measure differ from our count: the anchor is what keeps them one figure.
    expect(after).toBeGreaterThan(result.countedTokensAfter ?? Number.POSITIVE_INFINITY);
    expect(result.tokensAfter).toBe(after);
    expect(manager.tokens).toBe(after);
    expect(ends).toEqual([after]);
    expect(compactionAnchor(loadBoundary(path))).toEqual({ tokens: after, lastIndex: manager.messages.length - 1, calibration: result.event?.calibration });
    expect(result.event?.calibration?.samples).toBeGreaterThanOrEqual(3);

    const reopened = await open(path, options);
    expect(reopened.tokens).toBe(after);
    await reopened.append([user("one more request"), user("and another")]);
    const loaded = loadBoundary(path);
    expect(reopened.tokens).toBe(reopened.compactor.tokens.contextTokens(loaded.messages, compactionAnchor(loaded)).tokens);
    expect(reopened.tokens).toBeGreaterThan(after);
    // The next compaction's Before is that figure too.
    const starts: number[] = [];
    reopened.on("compaction-start", (e) => starts.push(e.tokens));
    const again = await reopened.compact();
    expect(again.tokensBefore).toBe(starts[0]);
  });
});

describe("a newest turn that stays over the threshold after a compaction (session file)", () => {
  /** Ten exchanges, then a request whose tool call returned about `outputTokens` tokens. */
  async function hugeTurn(outputTokens: number): Promise<ContextManager<PiMessage>> {
    const path = await session(exchange(100));
    const manager = await open(path);
    for (let turn = 0; turn < 10; turn++) await manager.append(exchange(100, `t${turn}`));
    await manager.append([user("Run the tests."), assistant("Running them.", [{ id: "huge" }]), toolResult("huge", words(outputTokens))]);
    return manager;
  }

  it("compacts once, then does not run a compaction that cannot change anything on each later message of the turn", async () => {
    const manager = await hugeTurn(3_000);
    const runs: string[] = [];
    manager.on("compaction-end", (e) => runs.push(e.result.status));
    const warnings: string[] = [];
    manager.on("warning", (e) => warnings.push(e.message));
    expect((await manager.afterResponse())?.status).toBe("compacted");
    for (let step = 0; step < 5; step++) {
      await manager.append([assistant(`step ${step}`, [{ id: `s${step}` }]), toolResult(`s${step}`, words(20))]);
      expect(await manager.afterResponse()).toBeNull();
      expect(manager.tokens).toBeGreaterThan(manager.threshold); // still over: the file keeps the output whole
    }
    expect(runs).toEqual(["compacted"]);
    expect(warnings).toEqual([]);
    expect(manager.compactor.tokens.total(manager.requestMessages())).toBeLessThanOrEqual(manager.budget);
  });

  it("compacts again once a new user message makes the turn before it compactable", async () => {
    const manager = await hugeTurn(3_000);
    const runs: string[] = [];
    manager.on("compaction-end", (e) => runs.push(e.result.status));
    await manager.afterResponse();
    await manager.append([assistant("All passed."), user("Now summarise the failures."), assistant("There were none.")]);
    expect((await manager.afterResponse())?.status).toBe("compacted");
    expect(runs).toEqual(["compacted", "compacted"]);
  });
});
