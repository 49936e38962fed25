/**
 * The loop every host runs around a compactor, for one conversation: the context manager, the
 * framework integrations, the OpenClaw engine. One implementation of what decides when and how a
 * host compacts and what it sends, so the same `.compactionrc` behaves the same in every host:
 *
 * 1. The reply's reserve, fixed when the loop is made (`Compactor.reserveFor`: the host's option,
 *    else the config's, else the window's own; one that does not fit the window throws here).
 * 2. The trigger: the preset's share of the usable window (`threshold`), in the provider's measure.
 * 3. The wait after a compaction that could not bring the context under the threshold (it freed
 *    too little, failed, or was refused): the next automatic one waits until the context has grown
 *    by a quarter of the window (`RETRY_GROWTH_SHARE`), or a user message ended the turn that was
 *    too large, or (once per wait) the context reached the window less the reserve: past it every
 *    request must be shrunk at send time, each new shrink a cache miss, so one more compaction
 *    costs less; one that frees too little there waits the whole quarter. So a turn whose outputs
 *    alone fill the window is shrunk at send time, not compacted at every message.
 * 4. What is sent: the context shaped to the budget by one prefix-stable `RequestShaper` (between
 *    two compactions each request only grows at its end), and the error a host must pass on when a
 *    request leaves out messages of the context (COMPACTION_CONTEXT_TRIMMED, once per loss) or
 *    cannot fit at all (COMPACTION_CONTEXT_OVERFLOW).
 * 5. Background preparation (`next`, see background.ts): past the prepare mark the host compacts a
 *    snapshot while the agent goes on with its full history; at the threshold, or earlier when the
 *    prompt cache has gone cold, the prepared result is swapped in with what was appended since, if
 *    the snapshot is still an unchanged prefix of the context; else it is dropped and reported.
 */
import type { Compactor } from "../compactor/compactor.js";
import type { ReserveSetting } from "../compactor/reply-reserve.js";
import type { RequestShaper } from "../compactor/request-shaper.js";
import type { ShapedRequest, ShapeRequestInput } from "../compactor/shape-request.js";
import { CompactionError, ErrorCodes } from "../errors.js";
import { lastUserIndex } from "../cut/turns.js";
import { countedBudget } from "../tokens/message-tokens.js";
import { compactedTargetTokens } from "../compactor/usable-window.js";
import type { CompactionResult } from "../compactor/result.js";
import type { Summarizer } from "../summarizer/summarizer.js";
import {
  type BackgroundMode,
  type BackgroundOptions,
  backgroundFor,
  checkBackgroundOptions,
  DEFAULT_CACHE_TTL_MS,
  DEFAULT_EXPECTED_MS,
  DEFAULT_WAIT_MS,
  type DroppedPreparation,
  noModelSummarizer,
  Preparation,
  type PrepareInput,
  OUTGROWN_SHARE,
  type PrepareReason,
  PREPARE_SHARE,
  prefixChange,
} from "./background.js";

/**
 * How much the context must grow, as a share of the window, before an automatic compaction that
 * left it over the threshold is tried again: the storm bound (at most one compaction per quarter
 * of the window appended).
 */
export const RETRY_GROWTH_SHARE = 0.25;

export interface HostLoopOptions extends BackgroundOptions {
  /** The model's context window, in tokens. */
  readonly contextWindow: number;
  /** The host's own reserve for the reply (its option); default the compactor's for the window. */
  readonly reserveTokens?: number | undefined;
  /** The model's reply limit, when the host knows it: the reserve where neither the host nor the config sets one. */
  readonly maxOutputTokens?: number | undefined;
  /** Which host's option `reserveTokens` is, for its error: `the reserveTokens option of <host>`. */
  readonly host?: string;
  /**
   * The size, as the provider counts it, at which the host compacts, where that is the host's own
   * decision and not the preset's (pi compacts at its window less its own reserve): the loop's
   * threshold, which its prepare mark leads. Default the preset's (`Compactor.autoCompactTokens`).
   */
  readonly threshold?: number;
}

/** A request to send, and the error the host must pass on about it, if any. */
export interface LoopRequest<T> {
  readonly request: ShapedRequest<T>;
  /**
   * COMPACTION_CONTEXT_TRIMMED when this request leaves out more messages of the context than the
   * one before it did, COMPACTION_CONTEXT_OVERFLOW when it cannot fit the budget at all; else null.
   */
  readonly problem: CompactionError | null;
}

/**
 * What a host does next about background compaction (`HostLoop.next`), and a prepared compaction
 * the loop dropped on the way, for the host to report (`dropped`, or null).
 */
export type BackgroundStep<T> = { readonly dropped: DroppedPreparation | null } & (
  /** Nothing to do now. */
  | { readonly action: "none" }
  /** Start preparing (`prepare`) with this reason; the agent goes on. */
  | { readonly action: "prepare"; readonly reason: PrepareReason }
  /** Put `preparation`'s result in place followed by `appended` (every message since its snapshot); `cold`: because the cache went cold. */
  | { readonly action: "apply"; readonly preparation: Preparation<T>; readonly appended: readonly T[]; readonly cold: boolean }
  /** A request cannot be sent as it is: wait for `preparation` (`wait`, at most `waitMs`), then `next` again. */
  | { readonly action: "wait"; readonly preparation: Preparation<T> }
  /** A request cannot be sent and nothing is in flight: compact now, in the foreground. */
  | { readonly action: "compact" }
);

/** See the file's comment. One per conversation: it remembers what it sent and when it gave up. */
export class HostLoop<T> {
  readonly compactor: Compactor<T>;
  readonly contextWindow: number;
  /** Tokens every request leaves free for the reply. */
  readonly reserveTokens: number;
  readonly #shaper: RequestShaper<T>;
  /** After a compaction that left the context over the threshold: the size to pass before another. */
  #retryAbove: number | null = null;
  /** With #retryAbove: the index of the newest user message of the large turn that stayed over (-1: none, the whole context is the turn), or null. */
  #retryAfterRequest: number | null = null;
  /** With #retryAbove: whether the context reaching the window less the reserve ends the wait. */
  #retryAtBudget = false;
  /** The compaction `due` last allowed was the wait's early one, at the budget. */
  #dueAtBudget = false;
  /** Messages the previous request left out. */
  #dropped = 0;
  readonly #backgroundMode: BackgroundMode;
  /** The longest a request waits for the compaction in flight before the no-model summary. */
  readonly waitMs: number;
  /** The prompt cache's lifetime, or null when the host never compacts for a cold cache. */
  readonly cacheTtlMs: number | null;
  readonly now: () => number;
  readonly #fallbackSummarizer: Summarizer | undefined;
  #prepared: Preparation<T> | null = null;
  #preparations = 0;
  /** A preparation below the threshold compacted nothing: no other until the threshold. */
  #declinedBelowThreshold = false;
  /** When the last request was sent (the loop's clock), or null before the first. */
  #lastRequestAt: number | null = null;
  /** How long this host's prepared compactions took (ms, smoothed), or null before the first. */
  #duration: number | null = null;
  readonly #expectedMs: number;
  readonly #pace = new GrowthRate();
  readonly #threshold: number | undefined;

  constructor(compactor: Compactor<T>, options: HostLoopOptions) {
    this.compactor = compactor;
    this.contextWindow = options.contextWindow;
    checkBackgroundOptions(options, options.host);
    this.#backgroundMode = options.background ?? "auto";
    this.waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
    this.cacheTtlMs = options.cacheTtlMs === undefined ? DEFAULT_CACHE_TTL_MS : options.cacheTtlMs;
    this.#expectedMs = options.expectedMs ?? DEFAULT_EXPECTED_MS;
    this.now = options.now ?? Date.now;
    this.#fallbackSummarizer = options.fallbackSummarizer;
    const host: ReserveSetting = {
      reserveTokens: options.reserveTokens,
      maxOutputTokens: options.maxOutputTokens,
      source: { name: `the reserveTokens option of ${options.host ?? "the host"}`, path: "/reserveTokens" },
    };
    this.reserveTokens = compactor.reserveFor(options.contextWindow, host);
    this.#shaper = compactor.createRequestShaper();
    if (options.threshold !== undefined && !(options.threshold > 0 && options.threshold <= options.contextWindow)) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `The threshold of ${options.host ?? "the host"}'s loop must be a number of tokens above 0 and at most the window (${options.contextWindow}); found ${String(options.threshold)}.`, {
        path: "/threshold",
        hint: "Leave threshold out for the preset's.",
      });
    }
    this.#threshold = options.threshold;
  }

  /** The size, as the provider counts it, past which the host compacts on its own (the host's `threshold`, else `Compactor.autoCompactTokens`). */
  get threshold(): number {
    return this.#threshold ?? this.compactor.autoCompactTokens(this.contextWindow, this.reserveTokens);
  }

  /** Most tokens a request may hold by our count: the window less the reserve, at the provider's `ratio` to our count. */
  budget(ratio: number): number {
    return countedBudget(this.contextWindow - this.reserveTokens, ratio);
  }

  /** True while the loop waits after a compaction that could not bring the context under the threshold. */
  get waiting(): boolean {
    return this.#retryAbove !== null;
  }

  /**
   * Whether a context of `tokens` (as the provider counts it) is due an automatic compaction: over
   * the threshold, and not waiting after one that could not bring it under (see the file's comment).
   */
  due(tokens: number, messages: readonly T[]): boolean {
    this.#dueAtBudget = false;
    if (tokens <= this.threshold) return false;
    if (this.#retryAbove === null || tokens > this.#retryAbove) return true;
    if (this.#retryAtBudget && tokens > this.contextWindow - this.reserveTokens) {
      this.#dueAtBudget = true;
      return true;
    }
    return this.#largeTurnEnded(messages);
  }

  /**
   * After an automatic compaction, with the context now `tokens` over `messages`: under the
   * threshold, nothing to wait for (returns null); over it, the wait starts and the growth it waits
   * for is returned, for the host's warning.
   */
  settle(tokens: number, messages: readonly T[]): number | null {
    const atBudget = this.#dueAtBudget;
    this.reset();
    if (tokens <= this.threshold) return null;
    const growth = Math.floor(this.contextWindow * RETRY_GROWTH_SHARE);
    this.#retryAbove = tokens + growth;
    this.#retryAfterRequest = this.#largeNewestTurn(messages, growth);
    // The early retry at the budget once per wait: after it, the whole quarter.
    this.#retryAtBudget = !atBudget && tokens < this.contextWindow - this.reserveTokens;
    return growth;
  }

  /** Forgets the wait: the context was replaced (another worker compacted it, a new session). */
  reset(): void {
    this.#retryAbove = null;
    this.#retryAfterRequest = null;
    this.#retryAtBudget = false;
    this.#dueAtBudget = false;
  }

  /**
   * The request for the context `messages`, shaped to `budget` (by our count) with the prefix-stable
   * shaper, and the problem to report about it (see `LoopRequest`). `why` says, for the
   * COMPACTION_CONTEXT_TRIMMED message, why no compaction brought the context within the budget.
   */
  request(messages: readonly T[], budget: number, input: Omit<ShapeRequestInput, "budget" | "contextWindow" | "reserveTokens"> = {}, why?: string): LoopRequest<T> {
    const request = this.#shaper.shape(messages, { ...input, contextWindow: this.contextWindow, reserveTokens: this.reserveTokens, budget });
    const dropped = request.dropped.length;
    const more = dropped > this.#dropped;
    this.#dropped = dropped;
    if (!request.fits) return { request, problem: this.#overflow(request) };
    if (!more) return { request, problem: null };
    const cause = why ?? (this.#retryAbove !== null ? "the last automatic compaction could not bring it under the threshold" : "no compaction brought it within the budget yet");
    const problem = new CompactionError(
      ErrorCodes.CONTEXT_TRIMMED,
      `The request leaves out ${dropped} older message(s) of the context's ${messages.length} to fit the budget of ${request.budget} tokens (window ${this.contextWindow} less ${this.reserveTokens} reserved for the reply): ${cause}. The model does not see them; the context still holds them.`,
      { hint: "Compact, check the compaction's error or warning events for why it could not free room, or use a model with a larger context window." },
    );
    return { request, problem };
  }

  // --- Background preparation (see background.ts) ------------------------------------------

  /** Whether compactions are prepared in the background (`background`; `auto`: unless the summarizer is the extractive one). */
  get background(): boolean {
    return backgroundFor(this.#backgroundMode, this.compactor);
  }

  /**
   * The size, as the provider counts it, past which a compaction is prepared: as late as this
   * conversation allows, so that what is appended while it is written (and kept beside its
   * summary once applied) stays small. It is the window less the reserve (the last size a request
   * can be sent at in full) less twice the growth expected while one is written (the duration of
   * this conversation's compactions, `expectedMs` until one is timed, times the context's growth
   * rate, both on the loop's clock), at most the threshold and at least `coldMark`; `coldMark`
   * until the growth rate is known.
   */
  get prepareMark(): number {
    const floor = this.coldMark;
    const duration = this.#duration ?? this.#expectedMs;
    const rate = this.#pace.rate(this.now());
    if (rate === null) return floor;
    const room = 2 * rate * duration;
    return Math.max(floor, Math.min(this.threshold, Math.floor(this.contextWindow - this.reserveTokens - room)));
  }

  /** `PREPARE_SHARE` of the threshold: the first prepare mark, and the least size a cold cache compacts at. */
  get coldMark(): number {
    return Math.floor(PREPARE_SHARE * this.threshold);
  }

  /** The compaction being prepared or ready to apply, or null. */
  get prepared(): Preparation<T> | null {
    return this.#prepared;
  }

  /** Records a request sent now (hosts call it as they send what `request` shaped): the prompt cache is warm from here. */
  sent(): void {
    this.#lastRequestAt = this.now();
  }

  /** True when the last request was sent longer ago than the cache's lifetime (`cacheTtlMs`): the next one pays for its whole prompt anyway. */
  cacheCold(): boolean {
    return this.cacheTtlMs !== null && this.#lastRequestAt !== null && this.now() - this.#lastRequestAt > this.cacheTtlMs;
  }

  /**
   * What to do about background compaction for a context of `tokens` (as the provider counts it)
   * over `messages`, keyed by `keys` (the host's id of each message, such as its entry id;
   * default the messages themselves). Call it where `due` would be called, before a request. A
   * ready result that no longer applies is dropped here (`dropped`). See background.ts.
   */
  next(tokens: number, messages: readonly T[], keys: readonly unknown[] = messages): BackgroundStep<T> {
    this.observe(tokens);
    let dropped: DroppedPreparation | null = null;
    let prepared = this.#prepared;
    const due = this.due(tokens, messages);
    if (prepared?.ready === true) {
      const result = prepared.result;
      const change = prefixChange(prepared.snapshot, prepared.keys, messages, keys, this.compactor.facts);
      const belowThreshold = prepared.reason !== "threshold" && prepared.tokens <= this.threshold;
      if (change !== null) dropped = this.drop(`it no longer applies: ${change}`);
      else if (result === null) dropped = this.drop(`its compaction threw: ${prepared.error ?? "no reason given"}`);
      else if (result.status !== "compacted" && belowThreshold) {
        // Below the threshold the preset may decline (layered before its own first layer): that
        // says nothing of the threshold, where the host compacts as it would have.
        this.#declinedBelowThreshold = true;
        dropped = this.drop(`it did not compact (${result.status}): ${result.reason ?? "no reason given"}`);
      }
      prepared = this.#prepared;
    }
    const cold = this.cacheCold() && tokens > this.coldMark && !this.waiting;
    const sendable = tokens <= this.contextWindow - this.reserveTokens;
    if (prepared?.ready === true) {
      const compacted = prepared.result?.status === "compacted";
      const grown = tokens - prepared.tokens;
      const allowed = Math.max(prepared.growthTokens, Math.floor(OUTGROWN_SHARE * this.contextWindow));
      if (due && !cold && sendable && compacted && prepared.reason !== "threshold" && grown > 2 * allowed) {
        dropped = this.drop(`the context grew by ${grown} tokens while it was written, more than twice the ${allowed} it was prepared for (they would stay verbatim beside its summary); prepared again from the context as it is`);
        return { action: "prepare", reason: "threshold", dropped };
      }
      if (due || (cold && compacted)) {
        return { action: "apply", preparation: prepared, appended: messages.slice(prepared.snapshot.length), cold: !due, dropped };
      }
      return { action: "none", dropped };
    }
    if (prepared !== null) return due && !sendable ? { action: "wait", preparation: prepared, dropped } : { action: "none", dropped };
    if (due) return sendable ? { action: "prepare", reason: "threshold", dropped } : { action: "compact", dropped };
    if (this.waiting || this.#declinedBelowThreshold) return { action: "none", dropped };
    if (cold) return { action: "prepare", reason: "cache-cold", dropped };
    if (tokens > this.prepareMark) return { action: "prepare", reason: "prepare", dropped };
    return { action: "none", dropped };
  }

  /** Records the context's size now, for its growth rate (the prepare mark); `next` does it too, a host that skips `next` below `coldMark` calls this. */
  observe(tokens: number): void {
    this.#pace.observe(tokens, this.now());
  }

  /**
   * Starts preparing a compaction of `messages` (copied) with the host's `run`, which must compact
   * the snapshot it is handed the way the host records compactions, with the loop's target and
   * signal, and never throw (a compaction returns failures as its status). Replaces nothing: call
   * it when `next` said `prepare`.
   */
  prepare(reason: PrepareReason, messages: readonly T[], tokens: number, run: (snapshot: readonly T[], input: PrepareInput) => Promise<CompactionResult<T>>, keys: readonly unknown[] = messages): Preparation<T> {
    if (this.#prepared !== null) {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `A compaction is already being prepared (since ${new Date(this.#prepared.startedAt).toISOString()}); one at a time per conversation.`, {
        hint: "Call next() and prepare only when it says so.",
      });
    }
    const snapshot = [...messages];
    this.#preparations += 1;
    const preparation = new Preparation<T>(
      { id: this.#preparations, reason, snapshot, keys: [...keys], tokens, startedAt: this.now(), ...this.#preparedTarget(reason, tokens) },
      (input) => run(snapshot, input),
      this.now,
    );
    this.#prepared = preparation;
    void preparation.done.then(() => {
      // How long this host's compactions take, for the next prepare mark (a fifth of each new one weighs in).
      if (preparation.result?.status !== "compacted" || preparation.readyAt === null) return;
      const ms = preparation.readyAt - preparation.startedAt;
      this.#duration = this.#duration === null ? ms : 0.8 * this.#duration + 0.2 * ms;
    });
    return preparation;
  }

  /** Forgets the preparation that was just applied (the host put it in place). */
  applied(preparation: Preparation<T>): void {
    if (this.#prepared === preparation) this.#prepared = null;
    this.#declinedBelowThreshold = false;
  }

  /**
   * Drops the preparation, in flight (it is cancelled) or ready, never to be applied; returns what
   * it cost, for the host to report, or null when there was none. Hosts call it when the context is
   * replaced under it (a manual compaction, another session).
   */
  drop(why: string): DroppedPreparation | null {
    const prepared = this.#prepared;
    if (prepared === null) return null;
    this.#prepared = null;
    if (!prepared.ready) prepared.controller.abort(new CompactionError(ErrorCodes.CANCELLED, `The compaction prepared in the background was dropped: ${why}`));
    const result = prepared.result;
    return {
      reason: prepared.reason,
      why,
      tokens: prepared.tokens,
      compactedMessages: result?.status === "compacted" ? (result.cut?.compactedIndices.length ?? 0) : 0,
      ms: (prepared.readyAt ?? this.now()) - prepared.startedAt,
    };
  }

  /** Waits for `preparation` at most `waitMs` (real time); true when it is ready. */
  async wait(preparation: Preparation<T>): Promise<boolean> {
    if (preparation.ready) return true;
    if (this.waitMs === Number.POSITIVE_INFINITY) {
      await preparation.done;
      return true;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), this.waitMs);
    });
    try {
      return await Promise.race([preparation.done.then(() => true as const), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The summarizer for a compaction that can wait for no model (the deadline of `wait`), or null when none is installed. */
  fallbackSummarizer(): Promise<Summarizer | null> {
    return noModelSummarizer(this.#fallbackSummarizer);
  }

  /**
   * The target of a compaction prepared at `tokens`: the compactor's, less what the context will
   * grow by before it is applied (to the threshold, or while one is written, whichever is more),
   * so that it then leaves what a compaction at the threshold leaves (never below half the compactor's target). A cold-cache compaction is applied
   * at once and keeps the compactor's own.
   */
  #preparedTarget(reason: PrepareReason, tokens: number): { targetTokens: number | undefined; growthTokens: number } {
    if (reason !== "prepare") return { targetTokens: undefined, growthTokens: 0 };
    const own = compactedTargetTokens(this.contextWindow, this.reserveTokens, this.compactor.autoCompact.threshold, tokens);
    const rate = this.#pace.rate(this.now());
    const during = rate === null ? 0 : rate * (this.#duration ?? this.#expectedMs);
    const growth = Math.floor(Math.max(0, this.threshold - tokens, during));
    return { targetTokens: Math.max(Math.floor(own / 2), own - growth), growthTokens: growth };
  }

  #overflow(request: ShapedRequest<T>): CompactionError {
    const parts = whatCannotShrink(this.compactor, request.messages);
    return new CompactionError(
      ErrorCodes.CONTEXT_OVERFLOW,
      `The request does not fit the context window: shaped to the budget of ${request.budget} tokens (window ${this.contextWindow} less ${this.reserveTokens} reserved for the reply) it is still ${request.tokens} tokens: the system prompt and the pinned messages (${parts.pinned}), the newest user message (${parts.request}), summaries (${parts.summaries}) and what cannot be shortened further (${parts.other}).`,
      { hint: "Compact, unpin messages, shorten the system prompt, or use a model with a larger context window." },
    );
  }

  /**
   * The newest user message's index when the turn it starts holds at least `tokens`, else null;
   * -1 when the context holds no user message and at least `tokens` (a split newest turn whose
   * request is carried in the summary: the whole context is that turn).
   */
  #largeNewestTurn(messages: readonly T[], tokens: number): number | null {
    const request = lastUserIndex(messages.map((message) => this.compactor.facts.of(message)));
    let held = 0;
    for (let i = Math.max(0, request); i < messages.length; i++) held += this.compactor.tokens.count(messages[i] as T);
    return held >= tokens ? request : null;
  }

  /** True when a user message came after the large turn that kept the last compaction over the threshold. */
  #largeTurnEnded(messages: readonly T[]): boolean {
    if (this.#retryAfterRequest === null) return false;
    for (let i = messages.length - 1; i > this.#retryAfterRequest; i--) if (this.compactor.facts.of(messages[i] as T).kind === "user") return true;
    return false;
  }
}

/** Tokens of a shaped request by what could not be shrunk further, for the overflow errors. */
export function whatCannotShrink<T>(compactor: Compactor<T>, messages: readonly T[]): { pinned: number; request: number; summaries: number; other: number } {
  const facts = messages.map((m) => compactor.facts.of(m));
  const request = lastUserIndex(facts);
  const parts = { pinned: 0, request: 0, summaries: 0, other: 0 };
  messages.forEach((message, i) => {
    const f = facts[i]!;
    const tokens = compactor.tokens.count(message);
    if (f.kind === "system" || f.pinned) parts.pinned += tokens;
    else if (i === request) parts.request += tokens;
    else if (f.kind === "summary") parts.summaries += tokens;
    else parts.other += tokens;
  });
  return parts;
}

/**
 * How fast the context grows, in tokens per ms of the loop's clock: over the stretch since it last
 * shrank (a compaction), and at least as fast as over the stretch before (so the first turns after
 * a compaction do not read as a slow session).
 */
class GrowthRate {
  #since: { readonly at: number; readonly tokens: number } | null = null;
  #last = 0;
  #previous: number | null = null;

  observe(tokens: number, now: number): void {
    if (this.#since === null || tokens < this.#last) {
      if (this.#since !== null) this.#previous = this.#segment(this.#last, now) ?? this.#previous;
      this.#since = { at: now, tokens };
    }
    this.#last = tokens;
  }

  rate(now: number): number | null {
    const own = this.#segment(this.#last, now);
    if (own === null) return this.#previous;
    return this.#previous === null ? own : Math.max(own, this.#previous);
  }

  #segment(tokens: number, now: number): number | null {
    const since = this.#since;
    if (since === null || now <= since.at || tokens <= since.tokens) return null;
    return (tokens - since.tokens) / (now - since.at);
  }
}
