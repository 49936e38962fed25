/**
 * One recorded session replayed on its own clock by a context manager whose summarizer takes L
 * seconds a call: the gap between two recorded messages is the time the agent and the user took,
 * and the time the agent waits for a compaction is added to every later message's time (it could
 * not go on meanwhile). The summarizer's calls go through a `ModelGate`: the benchmark's local
 * OpenAI-compatible server (the real model-summarizer code over HTTP), or `HeldSummarizer` around
 * any summarizer (`compaction compare --summary-latency`); each call is due L after it arrives,
 * in simulated time, and the replay sends the answers out.
 *
 * - Blocking: background off, as hosts compact today: from `compaction-start` to `compaction-end`
 *   the agent waits for every model call the compaction makes.
 * - Background: the manager's background compaction; the agent waits only between `waiting` and
 *   `wait` (a request that could not be sent without the compaction in flight). While the agent
 *   works, an answer goes out once the replay's clock passes its due time. A host that keeps a
 *   timer calls `check()` when the prompt cache goes cold (a pause past the TTL), so a context past
 *   the mark is compacted during the pause; this replay does the same at the last request plus the TTL.
 *
 * The requests are billed with a cache that expires `ttl` after the last request (Anthropic's
 * prices: reads 0.1x, writes 1.25x for the 5-minute cache and 2x for the 1-hour one), and scored
 * for continuity (`ContinuityProbe`) at the probe's cut points.
 */
import { createContextManager, type ContextManager } from "@compaction/context-manager";
import type { Compactor, MessageFacts, Summarizer, SummarizeRequest } from "@compaction/core";
import type { ContinuityProbe, ContinuityTotals } from "./continuity.js";
import { isModelCall } from "./replay.js";
import { HeldCalls } from "./held-calls.js";
import { MessageKeys } from "./message-keys.js";

/** Where a replay on the clock holds a summarizer's calls until their simulated time is up. */
export interface ModelGate {
  /** The simulated time a call arriving now arrived at (set by the replay). */
  arrivalTime: number;
  latencyMs: number;
  /** Calls received, and the characters of what they were asked (the summarizer's input). */
  readonly arrivals: number;
  readonly promptChars: number;
  /** Calls held, and when the earliest is due (null with none). */
  readonly pending: number;
  readonly nextDue: number | null;
  /** Answers the earliest held call; returns its due time, or null. */
  releaseNext(): number | null;
  /** Resolves at the next call's arrival. */
  arrival(): Promise<void>;
  /** Answers every held call and starts the counts again. */
  reset(): void;
}

/** A summarizer whose every call is held (`ModelGate`) until the replay answers it with `inner`'s summary. */
export class HeldSummarizer implements Summarizer, ModelGate {
  readonly name: string;
  arrivalTime = 0;
  latencyMs = 0;
  arrivals = 0;
  promptChars = 0;
  readonly #inner: Summarizer;
  readonly #held = new HeldCalls();

  /** `name` is the inner one's, unless it is the extractive one: a model's latency is what is replayed (and background "auto" reads the name). */
  constructor(inner: Summarizer) {
    this.#inner = inner;
    this.name = inner.name === "extractive" ? "extractive-at-model-latency" : inner.name;
  }

  async summarize(request: SummarizeRequest): Promise<string> {
    this.arrivals += 1;
    for (const message of request.messages) this.promptChars += message.text.length;
    const due = this.arrivalTime + this.latencyMs;
    await new Promise<void>((resolve, reject) => {
      request.signal?.addEventListener("abort", () => reject(request.signal?.reason ?? new Error("aborted")), { once: true });
      this.#held.hold(due, resolve);
    });
    return this.#inner.summarize(request);
  }

  get pending(): number {
    return this.#held.pending;
  }

  get nextDue(): number | null {
    return this.#held.nextDue;
  }

  releaseNext(): number | null {
    return this.#held.releaseNext();
  }

  arrival(): Promise<void> {
    return this.#held.arrival();
  }

  reset(): void {
    this.#held.releaseAll();
    this.arrivals = 0;
    this.promptChars = 0;
  }
}

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
export class TtlCacheMeter<T = unknown> {
  #previous: { keys: readonly string[]; at: number } | null = null;
  readonly #keys = new MessageKeys<T>();
  billed = 0;

  constructor(
    readonly ttlMs: number,
    readonly writePrice: number,
    readonly tokensOf: (message: T) => number,
  ) {}

  record(request: readonly T[], at: number): void {
    const keys = request.map((message) => this.#keys.of(message));
    const previous = this.#previous;
    let cached = 0;
    if (previous !== null && at - previous.at <= this.ttlMs) while (cached < keys.length && cached < previous.keys.length && keys[cached] === previous.keys[cached]) cached += 1;
    request.forEach((message, i) => {
      this.billed += this.tokensOf(message) * (i < cached ? 0.1 : this.writePrice);
    });
    this.#previous = { keys, at };
  }
}

export interface TimedCell<T> {
  readonly messages: readonly T[];
  readonly facts: readonly MessageFacts[];
  readonly tokensOf: (message: T) => number;
  readonly probe: ContinuityProbe<T> | null;
  readonly compactor: Compactor<T>;
  readonly window: number;
  readonly mode: Mode;
  readonly latencyMs: number;
  readonly server: ModelGate;
  readonly cacheTtlMs: number;
  /** Told one line per compaction (when, why, sizes), to see where a replay's figures come from. */
  readonly onCompaction?: (line: string) => void;
}

const realTick = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

/** Replays `cell` on its recording's clock; see the file's comment. */
export async function replayTimed<T>(cell: TimedCell<T>): Promise<TimedResult> {
  const { messages, facts, server } = cell;
  server.reset();
  server.latencyMs = cell.latencyMs;
  const clock = { now: 0 };
  const manager: ContextManager<T> = await createContextManager<T>({
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
  const debug = cell.onCompaction !== undefined;
  let startInfo = "";
  manager.on("compaction-start", (event) => {
    if (debug) startInfo = `${event.reason} at ${event.tokens}${event.prepared === undefined ? "" : ` prepared at ${event.prepared.tokens} ${((clock.now - event.prepared.startedAt) / 1000).toFixed(0)} s ago, +${event.prepared.appended} msgs`}`;
  });
  manager.on("compaction-end", (event) => {
    if (debug) cell.onCompaction?.(`${cell.mode} t=${(clock.now / 1000).toFixed(0)} ${startInfo} -> ${event.result.status} ${event.tokens}`);
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
  const meters = [new TtlCacheMeter<T>(5 * 60_000, 1.25, cell.tokensOf), new TtlCacheMeter<T>(60 * 60_000, 2, cell.tokensOf)];
  const recorder = cell.probe?.recorder();

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
      recorder?.onCall({ index: i, request, cost: { messages: request.length, tokens: 0, cachedMessages: 0, cachedTokens: 0, firstChanged: null }, compactions: manager.compactions });
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
    continuity: recorder?.totals() ?? EMPTY_CONTINUITY,
    calls,
  };
}

const EMPTY_CONTINUITY: ContinuityTotals = { cuts: 0, needed: 0, kept: 0, longMemory: 0, longMemoryKept: 0, share: undefined, longMemoryShare: undefined };

const settle = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
