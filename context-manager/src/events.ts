/** What a context manager tells its host, by event name. */
import type { BackgroundEvent, CompactionError, CompactionResult, CompactionTrigger } from "@compaction/core";

/**
 * Why a compaction runs: the context passed the auto-compaction threshold, the provider rejected
 * a request as too long, the host asked (`compact()`), or the prompt cache went cold with the
 * context past the prepare mark (a compaction prepared in the background, put in place then).
 */
export type CompactionReason = "threshold" | "overflow" | "manual" | "cache-cold";

/**
 * Sent before a compaction starts; until `compaction-end`, appended messages wait in a queue. A
 * compaction prepared in the background sends both when it is put in place (`prepared` says so).
 */
export interface CompactionStartEvent {
  readonly reason: CompactionReason;
  /** What the compaction records: `auto` for threshold and overflow, `manual` for `compact()`. */
  readonly trigger: CompactionTrigger;
  /** The context size now. */
  readonly tokens: number;
  readonly contextWindow: number;
  /** The auto-compaction threshold in tokens. */
  readonly threshold: number;
  /** Messages in the context now. */
  readonly messages: number;
  readonly focus: string | null;
  /** Only for a compaction prepared in the background: when it started (the manager's clock), the size it was prepared at, and the messages appended since. */
  readonly prepared?: { readonly startedAt: number; readonly tokens: number; readonly appended: number };
}

/**
 * What a compaction prepared in the background did (core's `BackgroundEvent`): `start`, `ready`,
 * `waiting` then `wait`, `dropped` (`cost`). Putting one in place is a `compaction-start` and
 * `compaction-end`.
 */
export type { BackgroundEvent } from "@compaction/core";

/** Sent after every compaction that started, whatever came of it. */
export interface CompactionEndEvent<T> {
  readonly reason: CompactionReason;
  readonly trigger: CompactionTrigger;
  /**
   * The compactor's result; `status` is `compacted` only when the new context is in place (and,
   * with a session, written to the file).
   */
  readonly result: CompactionResult<T>;
  /** The context size after (before, when nothing was compacted). */
  readonly tokens: number;
  /** Compactions so far: on the session's branch, or made by this manager. */
  readonly compactions: number;
  /** Id of the compaction entry written to the session, or null. */
  readonly entryId: string | null;
}

export type ContextWarningKind =
  /** The branch holds 3 compactions: suggest a fresh start (export, then import). */
  | "degradation-soft"
  /** The branch holds 5 compactions: summaries of summaries have lost detail. */
  | "degradation-hard"
  /** `maxAutoCompactions` reached: auto-compaction is off from now on. */
  | "max-auto-compactions"
  /**
   * An automatic compaction left the context over the threshold: it compacted too little, failed
   * or was cancelled, or compacted nothing with the context over the window. (A `noop` within the
   * window is no warning: `compaction-end` carries its reason.)
   */
  | "cannot-free"
  /** A plugin's `shapeRequest` tap failed: the request was sent without its change (once per message). */
  | "shape-failed"
  /**
   * Another worker sharing the session store compacted it first: this manager's compaction was
   * dropped (nothing written, not counted) and the context goes on from the other one's.
   */
  | "compaction-superseded";

export interface ContextWarningEvent {
  readonly kind: ContextWarningKind;
  readonly message: string;
  /** Compactions so far. */
  readonly compactions: number;
}

/** Something went wrong outside a compaction's own result: a session write, a request that lost context, or a listener that threw. */
export interface ContextErrorEvent {
  readonly error: CompactionError | Error;
  /**
   * `request`: a request left out messages of the context to fit the budget
   * (COMPACTION_CONTEXT_TRIMMED), or could not be brought within it (COMPACTION_CONTEXT_OVERFLOW,
   * from `requestMessages()`; `send()` throws it).
   */
  readonly during: "compaction" | "append" | "listener" | "request";
}

export interface ContextManagerEvents<T> {
  "compaction-start": CompactionStartEvent;
  "compaction-end": CompactionEndEvent<T>;
  warning: ContextWarningEvent;
  error: ContextErrorEvent;
  background: BackgroundEvent;
}
