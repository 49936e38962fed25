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
 */
import type { Compactor } from "../compactor/compactor.js";
import type { ReserveSetting } from "../compactor/reply-reserve.js";
import type { RequestShaper } from "../compactor/request-shaper.js";
import type { ShapedRequest, ShapeRequestInput } from "../compactor/shape-request.js";
import { CompactionError, ErrorCodes } from "../errors.js";
import { lastUserIndex } from "../cut/turns.js";
import { countedBudget } from "../tokens/message-tokens.js";

/**
 * How much the context must grow, as a share of the window, before an automatic compaction that
 * left it over the threshold is tried again: the storm bound (at most one compaction per quarter
 * of the window appended).
 */
export const RETRY_GROWTH_SHARE = 0.25;

export interface HostLoopOptions {
  /** The model's context window, in tokens. */
  readonly contextWindow: number;
  /** The host's own reserve for the reply (its option); default the compactor's for the window. */
  readonly reserveTokens?: number | undefined;
  /** The model's reply limit, when the host knows it: the reserve where neither the host nor the config sets one. */
  readonly maxOutputTokens?: number | undefined;
  /** Which host's option `reserveTokens` is, for its error: `the reserveTokens option of <host>`. */
  readonly host?: string;
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

  constructor(compactor: Compactor<T>, options: HostLoopOptions) {
    this.compactor = compactor;
    this.contextWindow = options.contextWindow;
    const host: ReserveSetting = {
      reserveTokens: options.reserveTokens,
      maxOutputTokens: options.maxOutputTokens,
      source: { name: `the reserveTokens option of ${options.host ?? "the host"}`, path: "/reserveTokens" },
    };
    this.reserveTokens = compactor.reserveFor(options.contextWindow, host);
    this.#shaper = compactor.createRequestShaper();
  }

  /** The size, as the provider counts it, past which the host compacts on its own (`Compactor.autoCompactTokens`). */
  get threshold(): number {
    return this.compactor.autoCompactTokens(this.contextWindow, this.reserveTokens);
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
