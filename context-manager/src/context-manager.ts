/**
 * Auto-compaction for any agent loop. The manager holds the context (in memory or in a pi
 * session file), keeps its token count up to date as messages are appended, and compacts when
 * the count passes the threshold, when the provider rejects a request as too long, or when asked.
 *
 * Every change goes through one queue. A compaction prepared in the background (the default with
 * a model summarizer; see `HostLoop.next`) runs beside it: appended messages go in at once, the
 * agent goes on with its full history, and the result is put in place at the threshold followed
 * by every message appended since (or dropped when its snapshot is no longer the start of the
 * context). A compaction in the foreground (by hand, after an overflow, with background off, or a
 * request that cannot be sent otherwise) holds appended messages until it ends, then adds them in
 * order, whatever came of it.
 *
 * With a session store many workers share in a database (SQLite, Postgres), a compaction is
 * claimed in the database before it is prepared in the background (preparation-claim.ts): a
 * worker that does not hold the claim does not prepare, and sees the holder's compaction in the
 * store once it is applied.
 */
import {
  budgetRatioOf,
  type ClaimAnswer,
  CompactionError,
  type CompactionResult,
  type CompactionTrigger,
  type Compactor,
  describeError,
  type ErrorCode,
  backgroundCheck,
  type DroppedPreparation,
  ErrorCodes,
  type HostLoop,
  type Preparation,
  type PrepareInput,
  type PrepareReason,
  type Summarizer,
  isCompactionError,
  lastUserIndex,
  markCacheBreakpoints,
  type ShapedRequest,
  untouchedResult,
  whatCannotShrink,
} from "@compaction/core";
import type { PreparationClaim, PreparationClaimOutcome } from "@compaction/transcript";
import { ContextSize } from "./context-size.js";
import type { AppendedSince, ContextStore } from "./context-store.js";
import { DEGRADATION_HARD_AT, DEGRADATION_SOFT_AT, type DegradationRisk, degradationRisk, riskAdvice } from "./degradation.js";
import { TypedEmitter } from "./emitter.js";
import type { CompactionReason, ContextManagerEvents, ContextWarningKind } from "./events.js";
import { isCompactionSuperseded } from "./entry-context-store.js";
import { isContextOverflowError } from "./overflow.js";
import { PreparationClaimKeeper } from "./preparation-claim.js";
import { failedResult } from "./results.js";
import { USAGE_LINE_MIN_RATIO, type UsageLineOptions, formatUsageLine } from "./usage-line.js";

/**
 * A compaction needs something to summarise beyond what it keeps (a system prompt, the
 * summary, the last user message), so a context of fewer messages is never compacted.
 */
export const MIN_MESSAGES_TO_COMPACT = 4;

/** The context size against the window, and the display line (null at or below half the window). */
export interface ContextUsage {
  readonly tokens: number;
  readonly contextWindow: number;
  /** `tokens / contextWindow`; can pass 1. */
  readonly ratio: number;
  /** `[████████░░] 78% context (6,240 / 8,000 tokens)`, or null when `ratio` is at most 0.5. */
  readonly line: string | null;
}

/** The compaction count and what it means for the context's quality. */
export interface ContextDegradation {
  readonly compactions: number;
  readonly risk: DegradationRisk;
  readonly advice: string | null;
}

export interface ContextCompactOptions {
  /** What the summary should focus on (`/compact <focus>`). */
  readonly focus?: string;
  readonly signal?: AbortSignal;
}

export interface ContextSendOptions extends RequestOptions {
  /** Whether a thrown value means "the request was too long". Default: `isContextOverflowError`. */
  readonly isOverflow?: (error: unknown) => boolean;
}

export interface RequestOptions {
  /**
   * Mark where the request's stable prefix ends (`ShapedRequest.cacheBreakpoints`: after the
   * summary or note, after the last message unchanged since the previous request, after the newest
   * message) in the way the provider needs it, through the adapter's `markCacheBreakpoint`
   * (Anthropic's `cache_control`). Default false; a format with no marker sends the messages as
   * they are. The context itself is never marked.
   */
  readonly markCache?: boolean;
}

/** What the manager is built from; see `createContextManager`. */
export interface ContextManagerInit<T> {
  readonly compactor: Compactor<T>;
  /** Whether `dispose()` disposes the compactor (true when the manager created it). */
  readonly ownsCompactor: boolean;
  readonly store: ContextStore<T>;
  /** The host loop (`HostLoop`: the reserve, trigger, wait and shaping), made for the window. */
  readonly loop: HostLoop<T>;
  /**
   * Whether `dispose()` cancels the loop's compaction prepared in the background (true, the
   * default: the manager made the loop). False when the caller keeps the loop for a later manager
   * on the same session, which puts that compaction in place if it still applies.
   */
  readonly ownsLoop?: boolean;
  /** The host's choice (`autoCompact` option), or undefined to leave it to the config. */
  readonly autoCompact: boolean | undefined;
  readonly maxAutoCompactions: number | undefined;
  readonly agent: string | undefined;
  /**
   * With a store that claims background compactions in its database: who this worker is, as its
   * claims record it, and how long a claim lasts unless renewed (ms).
   */
  readonly claim?: { readonly owner: string; readonly leaseMs: number };
}

export class ContextManager<T> {
  readonly compactor: Compactor<T>;
  readonly contextWindow: number;
  /**
   * Tokens every request leaves free for the reply: the `reserveTokens` option, else the config's,
   * else the window's own (`replyReserveTokens`). The budget and the threshold follow from it.
   */
  readonly reserveTokens: number;
  /** Compactions after which auto-compaction stops, or undefined for no limit. */
  readonly maxAutoCompactions: number | undefined;
  readonly #ownsCompactor: boolean;
  readonly #ownsLoop: boolean;
  readonly #store: ContextStore<T>;
  readonly #size: ContextSize<T>;
  /** The reserve, trigger, wait after a compaction that freed too little, and prefix-stable shaping (core's `HostLoop`). */
  readonly #loop: HostLoop<T>;
  readonly #autoOption: boolean | undefined;
  readonly #agent: string | undefined;
  readonly #emitter: TypedEmitter<ContextManagerEvents<T>>;
  /** Operations queued or running, and the promise the next one waits for. */
  #pending = 0;
  #tail: Promise<unknown> = Promise.resolve();
  #compacting = false;
  #disposed = false;
  readonly #warned = new Set<ContextWarningKind>();
  readonly #warnedTexts = new Set<string>();
  /** The claim on the compaction prepared in the background, with a store that claims them in its database (else null). */
  readonly #claims: PreparationClaimKeeper<Preparation<T>> | null;
  /** The token of the other worker's claim last reported (`claimed-elsewhere`), to report each once. */
  #reportedHolder: string | null = null;

  constructor(init: ContextManagerInit<T>) {
    this.compactor = init.compactor;
    this.#loop = init.loop;
    this.contextWindow = init.loop.contextWindow;
    this.reserveTokens = init.loop.reserveTokens;
    this.maxAutoCompactions = init.maxAutoCompactions;
    this.#ownsCompactor = init.ownsCompactor;
    this.#ownsLoop = init.ownsLoop ?? true;
    this.#store = init.store;
    this.#autoOption = init.autoCompact;
    this.#agent = init.agent;
    this.#size = new ContextSize(init.compactor.tokens, init.store.messages, init.store.anchor);
    this.#emitter = new TypedEmitter((error, event) => {
      if (event === "error") return;
      this.#emitter.emit("error", { error: error instanceof Error ? error : new Error(describeError(error)), during: "listener" });
    });
    const claims = init.store.preparationClaims;
    this.#claims =
      claims === undefined || init.claim === undefined || !init.loop.background
        ? null
        : new PreparationClaimKeeper<Preparation<T>>(claims, {
            owner: init.claim.owner,
            leaseMs: init.claim.leaseMs,
            current: () => this.#loop.prepared,
            onLost: (preparation, why) => {
              void this.#serial(async () => {
                if (this.#loop.prepared === preparation) this.#reportDropped(this.#loop.drop(why));
              });
            },
            // The workers sharing the session wait for this one's: apply it once their appends took the session past the threshold.
            onRenewed: () => {
              if (!this.#disposed) this.check().catch(() => undefined);
            },
            onError: (error, doing) => this.#emitter.emit("error", { error: asCompactionError(error, ErrorCodes.STORE_UNAVAILABLE, `Could not ${doing} in ${this.#store.path ?? "the session store"}`), during: "compaction" }),
          });
  }

  /**
   * The current context, oldest first (the compacted one after a compaction). A live view that
   * grows as messages are appended; copy it to keep a snapshot.
   */
  get messages(): readonly T[] {
    return this.#store.messages;
  }

  /**
   * The session file the context lives in (or the session store's location, such as
   * `sqlite:<file>#<id>`), or null when it is held in memory.
   */
  get session(): string | null {
    return this.#store.path;
  }

  /** The context size now: the newest trusted provider usage plus counts of what came after it. */
  get tokens(): number {
    return this.#size.tokens;
  }

  /**
   * The auto-compaction threshold in tokens, as the provider counts them: the configured share of
   * the usable window (`compactor.autoCompactTokens`: the window, or less when the reserve for the
   * reply takes over a tenth of it), so the context is compacted before it outgrows what a request
   * can hold, and between compactions what is sent only grows at its end.
   */
  get threshold(): number {
    return this.#loop.threshold;
  }

  /** True while a compaction runs: in the foreground (appended messages are queued until it ends) or in the background. */
  get compacting(): boolean {
    return this.#compacting || (this.#loop.prepared !== null && !this.#loop.prepared.ready);
  }

  /**
   * The compaction prepared in the background, or null: why it started, the context size and
   * messages it compacts, when it started (the manager's clock), whether it is ready, and its age.
   */
  get prepared(): PreparedStatus | null {
    const prepared = this.#loop.prepared;
    if (prepared === null) return null;
    const now = this.#loop.now();
    return {
      reason: prepared.reason,
      tokens: prepared.tokens,
      messages: prepared.snapshot.length,
      startedAt: prepared.startedAt,
      ageMs: prepared.age(now),
      ready: prepared.ready,
      status: prepared.result?.status ?? null,
      done: prepared.done,
      claim: this.#claims?.held ?? null,
    };
  }

  /** The size past which a compaction is prepared in the background (`HostLoop.prepareMark`), or null when background preparation is off. */
  get prepareMark(): number | null {
    return this.#loop.background ? this.#loop.prepareMark : null;
  }

  /**
   * Whether auto-compaction is on: the session's own setting (`compaction autocompact on|off`)
   * wins, then the `autoCompact` option, then the config.
   */
  get autoCompact(): boolean {
    return this.#store.autoCompactSetting() ?? this.#autoOption ?? this.compactor.autoCompact.enabled;
  }

  /** Compactions so far: on the session's branch (whoever made them), or made by this manager. */
  get compactions(): number {
    return this.#store.compactions;
  }

  degradation(): ContextDegradation {
    const compactions = this.#store.compactions;
    const risk = degradationRisk(compactions);
    return { compactions, risk, advice: riskAdvice(risk) };
  }

  /** The context size against the window, with the usage line to show above 50 %. */
  usage(options: UsageLineOptions = {}): ContextUsage {
    const tokens = this.#size.tokens;
    const ratio = tokens / this.contextWindow;
    return { tokens, contextWindow: this.contextWindow, ratio, line: ratio > USAGE_LINE_MIN_RATIO ? formatUsageLine(tokens, this.contextWindow, options) : null };
  }

  /** Adds a listener; returns the function that removes it. */
  on<E extends keyof ContextManagerEvents<T>>(event: E, listener: (payload: ContextManagerEvents<T>[E]) => void): () => void {
    return this.#emitter.on(event, listener);
  }

  /**
   * Adds messages at the end of the context (and, with a session, to the file). During a
   * compaction they wait and are added after it, in order. Resolves once they are in.
   */
  append(input: T | readonly T[]): Promise<void> {
    this.#assertOpen("append");
    const messages: readonly T[] = Array.isArray(input) ? [...(input as readonly T[])] : [input as T];
    if (this.#pending === 0 && this.#store.synchronous) {
      this.#store.append(messages);
      this.#added(messages);
      return Promise.resolve();
    }
    return this.#serial(async () => {
      let reread: void | boolean;
      try {
        reread = await this.#store.append(messages);
      } catch (error) {
        this.#emitter.emit("error", { error: asError(error), during: "append" });
        throw error;
      }
      // Another worker wrote first: the context now holds its messages too, so it is measured afresh.
      if (reread === true) {
        this.#size.reset(this.#store.messages, this.#store.anchor);
        this.#loop.reset();
      } else this.#added(messages);
    });
  }

  /** Resolves when everything queued so far (appends, compactions) is done. */
  async idle(): Promise<void> {
    await this.#tail;
  }

  /**
   * Compacts automatically when the context is over the threshold and auto-compaction is on.
   * Returns the compaction's result, or null when none was needed (or allowed). When the context
   * is still over the threshold afterwards, it is not tried again until a message is appended,
   * and a `cannot-free` warning is sent, except for a `noop` that leaves the context within the
   * window (the preset declined on purpose; `compaction-end` carries its reason).
   */
  check(): Promise<CompactionResult<T> | null> {
    this.#assertOpen("check");
    // A shared store may have grown by other workers' messages: only a store of our own can answer at once.
    // Below the first prepare mark (the threshold with background off) with nothing prepared, nothing to do.
    const quietBelow = this.#loop.background ? this.#loop.coldMark : this.threshold;
    if (this.#loop.background) this.#loop.observe(this.#size.tokens);
    if (this.#pending === 0 && this.#store.sync === undefined && this.#loop.prepared === null && this.#size.tokens <= quietBelow) return Promise.resolve(null);
    return this.#serial(() => this.#checkNow());
  }

  /** `check()`, after the model's response was appended. */
  afterResponse(): Promise<CompactionResult<T> | null> {
    return this.check();
  }

  /** `check()`, before the next request is sent. */
  beforeRequest(): Promise<CompactionResult<T> | null> {
    return this.check();
  }

  /** Compacts now (trigger `manual`), whatever the threshold and auto-compaction settings say. */
  compact(options: ContextCompactOptions = {}): Promise<CompactionResult<T>> {
    this.#assertOpen("compact");
    return this.#serial(() => this.#compactNow("manual", "manual", options));
  }

  /**
   * Sends a request with overflow recovery: checks the threshold, calls `request` with the
   * current messages and, when it fails because the context is too long, compacts once and
   * retries once. Throws `COMPACTION_CONTEXT_OVERFLOW` when the compaction cannot free enough
   * room or the retry is rejected as too long again; any other error passes through untouched.
   */
  async send<R>(request: (messages: readonly T[]) => Promise<R>, options: ContextSendOptions = {}): Promise<R> {
    const isOverflow = options.isOverflow ?? isContextOverflowError;
    await this.check();
    await this.idle();
    let first = this.#shape(this.budget);
    // Not even shaped does the request fit: compact as the provider's refusal would make us, and
    // throw COMPACTION_CONTEXT_OVERFLOW if that frees too little, rather than send what cannot fit.
    if (!first.fits) {
      first = await this.#serial(() => this.#recoverFromOverflow(null, first));
      await this.idle();
    }
    const marked = (shaped: ShapedRequest<T>): readonly T[] =>
      options.markCache === true ? markCacheBreakpoints(this.compactor.adapter, shaped.messages, shaped.cacheBreakpoints) : shaped.messages;
    let retry: readonly T[];
    try {
      this.#loop.sent();
      return await request(marked(first));
    } catch (error) {
      if (!isOverflow(error)) throw error;
      retry = marked(await this.#serial(() => this.#recoverFromOverflow(error, first)));
      await this.idle();
    }
    try {
      this.#loop.sent();
      return await request(retry);
    } catch (error) {
      if (!isOverflow(error)) throw error;
      throw overflowError(
        `The provider rejected the request as too long again after one compaction and retry (the context is now ${this.#size.tokens} tokens by our count, window ${this.contextWindow}); not retrying further.`,
        "Start a fresh session (compaction context export, then context import), switch to a model with a larger context window, or lower autoCompact.threshold.",
        error,
      );
    }
  }

  /**
   * Waits for queued work, cancels a compaction being prepared, then frees the compactor if the
   * manager created it. With a loop the caller keeps (`createContextManager({ loop })`) the
   * compaction prepared in it is left to the loop, for the next manager on the session; the claim
   * on it in a shared store's database is released all the same.
   */
  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    await this.#tail;
    const prepared = this.#loop.prepared;
    if (prepared !== null && this.#ownsLoop) {
      this.#reportDropped(this.#loop.drop("the context manager was disposed"));
      await prepared.done;
    }
    await this.#claims?.release();
    this.#emitter.clear();
    if (this.#ownsCompactor) this.compactor.dispose();
  }

  // -------------------------------------------------------------------------------------------

  #serial<R>(task: () => Promise<R>): Promise<R> {
    this.#pending += 1;
    const run = this.#tail.then(task).finally(() => {
      this.#pending -= 1;
    });
    this.#tail = run.catch(() => undefined);
    return run;
  }

  #added(messages: readonly T[]): void {
    for (const message of messages) this.#size.push(message);
  }

  async #checkNow(): Promise<CompactionResult<T> | null> {
    await this.#syncStore();
    if (!this.autoCompact) return null;
    if (this.#loop.background) return this.#backgroundCheck();
    if (!this.#loop.due(this.#size.tokens, this.#store.messages)) return null;
    if (this.#nothingToCompact()) return null;
    if (this.#stoppedAtMax()) return null;
    return this.#settle(await this.#compactNow("threshold", "auto", {}));
  }

  /** The warning when maxAutoCompactions stops auto-compaction; true then. */
  #stoppedAtMax(): boolean {
    if (!this.#maxReached()) return false;
    this.#warnOnce(
      "max-auto-compactions",
      `Auto-compaction stopped: ${this.#compactionsText()}, the most maxAutoCompactions (${this.maxAutoCompactions}) allows. The context is ${this.#size.tokens} tokens, over the threshold of ${Math.round(this.threshold)}. Compact by hand (compact()), or start fresh (compaction context export, then context import).`,
    );
    return true;
  }

  /**
   * `check()` with background preparation: core's `backgroundCheck` (start preparing past the
   * prepare mark; at the threshold, or with the cache cold, put the prepared result in place with
   * what was appended since; wait only when a request cannot be sent otherwise, at most `waitMs`,
   * then compact with the no-model summary), with this manager's side: its store's compactions,
   * its limits, and the claim on each preparation with a store that keeps them in its database.
   */
  async #backgroundCheck(): Promise<CompactionResult<T> | null> {
    return backgroundCheck<T, CompactionResult<T>>(this.#loop, {
      context: () => ({ tokens: this.#size.tokens, messages: this.#store.messages, keys: this.#store.keys ?? this.#store.messages }),
      mayStart: (reason) => !this.#nothingToCompact() && !(reason === "threshold" ? this.#stoppedAtMax() : this.#maxReached()),
      claim: () => this.#claimPreparation(),
      waitForHolder: () => this.#waitForClaimHolder(),
      run: (snapshot, input) => this.#runPrepared(snapshot, input),
      started: (preparation) => this.#followPreparation(preparation),
      apply: async (preparation, appended, cold) => this.#settle(await this.#applyPrepared(preparation, appended, cold)),
      compactNow: async (summarizer) => this.#settle(await this.#compactNow("threshold", "auto", {}, summarizer)),
      report: (event) => this.#emitter.emit("background", event),
      settle: async () => this.#claims?.settle(),
    });
  }

  /**
   * Before preparing a compaction with a store that claims them in its database: claims it.
   * `prepare` when this worker holds the claim (or the store keeps none); `held` when another
   * worker's claim counts (reported once per claim, `claimed-elsewhere`); `moved` when the session
   * changed since it was read (read again now). A claim the database failed to take is reported,
   * and counts as `held` (nothing is prepared until a request could not be sent without it).
   */
  async #claimPreparation(): Promise<ClaimAnswer> {
    const claims = this.#claims;
    if (claims === null) return "prepare";
    const keys = this.#store.keys;
    const head = keys === undefined || keys.length === 0 ? null : String(keys[keys.length - 1]);
    let outcome: PreparationClaimOutcome;
    try {
      outcome = await claims.claim({ baseCompactionId: this.#store.newestCompactionId ?? null, headEntryId: head, tokens: this.#size.tokens });
    } catch (error) {
      this.#emitter.emit("error", { error: asCompactionError(error, ErrorCodes.STORE_UNAVAILABLE, `Could not claim the background compaction in ${this.#store.path ?? "the session store"}`), during: "compaction" });
      return "held";
    }
    if (outcome.claimed) return "prepare";
    if (outcome.reason === "moved") {
      await this.#syncStore();
      return "moved";
    }
    const holder = outcome.holder;
    if (this.#reportedHolder !== holder.token) {
      this.#reportedHolder = holder.token;
      this.#emitter.emit("background", { type: "claimed-elsewhere", owner: holder.owner, claimedAt: holder.claimedAt, ageMs: holder.ageMs, ready: holder.readyAt !== null });
    }
    return "held";
  }

  /**
   * A request cannot be sent, and another worker holds the claim on the compaction it needs:
   * reads the session every `CLAIM_HOLDER_POLL_MS`, at most `waitMs`, until that worker's
   * compaction brought it within the window less the reserve, or its claim no longer counts
   * (released, its lease ran out, or a compaction was written). True then, false at the deadline.
   */
  async #waitForClaimHolder(): Promise<boolean> {
    const claims = this.#store.preparationClaims;
    if (claims === undefined) return false;
    this.#emitter.emit("background", { type: "waiting", tokens: this.#size.tokens });
    const started = performance.now();
    const deadline = started + this.#loop.waitMs;
    let done = false;
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0) break;
      await new Promise((resolve) => setTimeout(resolve, Math.min(CLAIM_HOLDER_POLL_MS, left)));
      if (!(await this.#syncStore())) break;
      if (this.#size.tokens <= this.contextWindow - this.reserveTokens) {
        done = true;
        break;
      }
      try {
        const claim = await claims.current();
        if (claim === null || claim.state !== "live") {
          done = true;
          break;
        }
      } catch (error) {
        this.#emitter.emit("error", { error: asCompactionError(error, ErrorCodes.STORE_UNAVAILABLE, `Could not read the background compaction claim in ${this.#store.path ?? "the session store"}`), during: "compaction" });
        break;
      }
    }
    this.#emitter.emit("background", { type: "wait", ms: Math.round(performance.now() - started), timedOut: !done });
    return done;
  }

  /** The compaction of `snapshot` prepared beside the queue (appends go on), as the store records compactions; never throws. */
  async #runPrepared(snapshot: readonly T[], { targetTokens, signal }: PrepareInput): Promise<CompactionResult<T>> {
    const tokens = this.#size.tokens;
    const anchor = this.#store.anchor;
    try {
      return await this.#store.compact(this.compactor, {
        messages: snapshot,
        trigger: "auto",
        contextWindow: this.contextWindow,
        reserveTokens: this.reserveTokens,
        signal,
        ...(targetTokens === undefined ? {} : { targetTokens }),
        ...(anchor === undefined ? {} : { anchor }),
        ...(this.#agent === undefined ? {} : { agent: this.#agent }),
      });
    } catch (error) {
      const failure = asCompactionError(error, ErrorCodes.INPUT_INVALID, "The compaction prepared in the background failed");
      return untouchedResult(snapshot, tokens, "failed", failure.message, failure);
    }
  }

  /** A preparation started: its claim (with a store that claims them) is held with it, and marked ready when it is. */
  #followPreparation(preparation: Preparation<T>): void {
    const claims = this.#claims;
    if (claims === null) return;
    claims.hold(preparation);
    void preparation.done.then(() => {
      if (this.#loop.prepared === preparation) claims.ready(preparation);
    });
  }

  /** Puts a prepared compaction in place, followed by `appended` (the messages since its snapshot, the end of the context now). */
  async #applyPrepared(preparation: NonNullable<HostLoop<T>["prepared"]>, appended: readonly T[], cold: boolean): Promise<CompactionResult<T>> {
    this.#loop.applied(preparation);
    const reason: CompactionReason = cold ? "cache-cold" : "threshold";
    const tokens = this.#size.tokens;
    let result = preparation.result as CompactionResult<T>;
    this.#emitter.emit("compaction-start", {
      reason,
      trigger: "auto",
      tokens,
      contextWindow: this.contextWindow,
      threshold: this.threshold,
      messages: this.#store.messages.length,
      focus: null,
      prepared: { startedAt: preparation.startedAt, tokens: preparation.tokens, appended: appended.length },
    });
    let entryId: string | null = null;
    if (result.status === "compacted") {
      const since: AppendedSince<T> = { messages: appended, tokens: Math.max(0, tokens - preparation.tokens) };
      ({ result, entryId } = await this.#commit(result, preparation.snapshot, since));
    }
    await this.#claims?.settle();
    const compactions = this.#store.compactions;
    this.#emitter.emit("compaction-end", { reason, trigger: "auto", result, tokens: this.#size.tokens, compactions, entryId });
    if (result.status === "compacted") this.#warnDegradation(compactions);
    return result;
  }

  #reportDropped(dropped: DroppedPreparation | null): void {
    if (dropped !== null) this.#emitter.emit("background", { type: "dropped", cost: dropped });
  }

  /** After an automatic compaction: the loop's wait when it left the context over the threshold, with the warning. */
  #settle(result: CompactionResult<T>): CompactionResult<T> {
    const growth = this.#loop.settle(this.#size.tokens, this.#store.messages);
    if (growth !== null) {
      // A preset may decline on purpose between the threshold and its own first layer (layered
      // between pruneThreshold and summarizeThreshold, with a session file): while the context
      // still fits the window that is news (compaction-end says why), not a failure to free room.
      if (result.status === "noop" && this.#size.tokens <= this.contextWindow) return result;
      // A session file keeps the messages a compaction kept as they are; when what it kept is
      // over the threshold, what is sent is shrunk to fit (requestMessages), which is not a failure.
      if (result.status === "compacted" && (result.shrunk?.length ?? 0) > 0 && this.#shape(this.budget).fits) return result;
      const why =
        result.status === "compacted"
          ? `after compacting, the context is still ${this.#size.tokens} tokens, over the threshold of ${Math.round(this.threshold)}`
          : `nothing was compacted (${result.status}): ${(result.reason ?? "no reason given").replace(/\.$/, "")}`;
      this.#warn(
        "cannot-free",
        `Auto-compaction could not free enough room: ${why}. It tries again once the context has grown by ${growth} tokens (a quarter of the window), or earlier, once, when it reaches the window less the reserve; until then each request holds the newest messages that fit the budget.`,
      );
    }
    return result;
  }

  /**
   * True when a compaction cannot change anything, so an automatic one is not run: on a session
   * file (which records a compaction only as summary + unchanged suffix, and where the newest
   * turn is never split) everything before the newest user message is already a summary, the
   * system prompt or pinned. That is the state right after a compaction whose newest turn stays
   * over the threshold (a huge tool output kept whole in the file and shrunk at send time):
   * without this check every later message of the turn would run the same noop again. A new user
   * message ends it (the turn before it becomes compactable). In memory a run can still change
   * messages in place (pruning, shrinking), so this applies only to a session file.
   */
  #nothingToCompact(): boolean {
    if (this.#store.path === null) return false;
    const facts = this.#store.messages.map((message) => this.compactor.facts.of(message));
    const request = lastUserIndex(facts);
    if (request < 0) return false;
    for (let i = 0; i < request; i++) {
      const f = facts[i]!;
      if (f.kind !== "system" && f.kind !== "summary" && !f.pinned) return false;
    }
    return true;
  }

  /**
   * Most tokens a request may hold, by our count: the context window less the compactor's reserve
   * for the reply, at the provider's calibrated ratio to our count (as
   * `MessageTokenCounter.budgetRatio`; `countedBudget`), so a request within it is within the
   * window as the provider counts it. A compaction run's own budget can be lower (it uses the
   * run's ratio, Before over our count, when that is higher).
   */
  get budget(): number {
    return this.#loop.budget(budgetRatioOf(this.#size.calibration));
  }

  /**
   * The messages `send()` hands to the request, shaped by the compactor (`compactor.shapeRequest`):
   * the preset's send-time shaping first (layered prunes old tool outputs), then what is still
   * over the budget shrunk to head and tail (the core's `shrinkToBudget`: largest tool outputs,
   * then the newest turn's other messages, the newest user message last). The context itself (and
   * its session file) keeps the full text. Prefix-stable (`Compactor.createRequestShaper`): between
   * two compactions a message shrunk once is sent in the same form, and a request that must shrink
   * frees room for the next ones, so each request differs from the previous one only at its end and
   * the provider's prompt cache holds. A new array each call (the context's messages when nothing is shaped).
   * A request that leaves out older messages sends an `error` event (COMPACTION_CONTEXT_TRIMMED),
   * and one that cannot be brought within the budget at all another (COMPACTION_CONTEXT_OVERFLOW).
   */
  requestMessages(options: RequestOptions = {}): readonly T[] {
    const shaped = this.#shape(this.budget, true);
    this.#loop.sent();
    if (options.markCache === true) return markCacheBreakpoints(this.compactor.adapter, shaped.messages, shaped.cacheBreakpoints);
    // A request is what is sent now: a host that keeps it (to send later, or to compare with the
    // next one) must not see it grow as messages are appended, so never the context's own array.
    return shaped.messages === this.#store.messages ? [...shaped.messages] : shaped.messages;
  }

  /**
   * The request for the context, shaped to `budget` by the loop (prefix-stable). A request that
   * leaves out older messages sends an `error` event (COMPACTION_CONTEXT_TRIMMED), once each time
   * more are left out; with `reportOverflow`, one that cannot fit at all another
   * (COMPACTION_CONTEXT_OVERFLOW: `send()` compacts and throws it instead).
   */
  #shape(budget: number, reportOverflow = false): ShapedRequest<T> {
    const recorded = this.#store.anchor?.calibration;
    const { request, problem } = this.#loop.request(this.#store.messages, budget, recorded === undefined ? {} : { recordedCalibration: recorded }, this.#trimCause());
    for (const warning of request.warnings) this.#warnOnceText("shape-failed", warning);
    if (problem !== null && (problem.code === ErrorCodes.CONTEXT_TRIMMED || reportOverflow)) this.#emitter.emit("error", { error: problem, during: "request" });
    return request;
  }

  /** Why no compaction brought the context within the budget, for COMPACTION_CONTEXT_TRIMMED. */
  #trimCause(): string {
    const size = `the context is ${this.#size.tokens} tokens`;
    if (!this.autoCompact) return `${size} and auto-compaction is off`;
    if (this.#maxReached()) return `${size} and auto-compaction stopped at maxAutoCompactions (${this.maxAutoCompactions})`;
    if (this.#loop.waiting) return `${size} and the last automatic compaction could not bring it under the threshold`;
    return `${size} and no compaction brought it within the budget yet`;
  }

  /**
   * After the provider rejected `sent` as too long: compacts once (as asked for, whatever the
   * thresholds say), then returns the request to retry with, shaped to fit the budget and to be
   * smaller than what was rejected. Throws COMPACTION_CONTEXT_OVERFLOW when no such request
   * exists: the system prompt, pinned messages and newest user message alone are too large.
   */
  async #recoverFromOverflow(cause: unknown, sent: ShapedRequest<T>): Promise<ShapedRequest<T>> {
    const rejected =
      cause === null
        ? `The request does not fit the context window: shaped to the budget of ${sent.budget} tokens it is still ${sent.tokens} tokens`
        : `The provider rejected the request as too long for the context window (${describeError(cause)})`;
    if (!this.autoCompact) {
      throw overflowError(`${rejected}, and auto-compaction is off for this ${this.#store.path === null ? "context" : "session"}, so nothing was compacted.`, "Compact by hand (compact()), or turn auto-compaction on.", cause);
    }
    if (this.#maxReached()) {
      throw overflowError(
        `${rejected}, and auto-compaction stopped: ${this.#compactionsText()}, the most maxAutoCompactions (${this.maxAutoCompactions}) allows.`,
        "Compact by hand (compact()), or start fresh (compaction context export, then context import).",
        cause,
      );
    }
    // The provider has the last word on the size: compact as asked for (trigger "manual"), not
    // by the strategy's thresholds, which our count may place below them (layered, rolling).
    const result = await this.#compactNow("overflow", "manual", {});
    if (result.error?.code === ErrorCodes.CONTEXT_OVERFLOW) {
      throw overflowError(`${rejected}. ${result.error.message} Not retrying.`, result.error.hint ?? "Use a model with a larger context window.", cause);
    }
    // The provider counts more than we do (another tokenizer, the system prompt, tools): the
    // retry must be smaller than what it rejected, not only within our count of the budget.
    const budget = cause === null ? this.budget : Math.min(this.budget, Math.max(1, Math.floor(sent.tokens * RETRY_SHARE)));
    const shaped = this.#shape(budget);
    // A compaction refused as not smaller (a summary longer than the little history before the
    // kept messages) still leaves shaping: older turns left out of what is sent, or shrunk.
    if (result.status !== "compacted" && ((shaped.shrunk.length === 0 && shaped.dropped.length === 0) || !shaped.fits)) {
      throw overflowError(
        `${rejected}; compacting could not free any room (${result.status}): ${(result.reason ?? "no reason given").replace(/\.$/, "")}. Not retrying.`,
        result.error?.hint ?? "Start a fresh session (compaction context export, then context import), or use a model with a larger context window.",
        cause,
      );
    }
    if (!shaped.fits) {
      const parts = whatCannotShrink(this.compactor, shaped.messages);
      throw overflowError(
        `${rejected}; after compacting and shrinking, the request is still ${shaped.tokens} tokens, over the ${budget} it must fit (the budget of ${this.budget} by our count: window ${this.contextWindow} minus ${this.reserveTokens} reserved, at the provider's ratio to our count, and below the ${sent.tokens} rejected): the system prompt and the pinned messages (${parts.pinned} tokens), the newest user message (${parts.request}, cut to head and tail), summaries (${parts.summaries}) and what cannot be shortened further (${parts.other}: the newest turn's last step, its markers, tool-call names and the thinking of the calls it answers). Not retrying.`,
        "Start a fresh session (compaction context export, then context import), unpin messages, or use a model with a larger context window.",
        cause,
      );
    }
    return shaped;
  }

  /**
   * Reads the context again when other writers changed a shared store (`ContextStore.sync`), and
   * measures it afresh. Returns false (and reports the error) when the store could not be read.
   */
  async #syncStore(): Promise<boolean> {
    if (this.#store.sync === undefined) return true;
    try {
      if (await this.#store.sync()) {
        this.#size.reset(this.#store.messages, this.#store.anchor);
        this.#loop.reset();
      }
      return true;
    } catch (error) {
      this.#emitter.emit("error", { error: asCompactionError(error, ErrorCodes.TRANSCRIPT_INVALID, `Could not read ${this.#store.path ?? "the session"} again`), during: "compaction" });
      return false;
    }
  }

  /** One compaction, start to end: notification, compactor, store, warnings. Never throws. `summarizer`: the no-model one, past the wait's deadline. */
  async #compactNow(reason: CompactionReason, trigger: CompactionTrigger, options: ContextCompactOptions, summarizer?: Summarizer): Promise<CompactionResult<T>> {
    await this.#syncStore();
    const input = [...this.#store.messages]; // results must not change when queued messages land
    const tokens = this.#size.tokens;
    if (input.length < MIN_MESSAGES_TO_COMPACT) {
      return untouchedResult(
        input,
        tokens,
        "noop",
        `The context has ${input.length} message(s); a compaction needs at least ${MIN_MESSAGES_TO_COMPACT} (something to summarise beyond the system prompt, the summary and the last user message).`,
      );
    }
    this.#compacting = true;
    this.#emitter.emit("compaction-start", {
      reason,
      trigger,
      tokens,
      contextWindow: this.contextWindow,
      threshold: this.threshold,
      messages: input.length,
      focus: options.focus ?? null,
    });
    let result: CompactionResult<T>;
    let entryId: string | null = null;
    try {
      result = await this.#store.compact(this.compactor, {
        messages: input,
        trigger,
        contextWindow: this.contextWindow,
        reserveTokens: this.reserveTokens,
        // Before in the measure of this.tokens: from the last compaction's After until a newer usage figure.
        ...(this.#store.anchor === undefined ? {} : { anchor: this.#store.anchor }),
        ...(options.focus === undefined ? {} : { focus: options.focus }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        ...(this.#agent === undefined ? {} : { agent: this.#agent }),
        ...(summarizer === undefined ? {} : { summarizer }),
      });
      if (result.status === "compacted") ({ result, entryId } = await this.#commit(result, input));
    } catch (error) {
      const failure = asCompactionError(error, ErrorCodes.INPUT_INVALID, "The compaction failed");
      this.#emitter.emit("error", { error: failure, during: "compaction" });
      result = untouchedResult(input, tokens, "failed", failure.message, failure);
    } finally {
      this.#compacting = false;
    }
    const compactions = this.#store.compactions;
    this.#emitter.emit("compaction-end", { reason, trigger, result, tokens: this.#size.tokens, compactions, entryId });
    if (result.status === "compacted") {
      this.#warnDegradation(compactions);
      // A compaction prepared before this one was made from the context this one replaced.
      this.#reportDropped(this.#loop.drop(`a ${reason} compaction replaced the context it was prepared from`));
    }
    await this.#claims?.settle();
    return result;
  }

  /**
   * Puts a compacted `result` of `input` in place (followed by `since`, for a prepared one) and
   * measures the context afresh. Never throws: another worker's compaction first drops ours (a
   * `compaction-superseded` warning, a noop), and a store that cannot record it fails it.
   */
  async #commit(result: CompactionResult<T>, input: readonly T[], since?: AppendedSince<T>): Promise<{ result: CompactionResult<T>; entryId: string | null }> {
    try {
      const entryId = await this.#store.commit(result, since);
      this.#size.reset(this.#store.messages, this.#store.anchor);
      return { result, entryId };
    } catch (error) {
      if (isCompactionSuperseded(error)) {
        // Another worker compacted the shared session first: ours is dropped (nothing was
        // written) and the context goes on from theirs, already read again by the store.
        this.#size.reset(this.#store.messages, this.#store.anchor);
        this.#warn("compaction-superseded", error.message);
        return { result: untouchedResult(this.#store.messages, this.#size.tokens, "noop", error.message, null, result.warnings), entryId: null };
      }
      const failure = asCompactionError(error, ErrorCodes.TRANSCRIPT_INVALID, `Could not put the compacted context in place${this.#store.path === null ? "" : ` in ${this.#store.path}`}`);
      if (failure.code !== ErrorCodes.CUT_REFUSED) this.#emitter.emit("error", { error: failure, during: "compaction" });
      return { result: failedResult(result, input, failure), entryId: null };
    }
  }

  #warnDegradation(compactions: number): void {
    if (compactions >= DEGRADATION_HARD_AT) {
      this.#warned.add("degradation-soft");
      this.#warnOnce("degradation-hard", `${capitalise(this.#compactionsText())}. ${riskAdvice("high")}`);
    } else if (compactions >= DEGRADATION_SOFT_AT) {
      this.#warnOnce("degradation-soft", `${capitalise(this.#compactionsText())}. ${riskAdvice("medium")}`);
    }
  }

  #maxReached(): boolean {
    return this.maxAutoCompactions !== undefined && this.#store.compactions >= this.maxAutoCompactions;
  }

  #compactionsText(): string {
    const n = this.#store.compactions;
    const where = this.#store.path === null ? "this context has been compacted" : "this session's branch holds";
    return this.#store.path === null ? `${where} ${n} time${n === 1 ? "" : "s"}` : `${where} ${n} compaction${n === 1 ? "" : "s"}`;
  }

  /** A warning shown once per text (a plugin's send-time shaping that failed, before every request). */
  #warnOnceText(kind: ContextWarningKind, message: string): void {
    const key = `${kind}:${message}`;
    if (this.#warnedTexts.has(key)) return;
    this.#warnedTexts.add(key);
    this.#warn(kind, message);
  }

  #warnOnce(kind: ContextWarningKind, message: string): void {
    if (this.#warned.has(kind)) return;
    this.#warned.add(kind);
    this.#warn(kind, message);
  }

  #warn(kind: ContextWarningKind, message: string): void {
    this.#emitter.emit("warning", { kind, message, compactions: this.#store.compactions });
  }

  #assertOpen(what: string): void {
    if (!this.#disposed) return;
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `Cannot ${what}: the context manager was disposed.`, {
      hint: "Create a new one with createContextManager().",
    });
  }
}

/** A compaction prepared in the background, as `ContextManager.prepared` shows it. */
export interface PreparedStatus {
  readonly reason: PrepareReason;
  /** The context size it compacts, as the provider counts it, and its messages. */
  readonly tokens: number;
  readonly messages: number;
  /** When it started (the manager's clock), and how long ago. */
  readonly startedAt: number;
  readonly ageMs: number;
  readonly ready: boolean;
  /** Its result's status once ready, else null. */
  readonly status: CompactionResult<unknown>["status"] | null;
  /** Resolves when it ends. */
  readonly done: Promise<void>;
  /** The claim this worker holds on it in the session store's database (SQLite, Postgres), or null. */
  readonly claim: PreparationClaim | null;
}

/** A retry after "too long" may hold at most this share of what the provider rejected. */
export const RETRY_SHARE = 0.9;

/** How often a worker that cannot send a request reads the session while another worker's claimed compaction is being written, in ms. */
export const CLAIM_HOLDER_POLL_MS = 200;

function overflowError(message: string, hint: string, cause: unknown): CompactionError {
  return new CompactionError(ErrorCodes.CONTEXT_OVERFLOW, message, { hint, cause });
}

function asCompactionError(error: unknown, code: ErrorCode, prefix: string): CompactionError {
  if (isCompactionError(error)) return error;
  return new CompactionError(code, `${prefix}: ${describeError(error)}`, { cause: error });
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(describeError(error));
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
