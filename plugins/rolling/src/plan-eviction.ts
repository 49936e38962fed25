import type { MessageFacts, MessageView } from "@compaction/core";

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
 * - at least `minKeepMessages` of the newest messages stay;
 * - the system prompt and pinned messages stay, with every message tool-linked to them;
 * - no cut falls between messages that share a tool-call id, so a call is never separated
 *   from any of its results (this matches the core's cut check, which then repairs nothing).
 *
 * Linear in the number of messages and tool-call ids.
 */
export function planEviction(view: MessageView, options: EvictionPlanOptions): EvictionPlan {
  const { facts } = view;
  const n = facts.length;
  const tokens = (i: number) => view.tokens[i] ?? 0;
  const noteTokens = options.noteTokens ?? 0;
  const target = options.targetTokens;
  const links = linkToolMessages(facts);
  const keep = anchoredToPinned(facts, links.root);
  const lastCut = n - Math.min(Math.max(0, options.minKeepMessages), n);

  let total = 0;
  for (let i = 0; i < n; i++) total += tokens(i);

  // Walk the cuts from the oldest; `freed`/`count` are what cutting at `c` evicts.
  let freed = 0;
  let count = 0;
  let chosen = 0; // a cut is chosen only when it evicts something
  let bestGain = 0;
  let met = total <= target;
  let blocked = 0;
  for (let c = 0; c <= lastCut && !met; c++) {
    if (c > 0) {
      const i = c - 1;
      if (!keep[i]) {
        freed += tokens(i);
        count++;
      }
    }
    blocked += links.blockDelta[c] ?? 0;
    if (blocked > 0 || count === 0) continue;
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

interface ToolLinks {
  /** Union-find root of each message: messages sharing a tool-call id share a root. */
  readonly root: (i: number) => number;
  /** `+1` where a tool-linked group starts being split by a cut, `-1` where it stops. */
  readonly blockDelta: readonly number[];
}

/**
 * Groups messages that share a tool-call id (a call and all its results), and marks the cuts
 * that would split a group: a cut at `c` splits the group spanning `min..max` when `min < c <= max`.
 */
function linkToolMessages(facts: readonly MessageFacts[]): ToolLinks {
  const parent = facts.map((_, i) => i);
  const root = (i: number): number => {
    let r = i;
    while (parent[r] !== r) r = parent[r] as number;
    let j = i;
    while (parent[j] !== r) {
      const next = parent[j] as number;
      parent[j] = r;
      j = next;
    }
    return r;
  };
  const span = new Map<string, { first: number; last: number }>();
  facts.forEach((f, i) => {
    for (const id of [...f.toolCalls.map((c) => c.id), ...f.toolResultIds]) {
      const seen = span.get(id);
      if (seen === undefined) {
        span.set(id, { first: i, last: i });
        continue;
      }
      seen.last = i;
      const a = root(seen.first);
      const b = root(i);
      if (a !== b) parent[b] = a;
    }
  });
  const blockDelta = new Array<number>(facts.length + 2).fill(0);
  for (const { first, last } of span.values()) {
    if (last === first) continue;
    blockDelta[first + 1] = (blockDelta[first + 1] ?? 0) + 1;
    blockDelta[last + 1] = (blockDelta[last + 1] ?? 0) - 1;
  }
  return { root, blockDelta };
}

/** True for messages that must stay: system and pinned ones, and every message tool-linked to one. */
function anchoredToPinned(facts: readonly MessageFacts[], root: (i: number) => number): boolean[] {
  const anchoredRoots = new Set<number>();
  facts.forEach((f, i) => {
    if (f.kind === "system" || f.pinned) anchoredRoots.add(root(i));
  });
  return facts.map((_, i) => anchoredRoots.has(root(i)));
}
