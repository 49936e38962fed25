/**
 * The events a framework's thread in a session store (`@compaction/ai-sdk/thread`,
 * `@compaction/langchain/thread`) sends to its `on` option: the context manager's events in a
 * plain shape of their own, so a thread's user needs no context manager type.
 */
import type { CompactionStatus } from "@compaction/core";
import type { BackgroundEvent } from "./events.js";
import type { ContextManager } from "./context-manager.js";

/** Sent before the thread's context is compacted. */
export interface ThreadCompactionStartEvent {
  readonly type: "compaction-start";
  /** The context's size now, in tokens. */
  readonly tokens: number;
  /** The size above which it compacts: the preset's auto-compaction share of the window. */
  readonly threshold: number;
  readonly contextWindow: number;
  /** Messages in the context now. */
  readonly messages: number;
  /** Only for a compaction prepared in the background: when it started, the size it was prepared at, and the messages appended since. */
  readonly prepared?: { readonly startedAt: number; readonly tokens: number; readonly appended: number };
}

/** Sent after every compaction that started, whatever came of it. */
export interface ThreadCompactionEndEvent {
  readonly type: "compaction-end";
  /** `compacted` when a compaction entry was written to the store. */
  readonly status: CompactionStatus;
  /** Why nothing changed, for any other status. */
  readonly reason: string | null;
  /** The compaction entry written to the store, or null. */
  readonly entryId: string | null;
  /** The context's size after (before, when nothing changed). */
  readonly tokens: number;
  /** Compactions on the thread's branch so far (whoever made them). */
  readonly compactions: number;
}

/** Something limited the result: a failed compaction, another worker's compaction won, ... */
export interface ThreadWarningEvent {
  readonly type: "warning";
  readonly message: string;
  /** The kind of warning (`compaction-superseded`, `cannot-free`, ...) or the error's code. */
  readonly code: string | null;
}

/**
 * A compaction prepared in the background (`background` on): `background.type` is `start`, `ready`,
 * `waiting`, `wait`, `dropped` or `claimed-elsewhere` (see the context manager's `BackgroundEvent`). Putting one in place is a
 * `compaction-start` and `compaction-end`, with `prepared` on the start.
 */
export interface ThreadBackgroundEvent {
  readonly type: "background";
  readonly background: BackgroundEvent;
}

export type ThreadEvent = ThreadCompactionStartEvent | ThreadCompactionEndEvent | ThreadWarningEvent | ThreadBackgroundEvent;

/** Forwards a context manager's events to `on` in the thread's shape. */
export function forwardThreadEvents(manager: ContextManager<unknown>, on: ((event: ThreadEvent) => void) | undefined): void {
  if (on === undefined) return;
  manager.on("compaction-start", (event) =>
    on({
      type: "compaction-start",
      tokens: event.tokens,
      threshold: event.threshold,
      contextWindow: event.contextWindow,
      messages: event.messages,
      ...(event.prepared === undefined ? {} : { prepared: event.prepared }),
    }),
  );
  manager.on("compaction-end", (event) =>
    on({
      type: "compaction-end",
      status: event.result.status,
      reason: event.result.reason ?? null,
      entryId: event.entryId,
      tokens: event.tokens,
      compactions: event.compactions,
    }),
  );
  manager.on("warning", (event) => on({ type: "warning", message: event.message, code: event.kind }));
  manager.on("background", (event) => on({ type: "background", background: event }));
  manager.on("error", (event) => on({ type: "warning", message: event.error.message, code: (event.error as { code?: string }).code ?? null }));
}
