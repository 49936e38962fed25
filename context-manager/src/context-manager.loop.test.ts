/**
 * A host loop the caller keeps across managers of one session (`createContextManager({ loop })`),
 * as a host that opens the session for each request does (the LangChain thread entry, once per
 * run): the compaction prepared in the background under one manager outlives it, and the next
 * manager on the session, on another handle, puts it in place at the threshold, or drops it when
 * the session changed under it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Compactor, createEstimateCounter, createPiAdapter, HostLoop, type PiMessage } from "@compaction/core";
import { keepRecent } from "@compaction/core/testing";
import { buildContext, type EntryStore, MemoryEntryStore } from "@compaction/transcript";
import { exchange } from "./__fixtures__/compactors.js";
import { SlowModel } from "./__fixtures__/slow-model.js";
import type { ContextManager } from "./context-manager.js";
import { createContextManager } from "./create-context-manager.js";
import type { BackgroundEvent } from "./events.js";

const managers: Array<ContextManager<PiMessage>> = [];
afterEach(async () => {
  for (const manager of managers.splice(0)) await manager.dispose();
});

function compactorWith(model: SlowModel): Compactor<PiMessage> {
  return new Compactor<PiMessage>({ summarizer: model, adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), plugins: [keepRecent(600)], contextWindow: 4_000, reserveTokens: 400 });
}

async function managerOn(store: EntryStore, compactor: Compactor<PiMessage>, loop: HostLoop<PiMessage>, events: BackgroundEvent[]): Promise<ContextManager<PiMessage>> {
  const manager = await createContextManager<PiMessage>({ store, compactor, loop });
  managers.push(manager);
  manager.on("background", (event) => events.push(event));
  return manager;
}

/** Appends exchanges, checking after each, until `until()` holds; returns what it appended. */
async function grow(manager: ContextManager<PiMessage>, until: () => boolean, label: string): Promise<PiMessage[]> {
  const appended: PiMessage[] = [];
  for (let i = 0; !until() && i < 200; i++) {
    const turn = exchange(120, `${label}${i}`);
    appended.push(...turn);
    await manager.append(turn);
    await manager.check();
  }
  expect(until()).toBe(true);
  return appended;
}

/** The first manager on the session, disposed (and its handle closed) with its compaction still being written. */
async function preparedThenGone(session: MemoryEntryStore, compactor: Compactor<PiMessage>, loop: HostLoop<PiMessage>, events: BackgroundEvent[]) {
  const first = session.handle();
  const manager = await managerOn(first, compactor, loop, events);
  await grow(manager, () => loop.prepared !== null, "first");
  const preparation = loop.prepared!;
  await manager.dispose();
  await first.close();
  return preparation;
}

describe("a host loop kept across managers of one session", () => {
  it("keeps the compaction prepared under a disposed manager, and the next manager on the session puts it in place at the threshold without asking for another summary", async () => {
    const model = new SlowModel();
    const compactor = compactorWith(model);
    const loop = new HostLoop<PiMessage>(compactor, { contextWindow: 4_000 });
    const session = new MemoryEntryStore();
    const events: BackgroundEvent[] = [];
    const preparation = await preparedThenGone(session, compactor, loop, events);
    // dispose() left it to the loop: not cancelled, written after the manager is gone.
    expect(loop.prepared).toBe(preparation);
    model.release();
    await preparation.done;
    expect(preparation.result?.status).toBe("compacted");
    const calls = model.calls;

    const second = await managerOn(session.handle(), compactor, loop, events);
    const appended = await grow(second, () => second.compactions > 0, "second");
    expect(model.calls).toBe(calls);
    // Nothing waited for or dropped (its `ready` went to the first manager, disposed by then).
    expect(events.map((event) => event.type)).toEqual(["start"]);
    // The session's context: the prepared summary, what it kept of its snapshot, then everything appended since.
    const context = buildContext(await session.entries()).messages as PiMessage[];
    expect(context[0]).toMatchObject({ role: "compactionSummary", summary: expect.stringContaining(`model summary ${calls}`) });
    expect(context.slice(-appended.length)).toEqual(appended);
    expect(context).toHaveLength(preparation.result!.messages.length + appended.length);
  });

  it("drops the kept compaction, never applying it, when the session was compacted by hand before the next manager opened it, and reports its cost", async () => {
    const model = new SlowModel();
    const compactor = compactorWith(model);
    const loop = new HostLoop<PiMessage>(compactor, { contextWindow: 4_000 });
    const session = new MemoryEntryStore();
    const events: BackgroundEvent[] = [];
    const preparation = await preparedThenGone(session, compactor, loop, events);
    model.release();
    await preparation.done;
    const prepared = preparation.result!.summary;

    const elsewhere = await createContextManager<PiMessage>({ store: session.handle(), compactor, background: false });
    expect((await elsewhere.compact()).status).toBe("compacted");
    await elsewhere.dispose();

    const second = await managerOn(session.handle(), compactor, loop, events);
    await grow(second, () => second.compactions > 1, "second");
    const dropped = events.find((event) => event.type === "dropped");
    expect(dropped).toMatchObject({ type: "dropped", cost: { reason: "prepare", why: expect.stringContaining("no longer applies") } });
    expect(dropped?.type === "dropped" && dropped.cost.compactedMessages).toBeGreaterThan(0);
    const summaries = (await session.entries()).filter((entry) => entry.type === "compaction").map((entry) => (entry as { summary: string }).summary);
    expect(summaries).toHaveLength(2);
    expect(summaries).not.toContain(prepared);
  });

  it("checks the loop it is given: the loop's own compactor, and none of the options the loop holds", async () => {
    const model = new SlowModel();
    const compactor = compactorWith(model);
    const loop = new HostLoop<PiMessage>(compactor, { contextWindow: 4_000 });
    const store = new MemoryEntryStore();
    await expect(createContextManager<PiMessage>({ store, loop } as never)).rejects.toMatchObject({ code: "COMPACTION_INPUT_INVALID", message: expect.stringContaining("without compactor") });
    await expect(createContextManager<PiMessage>({ store, compactor: compactorWith(model), loop })).rejects.toMatchObject({ message: expect.stringContaining("another compactor") });
    await expect(createContextManager<PiMessage>({ store, compactor, loop, contextWindow: 8_000, waitMs: 10 })).rejects.toMatchObject({ message: expect.stringContaining("contextWindow, waitMs were given with loop") });
    await expect(createContextManager<PiMessage>({ store, compactor, loop: {} as never })).rejects.toMatchObject({ message: expect.stringContaining("loop must be a HostLoop") });
  });
});
