/**
 * What a host does about background compaction before a request, in one place for every host (the
 * context manager, the AI SDK and LangChain entries, the OpenClaw engine): `backgroundCheck(loop,
 * host)` follows `HostLoop.next` until it says there is nothing more to do now.
 *
 * 1. `prepare`: the host's compaction of the context as it is now starts beside the agent
 *    (`startPreparation`), unless the host says it may not start one (nothing to compact, its
 *    limit of automatic compactions); the request goes out with the full context.
 * 2. `apply`: the host puts the prepared result in place, followed by every message appended since.
 * 3. `wait`: a request cannot be sent without the compaction in flight, so the host waits for it, at
 *    most `waitMs`; past that the preparation is dropped (reported) and the host compacts in the
 *    foreground with the no-model summary.
 * 4. `compact`: a request cannot be sent and nothing is in flight: a compaction starts, and is
 *    waited for as in 3.
 * Every step is reported to the host as a `BackgroundEvent`, and a preparation the loop dropped on
 * the way (it no longer applies) as `dropped`. A host whose workers share one session (the context
 * manager over a database store) claims each preparation before it starts one (`claim`): a worker
 * refused does not prepare, and when a request cannot be sent it waits for the holder's compaction
 * (`waitForHolder`) instead of starting its own.
 *
 * A host that does not decide when to compact (pi, OpenClaw: they ask) prepares with
 * `startPreparation` and, when asked, takes the preparation with `takePreparation`.
 */
import type { CompactionResult } from "../compactor/result.js";
import type { Summarizer } from "../summarizer/summarizer.js";
import { type DroppedPreparation, type Preparation, type PrepareInput, type PrepareReason, prefixChange } from "./background.js";
import type { HostLoop } from "./host-loop.js";

/**
 * What a compaction prepared in the background did: `start` (past the prepare mark, at the
 * threshold with nothing prepared, or when the cache went cold), `ready`, `waiting` then `wait` (a
 * request could not be sent without it: the host waited `ms`, and `timedOut` when it gave up for
 * the no-model summary), `dropped` (it no longer applied, or was cancelled: never applied; `cost`
 * says what it cost). Putting one in place is the host's own compaction events.
 */
export type BackgroundEvent =
  | { readonly type: "start"; readonly reason: PrepareReason; readonly tokens: number; readonly messages: number; readonly at: number }
  | { readonly type: "ready"; readonly status: CompactionResult<unknown>["status"]; readonly ms: number }
  /** A request cannot be sent without the compaction in flight: the host waits from now (`wait` says when it ended). */
  | { readonly type: "waiting"; readonly tokens: number }
  | { readonly type: "wait"; readonly ms: number; readonly timedOut: boolean }
  | { readonly type: "dropped"; readonly cost: DroppedPreparation };

/** The context a host holds now: its size as the provider counts it, its messages, and the host's key of each (default: the messages). */
export interface HeldContext<T> {
  readonly tokens: number;
  readonly messages: readonly T[];
  readonly keys?: readonly unknown[];
}

/**
 * What a host's claim on a preparation said (`BackgroundHost.claim`): `prepare` (this worker holds
 * it, or the host keeps no claims), `held` (another worker prepares it), `moved` (the session
 * changed since the host read it: the host read it again, and the loop looks once more).
 */
export type ClaimAnswer = "prepare" | "held" | "moved";

/** The host's side of `backgroundCheck`. `R` is what a compaction put in place gives the host back. */
export interface BackgroundHost<T, R> {
  /** The context now; read again after a wait. */
  context(): HeldContext<T>;
  /** Whether a compaction may start for `reason` (false: nothing to compact, or the host's limit; the host says why itself). Default: always. */
  mayStart?(reason: PrepareReason): boolean;
  /** The host's compaction of `snapshot`, as it records compactions, with the loop's target and signal; never throws (a failure is a result's status). */
  run(snapshot: readonly T[], input: PrepareInput): Promise<CompactionResult<T>>;
  /** Puts `preparation`'s result in place, followed by `appended` (every message since its snapshot); `cold`: early, because the prompt cache went cold. */
  apply(preparation: Preparation<T>, appended: readonly T[], cold: boolean): Promise<R>;
  /** Compacts now, in the foreground, with `summarizer` (the no-model one: the wait's deadline passed), or the compactor's own when none is installed. */
  compactNow(summarizer: Summarizer | undefined): Promise<R>;
  /** Hears every background event. */
  report(event: BackgroundEvent): void;
  /** Claims the preparation about to start, where workers share the session (see `ClaimAnswer`). Default: `prepare`. */
  claim?(reason: PrepareReason): Promise<ClaimAnswer>;
  /** A request cannot be sent and another worker holds the claim: waits for its compaction (at most `waitMs`); true when the request can be sent now. Default: false. */
  waitForHolder?(): Promise<boolean>;
  /** A preparation started (after `start` was reported), for a host that follows it (a claim's renewals). */
  started?(preparation: Preparation<T>): void;
  /** Before each step and after a drop: the host's bookkeeping of what the loop holds (a claim released with its preparation). */
  settle?(): Promise<void>;
}

/**
 * One check (see the file's comment): null when nothing was put in place (the request goes out with
 * the context as it is), else what the host's `apply` or `compactNow` returned.
 */
export async function backgroundCheck<T, R>(loop: HostLoop<T>, host: BackgroundHost<T, R>): Promise<R | null> {
  let reread = false;
  for (;;) {
    const context = host.context();
    const step = loop.next(context.tokens, context.messages, context.keys ?? context.messages);
    reportDropped(host, step.dropped);
    await host.settle?.();
    switch (step.action) {
      case "none":
        return null;
      case "prepare":
        if (host.mayStart?.(step.reason) === false) return null;
        // Another worker prepares it (or the host's view was behind): the full context is still sent.
        if ((await claim(host, step.reason)) !== "prepare") return null;
        follow(host, startPreparation(loop, step.reason, context, host));
        return null;
      case "apply":
        return host.apply(step.preparation, step.appended, step.cold);
      case "wait": {
        if (await waitFor(loop, step.preparation, context.tokens, host)) continue;
        // The deadline: the model's summary is given up for the no-model one, now.
        reportDropped(host, loop.drop(`a request could not be sent without it, and it was not ready within waitMs (${loop.waitMs} ms)`));
        await host.settle?.();
        return host.compactNow((await loop.fallbackSummarizer()) ?? undefined);
      }
      case "compact": {
        // Nothing in flight and a request that cannot be sent: start it, and wait for it as for any (at most waitMs).
        if (host.mayStart?.("threshold") === false) return null;
        const answer = await claim(host, "threshold");
        if (answer === "moved" && !reread) {
          reread = true;
          continue;
        }
        if (answer === "held") {
          // Another worker prepares it: wait for its compaction (at most waitMs), then the no-model summary here.
          if ((await host.waitForHolder?.()) === true) continue;
          return host.compactNow((await loop.fallbackSummarizer()) ?? undefined);
        }
        follow(host, startPreparation(loop, "threshold", context, host));
        continue;
      }
    }
  }
}

/** Hands a started preparation to the host that follows it (a call, not `started?.(…)`: that would skip starting it). */
function follow<T>(host: Pick<BackgroundHost<T, unknown>, "started">, preparation: Preparation<T>): void {
  host.started?.(preparation);
}

function claim(host: Pick<BackgroundHost<unknown, unknown>, "claim">, reason: PrepareReason): Promise<ClaimAnswer> {
  return host.claim?.(reason) ?? Promise.resolve("prepare");
}

/**
 * Starts the host's compaction of `context` beside the agent (`HostLoop.prepare`), and reports its
 * `start` and, while it is still the loop's preparation, its `ready`. For a host that prepares at a
 * point of its own (a turn's end) as well as in `backgroundCheck`.
 */
export function startPreparation<T>(
  loop: HostLoop<T>,
  reason: PrepareReason,
  context: HeldContext<T>,
  host: Pick<BackgroundHost<T, unknown>, "run" | "report">,
): Preparation<T> {
  const preparation = loop.prepare(reason, context.messages, context.tokens, (snapshot, input) => host.run(snapshot, input), context.keys ?? context.messages);
  host.report({ type: "start", reason, tokens: context.tokens, messages: preparation.snapshot.length, at: preparation.startedAt });
  void preparation.done.then(() => {
    if (loop.prepared !== preparation) return;
    host.report({ type: "ready", status: preparation.result?.status ?? "failed", ms: (preparation.readyAt ?? preparation.startedAt) - preparation.startedAt });
  });
  return preparation;
}

/** Waits for `preparation` (at most `waitMs`), reporting `waiting` and `wait`; true when it is ready. */
export async function waitFor<T>(loop: HostLoop<T>, preparation: Preparation<T>, tokens: number, host: Pick<BackgroundHost<T, unknown>, "report">): Promise<boolean> {
  host.report({ type: "waiting", tokens });
  const started = loop.now();
  const realStart = performance.now();
  const ready = await loop.wait(preparation);
  // The loop's clock (a replay's simulated time) when it moved, else the time really waited.
  const ms = Math.max(loop.now() - started, 0) || Math.round(performance.now() - realStart);
  host.report({ type: "wait", ms, timedOut: !ready });
  return ready;
}

function reportDropped(host: Pick<BackgroundHost<unknown, unknown>, "report">, dropped: DroppedPreparation | null): void {
  if (dropped !== null) host.report({ type: "dropped", cost: dropped });
}

/** What `takePreparation` found for a compaction the host was asked for now. */
export type TakenPreparation<T> =
  /** Its result still applies: put it in place (then `loop.applied`), followed by `appended`; or drop it for a reason of the host's. */
  | { readonly kind: "prepared"; readonly preparation: Preparation<T>; readonly result: CompactionResult<T>; readonly appended: readonly T[] }
  /** Compact now, with `summarizer` when given (the no-model one: an automatic compaction could not wait longer for the prepared one). */
  | { readonly kind: "compact"; readonly summarizer?: Summarizer };

/**
 * For a compaction the host is asked for now, where the host does not decide when (a user's
 * `/compact`, the provider's overflow, pi's or OpenClaw's own threshold): the loop's preparation
 * when it still applies. One asked for with a focus (instructions for the summary) gets a new
 * summary: the preparation is dropped. So is one whose snapshot is no longer the start of
 * `context`, or that did not compact. One in flight is waited for, at most `waitMs`; past that it
 * is dropped, and an automatic compaction gets the no-model summarizer. Every drop is reported.
 */
export async function takePreparation<T>(
  loop: HostLoop<T>,
  context: HeldContext<T>,
  ask: { readonly trigger: "auto" | "manual"; readonly focus?: string | undefined; readonly signal?: AbortSignal | undefined },
  host: Pick<BackgroundHost<T, unknown>, "report">,
): Promise<TakenPreparation<T>> {
  const preparation = loop.prepared;
  if (preparation === null) return { kind: "compact" };
  const drop = (why: string): TakenPreparation<T> => {
    reportDropped(host, loop.drop(why));
    return { kind: "compact" };
  };
  if (ask.focus !== undefined && ask.focus.trim() !== "") return drop("the compaction asked for was given instructions for its summary (a focus), which the prepared one was not written with");
  const change = prefixChange(preparation.snapshot, preparation.keys, context.messages, context.keys ?? context.messages, loop.compactor.facts);
  if (change !== null) return drop(`it no longer applies: ${change}`);
  if (!preparation.ready && !(await waitFor(loop, preparation, context.tokens, host))) {
    drop(`a compaction is asked for now, and it was not ready within waitMs (${loop.waitMs} ms)`);
    const summarizer = ask.trigger === "auto" ? await loop.fallbackSummarizer() : null;
    return summarizer === null ? { kind: "compact" } : { kind: "compact", summarizer };
  }
  if (ask.signal?.aborted === true) return { kind: "compact" };
  const result = preparation.result;
  if (result === null || result.status !== "compacted") return drop(`it did not compact (${result?.status ?? "failed"}): ${result?.reason ?? preparation.error ?? "no reason given"}`);
  return { kind: "prepared", preparation, result, appended: context.messages.slice(preparation.snapshot.length) };
}

/** A background event as one line for a host's log or its user (`what` names what the compaction is for), or null for `waiting` (its `wait` says how long). */
export function describeBackgroundEvent(event: BackgroundEvent, what = "the next compaction"): string | null {
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  switch (event.type) {
    case "start":
      return `compaction: preparing ${what} in the background (the context is ${event.tokens} tokens, ${event.messages} messages; ${event.reason === "prepare" ? "past the prepare mark" : event.reason === "threshold" ? "past the threshold" : "the prompt cache went cold"}).`;
    case "ready":
      return `compaction: the compaction prepared in the background is ready (${event.status}, ${seconds(event.ms)}).`;
    case "waiting":
      return null;
    case "wait":
      return `compaction: waited ${seconds(event.ms)} for the compaction prepared in the background${event.timedOut ? ", and gave up on it" : ""}.`;
    case "dropped":
      return `compaction: the compaction prepared in the background was dropped: ${event.cost.why} (it compacted ${event.cost.compactedMessages} messages of a ${event.cost.tokens}-token context in ${seconds(event.cost.ms)}).`;
  }
}
