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
 * the way (it no longer applies) as `dropped`.
 */
import type { CompactionResult } from "../compactor/result.js";
import type { Summarizer } from "../summarizer/summarizer.js";
import type { DroppedPreparation, Preparation, PrepareInput, PrepareReason } from "./background.js";
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
}

/**
 * One check (see the file's comment): null when nothing was put in place (the request goes out with
 * the context as it is), else what the host's `apply` or `compactNow` returned.
 */
export async function backgroundCheck<T, R>(loop: HostLoop<T>, host: BackgroundHost<T, R>): Promise<R | null> {
  for (;;) {
    const context = host.context();
    const step = loop.next(context.tokens, context.messages, context.keys ?? context.messages);
    reportDropped(host, step.dropped);
    switch (step.action) {
      case "none":
        return null;
      case "prepare":
        if (host.mayStart?.(step.reason) === false) return null;
        startPreparation(loop, step.reason, context, host);
        return null;
      case "apply":
        return host.apply(step.preparation, step.appended, step.cold);
      case "wait": {
        if (await waitFor(loop, step.preparation, context.tokens, host)) continue;
        // The deadline: the model's summary is given up for the no-model one, now.
        reportDropped(host, loop.drop(`a request could not be sent without it, and it was not ready within waitMs (${loop.waitMs} ms)`));
        return host.compactNow((await loop.fallbackSummarizer()) ?? undefined);
      }
      case "compact":
        // Nothing in flight and a request that cannot be sent: start it, and wait for it as for any (at most waitMs).
        if (host.mayStart?.("threshold") === false) return null;
        startPreparation(loop, "threshold", context, host);
        continue;
    }
  }
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
