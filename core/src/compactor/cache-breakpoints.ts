/**
 * Where a request's stable prefix ends, for providers that cache only up to places marked in the
 * request (Anthropic's `cache_control` breakpoints, at most four per request). A shaped request
 * names them (`ShapedRequest.cacheBreakpoints`); a host marks them on what it sends
 * (`markCacheBreakpoints`, through the adapter's `markCacheBreakpoint`). Providers that cache on
 * their own (OpenAI) need nothing marked.
 */
import type { MessageAdapter, MessageFacts } from "../messages/adapter.js";

/** Breakpoints a shaped request names at most, leaving one of Anthropic's four for the system prompt and tools. */
export const MAX_MESSAGE_BREAKPOINTS = 3;

/**
 * Indices, ascending, of the messages after which the prefix is worth caching:
 * 1. the end of the head a compaction leaves (the summary or eviction note, with the system
 *    messages before it): stable until the next compaction;
 * 2. the last message sent unchanged since the previous request (`unchanged` messages at the
 *    start are the same as last time), where the previous request's cache entry ends, so this
 *    request reads it;
 * 3. the newest message, so the next request finds this one cached.
 */
export function cacheBreakpoints(facts: readonly MessageFacts[], unchanged = 0): number[] {
  if (facts.length === 0) return [];
  const points = new Set<number>();
  let head = -1;
  while (head + 1 < facts.length && (facts[head + 1]?.kind === "summary" || facts[head + 1]?.kind === "system")) head += 1;
  if (head >= 0 && facts.slice(0, head + 1).some((f) => f.kind === "summary")) points.add(head);
  if (unchanged > 0) points.add(Math.min(unchanged, facts.length) - 1);
  points.add(facts.length - 1);
  return [...points].sort((a, b) => a - b).slice(-MAX_MESSAGE_BREAKPOINTS);
}

/**
 * `messages` with the adapter's cache marker on each breakpoint (a copy; the messages given are
 * not changed), or `messages` itself when the adapter marks nothing (`markCacheBreakpoint` absent).
 */
export function markCacheBreakpoints<T>(adapter: MessageAdapter<T>, messages: readonly T[], breakpoints: readonly number[]): readonly T[] {
  const mark = adapter.markCacheBreakpoint;
  if (mark === undefined || breakpoints.length === 0) return messages;
  const at = new Set(breakpoints);
  return messages.map((message, i) => (at.has(i) ? mark.call(adapter, message) : message));
}
