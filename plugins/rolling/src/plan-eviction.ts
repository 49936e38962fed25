import { alwaysKept, lastUserIndex, type MessageView, safeCuts, toolPairs } from "@compaction/core";

export interface EvictionPlanOptions {
  /** Most tokens the kept messages (plus `noteTokens` when something is evicted) may hold. */
  readonly targetTokens: number;
  /** Fewest of the newest messages kept verbatim (capped at the number of messages). */
  readonly minKeepMessages: number;
  /** Tokens the caller adds back when it evicts anything (the eviction note). Default 0. */
  readonly noteTokens?: number;
}

/** Which messages to evict, by index into the view. */
export interface EvictionPlan {
  /** First message of the kept suffix; 0 when nothing is evicted. */
  readonly firstKeptIndex: number;
  /** Evicted messages, oldest first. */
  readonly evictedIndices: readonly number[];
  /** Messages before the cut kept anyway: system prompt, pinned messages and their tool partners. */
  readonly preservedIndices: readonly number[];
  /** Tokens of every kept message (preserved and suffix), without the note. */
  readonly keptTokens: number;
  readonly evictedTokens: number;
  readonly targetTokens: number;
  /** True when `keptTokens` (plus `noteTokens` if anything is evicted) is at or under the target. */
  readonly targetMet: boolean;
}

/**
 * Chooses the oldest messages to evict so that what stays fits `targetTokens`:
 * - the cut is the smallest index that meets the target (evicting as little as possible);
 *   when no cut meets it, the one that frees the most tokens (`targetMet: false`);
 * - at least `minKeepMessages` of the newest messages stay, and never fewer than from the newest
 *   user message on (the request being worked on is never evicted, whatever `minKeepMessages` is);
 * - the system prompt and pinned messages stay, with their tool partners (the core's `alwaysKept`);
 * - no cut separates a tool call from a result answering it (the core's `safeCuts`, pairing by
 *   position as the core's cut check does, so ids reused every turn block only their own turn).
 *
 * Linear in the number of messages and tool calls.
 */
export function planEviction(view: MessageView, options: EvictionPlanOptions): EvictionPlan {
  const { facts } = view;
  const n = facts.length;
  const tokens = (i: number) => view.tokens[i] ?? 0;
  const noteTokens = options.noteTokens ?? 0;
  const target = options.targetTokens;
  const pairs = toolPairs(facts);
  const safe = safeCuts(view, pairs);
  const keep = new Array<boolean>(n).fill(false);
  for (const i of alwaysKept(view, pairs).indices) keep[i] = true;
  const request = lastUserIndex(facts);
  const lastCut = Math.min(n - Math.min(Math.max(0, options.minKeepMessages), n), request >= 0 ? request : n);

  let total = 0;
  for (let i = 0; i < n; i++) total += tokens(i);

  // Walk the cuts from the oldest; `freed`/`count` are what cutting at `c` evicts.
  let freed = 0;
  let count = 0;
  let chosen = 0; // a cut is chosen only when it evicts something
  let bestGain = 0;
  let met = total <= target;
  for (let c = 0; c <= lastCut && !met; c++) {
    if (c > 0) {
      const i = c - 1;
      if (!keep[i]) {
        freed += tokens(i);
        count++;
      }
    }
    if (!safe[c] || count === 0) continue;
    if (total - freed + noteTokens <= target) {
      chosen = c;
      met = true;
    } else if (freed - noteTokens > bestGain) {
      chosen = c;
      bestGain = freed - noteTokens;
    }
  }

  const evictedIndices: number[] = [];
  const preservedIndices: number[] = [];
  let evictedTokens = 0;
  for (let i = 0; i < chosen; i++) {
    if (keep[i]) preservedIndices.push(i);
    else {
      evictedIndices.push(i);
      evictedTokens += tokens(i);
    }
  }
  const keptTokens = total - evictedTokens;
  return {
    firstKeptIndex: chosen,
    evictedIndices,
    preservedIndices,
    keptTokens,
    evictedTokens,
    targetTokens: target,
    targetMet: keptTokens + (evictedIndices.length > 0 ? noteTokens : 0) <= target,
  };
}
