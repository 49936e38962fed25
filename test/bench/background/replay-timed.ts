/**
 * One recorded session replayed on its own clock by a context manager whose summarizer is a model
 * taking L seconds (`TimedModelServer`): the gap between two recorded messages is the time the
 * agent and the user took, and the time the agent waits for a compaction is added to every later
 * message's time (it could not go on meanwhile).
 *
 * - Blocking: background off, as hosts compact today: from `compaction-start` to `compaction-end`
 *   the agent waits for every model call the compaction makes.
 * - Background: the manager's background compaction; the agent waits only between `waiting` and
 *   `wait` (a request that could not be sent without the compaction in flight). While the agent
 *   works, an answer goes out once the replay's clock passes its due time. A host that keeps a
 *   timer calls `check()` when the prompt cache goes cold (a pause past the TTL), so a context past
 *   the prepare mark is compacted during the pause; this replay does the same at the last request
 *   plus the TTL.
 *
 * The requests are billed with a cache that expires `ttl` after the last request (Anthropic's
 * prices: reads 0.1x, writes 1.25x for the 5-minute cache and 2x for the 1-hour one), and scored
 * for continuity (@compaction/replay's ContinuityProbe) at the probe's cut points.
 */
import { createContextManager, type ContextManager } from "@compaction/context-manager";
import type { Compactor, MessageFacts, PiMessage } from "@compaction/core";
import { type ContinuityProbe, type ContinuityTotals, isModelCall } from "@compaction/replay";
import type { TimedModelServer } from "./timed-model.js";

export type Mode = "blocking" | "background";

export interface TimedResult {
  readonly compactions: number;
  /** Compactions the agent did not wait for at all. */
  readonly noWait: number;
  /** Seconds the agent waited for compactions, in all. */
  readonly waitedS: number;
  readonly billed5m: number;
  readonly billed1h: number;
  /** Prompt tokens the summarizer read (chars / 4), dropped preparations included. */
  readonly summarizerInput: number;
  readonly dropped: number;
  /** Why each dropped preparation no longer applied. */
  readonly droppedWhy: readonly string[];
  readonly continuity: ContinuityTotals;
  readonly calls: number;
}

/** Requests billed with a cache that expires `ttlMs` after the request that last read or wrote it. */
export class TtlCacheMeter {
  #previous: { keys: readonly string[]; at: number } | null = null;
  readonly #keys = new WeakMap<object, string>();
  billed = 0;

  constructor(
    readonly ttlMs: number,
    readonly writePrice: number,
    readonly tokensOf: (message: PiMessage) => number,
  ) {}

  record(request: readonly PiMessage[], at: number): void {
    const keys = request.map((message) => this.#key(message));
    const previous = this.#previous;
    let cached = 0;
    if (previous !== null && at - previous.at <= this.ttlMs) while (cached < keys.length && cached < previous.keys.length && keys[cached] === previous.keys[cached]) cached += 1;
    request.forEach((message, i) => {
      this.billed += this.tokensOf(message) * (i < cached ? 0.1 : this.writePrice);
    });
    this.#previous = { keys, at };
  }

  #key(message: PiMessage): string {
    let key = this.#keys.get(message);
    if (key === undefined) {
      key = JSON.stringify(message);
      this.#keys.set(message, key);
    }
    return key;
  }
}

export interface TimedCell {
  readonly messages: readonly PiMessage[];
  readonly facts: readonly MessageFacts[];
  readonly tokensOf: (message: PiMessage) => number;
  readonly probe: ContinuityProbe<PiMessage>;
  readonly compactor: Compactor<PiMessage>;
  readonly window: number;
  readonly mode: Mode;
  readonly latencyMs: number;
  readonly server: TimedModelServer;
  readonly cacheTtlMs: number;
}

const realTick = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

export async function replayTimed(cell: TimedCell): Promise<TimedResult> {
  const { messages, facts, server } = cell;
  server.reset();
  server.latencyMs = cell.latencyMs;
  const clock = { now: 0 };
  const manager: ContextManager<PiMessage> = await createContextManager<PiMessage>({
    compactor: cell.compactor,
    contextWindow: cell.window,
    background: cell.mode === "background",
    waitMs: Number.POSITIVE_INFINITY,
    cacheTtlMs: cell.mode === "background" ? cell.cacheTtlMs : null,
    now: () => clock.now,
  });
  let blocked = false;
  let waitedMs = 0;
  let waitedThisCompaction = 0;
  let compactions = 0;
  let noWait = 0;
  let dropped = 0;
  const droppedWhy: string[] = [];
  manager.on("compaction-start", (event) => {
    if (event.prepared === undefined) blocked = true;
  });
  const debug = process.env["BACKGROUND_DEBUG"] === "1";
  let startInfo = "";
  manager.on("compaction-start", (event) => {
    if (debug) startInfo = `${event.reason} at ${event.tokens}${event.prepared === undefined ? "" : ` prepared at ${event.prepared.tokens} ${((clock.now - event.prepared.startedAt) / 1000).toFixed(0)} s ago, +${event.prepared.appended} msgs`}`;
  });
  manager.on("compaction-end", (event) => {
    if (debug) process.stderr.write(`    ${cell.mode} t=${(clock.now / 1000).toFixed(0)} ${startInfo} -> ${event.result.status} ${event.tokens}\n`);
    blocked = false;
    if (event.result.status !== "compacted") return;
    compactions += 1;
    if (waitedThisCompaction === 0) noWait += 1;
    waitedThisCompaction = 0;
  });
  let started = 0;
  let ended = false;
  manager.on("background", (event) => {
    if (ended) return;
    if (event.type === "start") started += 1;
    if (event.type === "waiting") blocked = true;
    if (event.type === "wait") blocked = false;
    if (event.type === "dropped") {
      dropped += 1;
      droppedWhy.push(`${event.cost.reason} at ${event.cost.tokens}: ${event.cost.why}`);
    }
  });
  const meters = [new TtlCacheMeter(5 * 60_000, 1.25, cell.tokensOf), new TtlCacheMeter(60 * 60_000, 2, cell.tokensOf)];
  const recorder = cell.probe.recorder();

  /** Sends the answers due by the clock, each at its own time, until none is due. */
  const releaseDue = async (): Promise<void> => {
    for (;;) {
      const due = server.nextDue;
      if (due === null || due > clock.now) {
        server.arrivalTime = clock.now;
        return;
      }
      // A summarizer's next call (a long history in chunks) starts when the answer before it ends.
      server.arrivalTime = due;
      const prepared = manager.prepared;
      const arrived = server.arrival();
      server.releaseNext();
      await Promise.race([arrived, prepared?.done ?? Promise.resolve(), settle(50)]);
      await realTick();
    }
  };

  /** `check()` as the host runs it; a compaction it started in the background has sent its first model call when it returns. */
  const check = async (): Promise<void> => {
    const before = { started, arrivals: server.arrivals };
    await drive(manager.check());
    if (started === before.started) return;
    const prepared = manager.prepared;
    for (let i = 0; i < 2_000 && server.arrivals === before.arrivals && prepared !== null && !prepared.ready; i++) await realTick();
  };

  /** Runs `work`; while it waits on the model, the agent's clock moves to each answer's due time. */
  const drive = async <R>(work: Promise<R>): Promise<R> => {
    let done = false;
    const tracked = work.finally(() => {
      done = true;
    });
    while (!done) {
      await Promise.race([tracked, realTick()]);
      if (done || !blocked || server.pending === 0) continue;
      const due = server.nextDue as number;
      const waited = Math.max(0, due - clock.now);
      waitedMs += waited;
      waitedThisCompaction += waited;
      clock.now = Math.max(clock.now, due);
      server.arrivalTime = due;
      const arrived = server.arrival();
      server.releaseNext();
      await Promise.race([arrived, tracked, settle(50)]);
    }
    return tracked;
  };

  let offset = 0;
  let next = 0;
  let lastRequest: number | null = null;
  let calls = 0;
  const first = facts.find((f) => f.timestamp !== undefined)?.timestamp ?? 0;
  try {
    for (let i = 0; i < messages.length; i++) {
      const recorded = (facts[i]?.timestamp ?? first) - first;
      const waitedBefore = waitedMs;
      clock.now = Math.max(clock.now, recorded + offset);
      await releaseDue();
      if (!isModelCall(facts, i)) continue;
      await manager.append(messages.slice(next, i));
      next = i;
      // The host's timer: a check when the cache went cold during the pause.
      if (cell.mode === "background" && lastRequest !== null && clock.now - lastRequest > cell.cacheTtlMs) {
        const now = clock.now;
        clock.now = lastRequest + cell.cacheTtlMs + 1;
        await check();
        clock.now = Math.max(now, clock.now);
        await releaseDue();
      }
      await check();
      offset += waitedMs - waitedBefore;
      const request = manager.requestMessages();
      for (const meter of meters) meter.record(request, clock.now);
      recorder.onCall({ index: i, request, cost: { messages: request.length, tokens: 0, cachedMessages: 0, cachedTokens: 0, firstChanged: null }, compactions: manager.compactions });
      lastRequest = clock.now;
      calls += 1;
    }
    await manager.append(messages.slice(next));
  } finally {
    // A compaction still in flight when the recording ends is cancelled: not one that no longer applied.
    ended = true;
    await manager.dispose();
  }
  const summarizerInput = Math.round(server.promptChars / 4);
  server.reset();
  return {
    compactions,
    noWait,
    waitedS: waitedMs / 1000,
    billed5m: Math.round((meters[0] as TtlCacheMeter).billed),
    billed1h: Math.round((meters[1] as TtlCacheMeter).billed),
    summarizerInput,
    dropped,
    droppedWhy,
    continuity: recorder.totals(),
    calls,
  };
}

const settle = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
