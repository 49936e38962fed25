import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { Compactor, createEstimateCounter, createPiAdapter, type PiMessage, type Summarizer } from "@compaction/core";
import { keepRecent } from "@compaction/core/testing";
import { words } from "@compaction/core/testing/pi";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import { loadBoundary } from "@compaction/transcript";
import { exchange } from "./__fixtures__/compactors.js";
import { SlowModel } from "./__fixtures__/slow-model.js";
import type { ContextManager } from "./context-manager.js";
import { createContextManager, type ContextManagerOptions } from "./create-context-manager.js";
import type { BackgroundEvent } from "./events.js";

const managers: Array<ContextManager<PiMessage>> = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const manager of managers.splice(0)) await manager.dispose();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function compactorWith(model: Summarizer, contextWindow = 4_000): Compactor<PiMessage> {
  return new Compactor<PiMessage>({
    summarizer: model,
    adapter: createPiAdapter(),
    tokenCounter: createEstimateCounter(),
    plugins: [keepRecent(600)],
    contextWindow,
    reserveTokens: 400,
  });
}

async function manager(model: Summarizer, options: Partial<ContextManagerOptions<PiMessage>> = {}): Promise<{ target: ContextManager<PiMessage>; events: BackgroundEvent[] }> {
  const target = await createContextManager<PiMessage>({ compactor: compactorWith(model), messages: [], ...options });
  managers.push(target);
  const events: BackgroundEvent[] = [];
  target.on("background", (event) => events.push(event));
  return { target, events };
}

/** Appends exchanges, checking after each, until `until()` holds. */
async function grow(target: ContextManager<PiMessage>, until: () => boolean, label = "t", tokens = 120): Promise<void> {
  for (let i = 0; !until() && i < 200; i++) {
    await target.append(exchange(tokens, `${label}${i}`));
    await target.check();
  }
  expect(until()).toBe(true);
}

const settled = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("background compaction in the context manager", () => {
  it("prepares past the prepare mark, appends at once while the model writes, and puts it in place at the threshold with everything appended since", async () => {
    const model = new SlowModel();
    const { target, events } = await manager(model);
    expect(target.prepareMark).not.toBeNull();
    await grow(target, () => target.prepared !== null);
    expect(target.tokens).toBeGreaterThan(target.prepareMark as number);
    expect(target.tokens).toBeLessThanOrEqual(target.threshold);
    expect(target.compacting).toBe(true);
    const snapshot = [...target.messages];
    // The model is writing: appends land at once and checks do not wait, past the threshold too.
    const appended: PiMessage[] = [];
    while (target.tokens <= target.threshold) {
      const turn = exchange(120, `during${appended.length}`);
      appended.push(...turn);
      const append = target.append(turn);
      await append;
      expect(await target.check()).toBeNull();
    }
    expect(target.tokens).toBeLessThanOrEqual(target.contextWindow - target.reserveTokens);
    expect(target.compactions).toBe(0);
    expect(target.messages.slice(snapshot.length)).toEqual(appended);
    model.release();
    await target.prepared?.done;
    const result = await target.check();
    expect(result?.status).toBe("compacted");
    expect(target.compactions).toBe(1);
    // The summary, the messages it kept of the snapshot, then every message appended since, in order.
    expect(target.messages.slice(-appended.length)).toEqual(appended);
    expect(target.messages[0]).toMatchObject({ role: "compactionSummary" });
    expect(target.messages.length).toBe((result?.messages.length ?? 0) + appended.length);
    expect(events.map((e) => e.type)).toEqual(["start", "ready"]);
  });

  it("drops a prepared compaction when a manual compaction replaced the context, never applying it, and reports its cost", async () => {
    const model = new SlowModel();
    const { target, events } = await manager(model);
    await grow(target, () => target.prepared !== null);
    model.release();
    await target.prepared?.done;
    model.instant = true;
    const manual = await target.compact();
    expect(manual.status).toBe("compacted");
    const dropped = events.find((e) => e.type === "dropped");
    expect(dropped).toMatchObject({ type: "dropped", cost: { reason: "prepare", why: expect.stringContaining("manual compaction replaced") } });
    expect(dropped?.type === "dropped" && dropped.cost.compactedMessages).toBeGreaterThan(0);
    expect(target.prepared).toBeNull();
    const after = [...target.messages];
    // Past the threshold again: the dropped one is gone, a new one is prepared from the new context.
    await target.check();
    expect(target.messages.slice(0, after.length)).toEqual(after);
    expect(target.compactions).toBe(1);
  });

  it("waits for the compaction in flight only when a request cannot be sent, and after waitMs compacts with the no-model summary", async () => {
    const model = new SlowModel();
    const { target, events } = await manager(model, { waitMs: 30 });
    await grow(target, () => target.prepared !== null);
    // One large turn takes the context past the window less the reserve while the model writes.
    await target.append([...exchange(3_000, "huge")]);
    expect(target.tokens).toBeGreaterThan(target.contextWindow - target.reserveTokens);
    const result = await target.check();
    expect(result?.status).toBe("compacted");
    expect(result?.summary).not.toContain("model summary");
    expect(events.map((e) => e.type)).toEqual(["start", "waiting", "wait", "dropped"]);
    expect(events[2]).toMatchObject({ type: "wait", timedOut: true });
  });

  it("waits for the compaction in flight and applies it when it arrives before waitMs", async () => {
    const model = new SlowModel();
    const { target, events } = await manager(model, { waitMs: 10_000 });
    await grow(target, () => target.prepared !== null);
    await target.append([...exchange(3_000, "huge")]);
    const check = target.check();
    await settled();
    model.release();
    const result = await check;
    expect(result?.status).toBe("compacted");
    expect(result?.summary).toContain("model summary");
    // The wait is reported when it ends, after the compaction it waited for became ready.
    expect(events.map((e) => e.type)).toEqual(["start", "waiting", "ready", "wait"]);
    expect(events.find((e) => e.type === "wait")).toMatchObject({ timedOut: false });
  });

  it("with the cache cold (a pause past cacheTtlMs), puts a ready compaction in place below the threshold", async () => {
    const model = new SlowModel();
    model.instant = true;
    const clock = { now: 1_000 };
    const starts: string[] = [];
    const { target } = await manager(model, { cacheTtlMs: 60_000, now: () => clock.now });
    target.on("compaction-start", (e) => starts.push(e.reason));
    await grow(target, () => target.prepared !== null);
    target.requestMessages();
    await target.prepared?.done;
    expect(await target.check()).toBeNull();
    expect(target.tokens).toBeLessThanOrEqual(target.threshold);
    clock.now += 60_001;
    const result = await target.check();
    expect(result?.status).toBe("compacted");
    expect(starts).toEqual(["cache-cold"]);
  });

  it("with background off, compacts at the threshold as a blocking host does", async () => {
    const model = new SlowModel();
    model.instant = true;
    const { target, events } = await manager(model, { background: false });
    expect(target.prepareMark).toBeNull();
    await grow(target, () => target.compactions > 0);
    expect(events).toEqual([]);
  });

  it("in a pi session file: the compaction entry goes after the messages appended since, and the file reads back as the context", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cm-background-"));
    dirs.push(dir);
    const session = join(dir, "session.jsonl");
    writeFileSync(session, `${JSON.stringify({ type: "session", version: 3, id: "s1", timestamp: new Date(0).toISOString(), cwd: dir })}\n`);
    const model = new SlowModel();
    const { target } = await manager(model, { session, messages: undefined });
    await grow(target, () => target.prepared !== null);
    const appended = [...exchange(120, "late-a"), ...exchange(120, "late-b")];
    await target.append(appended);
    model.release();
    await target.prepared?.done;
    while (target.tokens <= target.threshold) {
      const more = exchange(120, `late${appended.length}`);
      appended.push(...more);
      await target.append(more);
    }
    const result = await target.check();
    expect(result?.status).toBe("compacted");
    const texts = (messages: readonly PiMessage[]) => messages.map((m) => JSON.stringify((m as { content?: unknown }).content));
    expect(texts(target.messages.slice(-appended.length))).toEqual(texts(appended));
    const reread = loadBoundary(session);
    expect(texts(reread.messages as PiMessage[])).toEqual(texts(target.messages));
    // The size counts the messages appended since: not less than their own count.
    const appendedTokens = appended.reduce((sum, m) => sum + target.compactor.tokens.count(m), 0);
    expect(target.tokens).toBeGreaterThanOrEqual(appendedTokens);
  });

  it("property: no appended message is lost, and a prepared compaction is applied only on an unchanged prefix", async () => {
    const op = fc.oneof(
      { weight: 5, arbitrary: fc.record({ kind: fc.constant("append" as const), tokens: fc.integer({ min: 50, max: 700 }) }) },
      { weight: 4, arbitrary: fc.constant({ kind: "check" as const }) },
      { weight: 3, arbitrary: fc.constant({ kind: "release" as const }) },
      { weight: 1, arbitrary: fc.constant({ kind: "manual" as const }) },
    );
    const seen = { applied: 0, dropped: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 20, maxLength: 80, size: "max" }), async (ops) => {
        const model = new SlowModel();
        const target = await createContextManager<PiMessage>({ compactor: compactorWith(model), messages: [], waitMs: 5 });
        try {
          const all: PiMessage[] = [];
          // Appended messages up to here were in the snapshot of the newest compaction put in place.
          let covered = 0;
          let snapshot: readonly PiMessage[] = [];
          let appendedAtStart = 0;
          const violations: string[] = [];
          target.on("background", (event) => {
            if (event.type === "dropped") seen.dropped += 1;
            if (event.type !== "start") return;
            snapshot = target.messages.slice(0, event.messages);
            appendedAtStart = all.length;
          });
          // A compaction in the foreground (the no-model one after waitMs, a manual one) compacts all there is.
          let coveredAtStart = 0;
          target.on("compaction-end", (event) => {
            if (event.result.status === "compacted") covered = coveredAtStart;
          });
          target.on("compaction-start", (event) => {
            coveredAtStart = all.length;
            if (event.prepared === undefined) return;
            coveredAtStart = appendedAtStart;
            const now = target.messages;
            if (now.length < snapshot.length || snapshot.some((m, i) => now[i] !== m)) violations.push("applied on a changed context");
            seen.applied += 1;
          });
          let n = 0;
          for (const step of ops) {
            if (step.kind === "append") {
              const message = { role: "user", content: [{ type: "text", text: `m${n++} ${words(Math.round(step.tokens / 1.5))}` }], timestamp: n } as PiMessage;
              all.push(message);
              await target.append(message);
            } else if (step.kind === "check") {
              await target.check();
            } else if (step.kind === "release") {
              model.release();
              await target.prepared?.done;
              model.hold();
            } else {
              model.instant = true;
              await target.compact();
              model.instant = false;
            }
            // Every message appended after the newest compaction's snapshot is the end of the context, in order.
            const since = all.slice(covered);
            const tail = target.messages.slice(target.messages.length - since.length);
            if (since.length > target.messages.length || tail.some((m, i) => m !== since[i])) violations.push(`lost or reordered appended messages after ${step.kind}`);
          }
          expect(violations).toEqual([]);
        } finally {
          model.instant = true;
          model.release();
          await target.dispose();
        }
      }),
      { numRuns: 60, timeout: 5_000 },
    );
    // The runs put prepared compactions in place and dropped others (a manual compaction first).
    expect(seen.applied).toBeGreaterThan(0);
    expect(seen.dropped).toBeGreaterThan(0);
  });
});
