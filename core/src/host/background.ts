/**
 * Compactions prepared in the background (`HostLoop`): the pieces of the loop that know about time.
 * The contract, in the order `HostLoop.next()` applies it:
 *
 * 1. A prepared result is applied only while its snapshot is still an unchanged prefix of the
 *    context (same messages, in order, by the host's keys or by identity and content): a manual
 *    compaction, a branch, another worker's compaction or a rewritten message makes it stale, and
 *    a stale result is dropped, never applied, and reported with what it cost (`DroppedPreparation`).
 * 2. It is applied at the threshold, followed by every message appended since, or earlier when the
 *    provider's prompt cache has gone cold (then the swap costs no extra cache miss).
 * 3. Until it is ready the host sends the full context while that fits the window less the reserve;
 *    only a request that could not be sent otherwise waits, and then at most `waitMs` for the
 *    compaction in flight, after which the host compacts with the no-model summary.
 */
import type { Compactor } from "../compactor/compactor.js";
import type { CompactionResult } from "../compactor/result.js";
import { CompactionError, describeError, ErrorCodes } from "../errors.js";
import type { FactsCache } from "../messages/adapter.js";
import { EXTRACTIVE_SUMMARIZER_PACKAGE, type Summarizer } from "../summarizer/summarizer.js";

/**
 * Where preparation starts, as a share of the threshold. The threshold leaves the target (0.6 of
 * it, `COMPACTED_SHARE`) after a compaction, so the 0.4 between them is what a session appends
 * between two compactions; preparing in its last half (at 0.8, as GitHub's Copilot CLI does, and
 * Mastra's memory, active at 0.8 of its threshold) gives the summary a fifth of the threshold of
 * appended context to be written in (about 10,000 tokens at 64k, 20,000 at 128k: several turns
 * of a coding agent) before the threshold, and the window less the reserve beyond it, while the
 * prepared compaction keeps that fifth less of the snapshot (`CompactInput.targetTokens`), so
 * once applied it leaves what a compaction at the threshold leaves.
 */
export const PREPARE_SHARE = 0.8;

/**
 * A prepared result is not applied when the context grew, while it was written, by more than
 * twice what it was prepared for and more than this share of the window: what was appended would
 * stay verbatim beside its summary (one large tool output), so the next compaction would come
 * soon after, and its cache miss with it. While a request can still be sent in full, the loop
 * prepares again from the context as it is.
 */
export const OUTGROWN_SHARE = 0.05;

/** How long a request that cannot be sent waits for the compaction in flight before the no-model summary. */
export const DEFAULT_WAIT_MS = 30_000;

/** How long a compaction is taken to last until one of this conversation's has been timed: a model summary of a long history. */
export const DEFAULT_EXPECTED_MS = 30_000;

/** The prompt cache's lifetime where the host sets none: Anthropic's default, 5 minutes. */
export const DEFAULT_CACHE_TTL_MS = 5 * 60_000;

/** When compactions are prepared in the background: always, never, or (`auto`) for any summarizer but the extractive one. */
export type BackgroundMode = boolean | "auto";

export interface BackgroundOptions {
  /**
   * `auto` (the default): prepare in the background unless the compactor's summarizer is the
   * extractive one, which writes a summary in milliseconds (a compaction at the threshold costs
   * no wait there). `true`: always; `false`: compact at the threshold, as a blocking host does.
   */
  readonly background?: BackgroundMode;
  /** The longest a request that cannot be sent otherwise waits for the compaction in flight; then the no-model summary. Default 30 s. */
  readonly waitMs?: number;
  /**
   * The provider's prompt-cache lifetime: past it since the last request, the cache is cold, and a
   * context past the prepare mark is compacted then. Default 5 minutes (Anthropic's); `null`: never.
   */
  readonly cacheTtlMs?: number | null;
  /** How long a compaction is taken to last until one has been timed, in ms (the prepare mark follows from it). Default 30 s. */
  readonly expectedMs?: number;
  /** The clock, in ms (default `Date.now`): a replay passes its recording's. */
  readonly now?: () => number;
  /** The summarizer that needs no model, for the wait's deadline. Default the extractive one (loaded when needed). */
  readonly fallbackSummarizer?: Summarizer;
}

/**
 * Throws COMPACTION_INPUT_INVALID, naming `host`'s option, for a background option that is not one
 * (`HostLoop` checks them when it is made; a host that makes its loops later checks them when it is
 * created, so a wrong option fails there and not at the first compaction).
 */
export function checkBackgroundOptions(options: BackgroundOptions, host?: string): void {
  const { background, waitMs, cacheTtlMs, expectedMs } = options;
  if (background !== undefined && background !== true && background !== false && background !== "auto") throw invalidOption(host, "background", `true, false or "auto"`, background);
  if (waitMs !== undefined && !(waitMs >= 0)) throw invalidOption(host, "waitMs", "a number of milliseconds of at least 0 (Infinity: no deadline)", waitMs);
  if (cacheTtlMs !== undefined && cacheTtlMs !== null && !(cacheTtlMs > 0)) throw invalidOption(host, "cacheTtlMs", "a positive number of milliseconds, or null", cacheTtlMs);
  if (expectedMs !== undefined && (!(expectedMs >= 0) || !Number.isFinite(expectedMs))) throw invalidOption(host, "expectedMs", "a finite number of milliseconds of at least 0", expectedMs);
}

function invalidOption(host: string | undefined, name: string, expected: string, found: unknown): CompactionError {
  return new CompactionError(ErrorCodes.INPUT_INVALID, `The ${name} option of ${host ?? "the host"} must be ${expected}; found ${String(found)}.`, {
    path: `/${name}`,
    hint: `Leave ${name} out for its default.`,
  });
}

/** Whether `mode` prepares in the background with `compactor`: `auto` does unless its summarizer is the extractive one (or it has none). */
export function backgroundFor(mode: BackgroundMode, compactor: Pick<Compactor<unknown>, "hasSummarizer" | "summarizer">): boolean {
  if (mode !== "auto") return mode;
  return compactor.hasSummarizer && compactor.summarizer.name !== "extractive";
}

/** Why a preparation started: the context passed the prepare mark, the threshold with nothing prepared, or the cache went cold. */
export type PrepareReason = "prepare" | "threshold" | "cache-cold";

/** What the host's compaction of a snapshot is given by the loop. */
export interface PrepareInput {
  /** The most the compaction should leave (the growth it will be applied with taken off), or undefined for the compactor's own target. */
  readonly targetTokens: number | undefined;
  readonly signal: AbortSignal;
}

/** One compaction prepared in the background: what it compacts, since when, and its result once ready. */
export class Preparation<T> {
  readonly id: number;
  readonly reason: PrepareReason;
  /** The context it compacts (a copy), and the host's key of each message. */
  readonly snapshot: readonly T[];
  readonly keys: readonly unknown[];
  /** The context's size when it started, as the provider counts it. */
  readonly tokens: number;
  readonly startedAt: number;
  readonly targetTokens: number | undefined;
  /** What the context was expected to grow by before it is applied (the target was lowered by it), as the provider counts it. */
  readonly growthTokens: number;
  readonly controller = new AbortController();
  readonly done: Promise<void>;
  #result: CompactionResult<T> | null = null;
  #error: string | null = null;
  #readyAt: number | null = null;

  constructor(init: { id: number; reason: PrepareReason; snapshot: readonly T[]; keys: readonly unknown[]; tokens: number; startedAt: number; targetTokens: number | undefined; growthTokens: number }, run: (input: PrepareInput) => Promise<CompactionResult<T>>, now: () => number) {
    this.id = init.id;
    this.reason = init.reason;
    this.snapshot = init.snapshot;
    this.keys = init.keys;
    this.tokens = init.tokens;
    this.startedAt = init.startedAt;
    this.targetTokens = init.targetTokens;
    this.growthTokens = init.growthTokens;
    let started: Promise<CompactionResult<T>>;
    try {
      started = run({ targetTokens: init.targetTokens, signal: this.controller.signal });
    } catch (error) {
      started = Promise.reject(error);
    }
    this.done = started.then(
      (result) => {
        this.#result = result;
        this.#readyAt = now();
      },
      (error: unknown) => {
        this.#error = describeError(error);
        this.#readyAt = now();
      },
    );
  }

  /** True once the compaction ended (with a result or an error). */
  get ready(): boolean {
    return this.#readyAt !== null;
  }

  get readyAt(): number | null {
    return this.#readyAt;
  }

  get result(): CompactionResult<T> | null {
    return this.#result;
  }

  /** Why the compaction threw (a host's run should not), or null. */
  get error(): string | null {
    return this.#error;
  }

  /** Age in ms at `now`. */
  age(now: number): number {
    return Math.max(0, now - this.startedAt);
  }
}

/** A prepared compaction dropped without being applied, and what it cost. */
export interface DroppedPreparation {
  readonly reason: PrepareReason;
  /** Why it no longer applies. */
  readonly why: string;
  /** The context size it compacted (what the summarizer read), as the provider counts it. */
  readonly tokens: number;
  /** Messages it compacted (summarised), 0 when it did not compact. */
  readonly compactedMessages: number;
  /** How long it ran, in ms (till now when it was cancelled in flight). */
  readonly ms: number;
}

/**
 * The first difference between `snapshot` and the start of `messages`, as a sentence, or null
 * when the snapshot is still an unchanged prefix. Keys compare first (the host's entry ids); a
 * message with another key, or the same object rewritten (kind, id, text or tool-call ids
 * differ) is a change.
 */
export function prefixChange<T>(snapshot: readonly T[], keys: readonly unknown[], messages: readonly T[], currentKeys: readonly unknown[], facts: FactsCache<T>): string | null {
  if (messages.length < snapshot.length) return `the context holds ${messages.length} message(s), fewer than the ${snapshot.length} it was prepared from (it was compacted or replaced since)`;
  for (let i = 0; i < snapshot.length; i++) {
    if (keys[i] !== currentKeys[i]) return `message ${i} of the ${snapshot.length} it was prepared from is no longer the same (a compaction, a branch or a rewrite since)`;
    const before = snapshot[i] as T;
    const now = messages[i] as T;
    if (before === now) continue;
    const a = facts.of(before);
    const b = facts.of(now);
    if (a.kind !== b.kind || a.id !== b.id || a.text !== b.text || idsOf(a.toolCalls) !== idsOf(b.toolCalls) || a.toolResultIds.join("\u0000") !== b.toolResultIds.join("\u0000")) {
      return `message ${i} of the ${snapshot.length} it was prepared from was rewritten since`;
    }
  }
  return null;
}

function idsOf(calls: readonly { readonly id: string }[]): string {
  return calls.map((call) => call.id).join("\u0000");
}

let extractive: Promise<Summarizer | null> | undefined;

/**
 * The summarizer that needs no model: the host's, else the extractive plugin's, loaded by its
 * package name the way the config loads plugins (the core ships no summarizer); null when it is
 * not installed.
 */
export function noModelSummarizer(own: Summarizer | undefined): Promise<Summarizer | null> {
  if (own !== undefined) return Promise.resolve(own);
  extractive ??= import(EXTRACTIVE_SUMMARIZER_PACKAGE).then(
    (module: { createExtractiveSummarizer?: () => Summarizer }) => (typeof module.createExtractiveSummarizer === "function" ? module.createExtractiveSummarizer() : null),
    () => null,
  );
  return extractive;
}
