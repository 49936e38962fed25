import type { MessageFacts } from "@compaction/core";

/** The facts the eviction note reports. */
export interface EvictionNoteFacts {
  /** Number of evicted messages. */
  readonly count: number;
  /** Tokens of the evicted messages. */
  readonly tokens: number;
  /** ISO time of the oldest evicted message that has one, or null. */
  readonly firstTimestamp: string | null;
  /** ISO time of the newest evicted message that has one, or null. */
  readonly lastTimestamp: string | null;
  /** The tool the agent recalls evicted messages with. Default `memory_search`. */
  readonly recallTool?: string;
}

/**
 * The note that replaces evicted messages:
 * `[Context rolled: N messages evicted (T tokens). Full transcript available via memory_search. Evicted range: <first> to <last>]`,
 * with `unknown` for a missing timestamp.
 */
export function formatEvictionNote(note: EvictionNoteFacts): string {
  const tool = note.recallTool ?? "memory_search";
  const first = note.firstTimestamp ?? "unknown";
  const last = note.lastTimestamp ?? "unknown";
  return `[Context rolled: ${note.count} messages evicted (${note.tokens} tokens). Full transcript available via ${tool}. Evicted range: ${first} to ${last}]`;
}

/** A millisecond timestamp as an ISO 8601 string, or null when missing or out of range. */
export function isoTimestamp(ms: number | undefined): string | null {
  if (ms === undefined || !Number.isFinite(ms)) return null;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** ISO times of the first and last messages (in order) that carry a timestamp. */
export function timestampRange(facts: readonly MessageFacts[]): { first: string | null; last: string | null } {
  let first: string | null = null;
  let last: string | null = null;
  for (const f of facts) {
    const iso = isoTimestamp(f.timestamp);
    if (iso === null) continue;
    first ??= iso;
    last = iso;
  }
  return { first, last };
}
