/**
 * The structure and sizing rules every strategy shares, stated once: which messages a cut may
 * never drop, where a cut may fall without separating a tool call from its results, and how much
 * room the kept part has. `checkCut` enforces them; strategies plan with the same functions, so
 * a plan and its check never disagree (as copies did when tool-call ids repeat across turns).
 */
import type { MessageView, ToolPairs } from "./message-view.js";
import { toolPairs } from "./message-view.js";

/**
 * Messages before `firstKeptIndex` that must be kept: system and pinned messages, and `also` (the
 * newest user message, for a cut inside the newest turn: see `checkCut`), closed over tool
 * pairing (a preserved call keeps its results, a preserved result keeps its call).
 */
export function preservedBefore(
  view: MessageView,
  firstKeptIndex: number,
  pairs: ToolPairs = toolPairs(view.facts),
  also: readonly number[] = [],
): Set<number> {
  const preserved = new Set<number>();
  const queue: number[] = [];
  const add = (i: number) => {
    if (i < firstKeptIndex && !preserved.has(i)) {
      preserved.add(i);
      queue.push(i);
    }
  };
  for (let i = 0; i < firstKeptIndex; i++) {
    const f = view.facts[i];
    if (f && (f.kind === "system" || f.pinned)) add(i);
  }
  for (const i of also) add(i);
  while (queue.length > 0) {
    const i = queue.pop() as number;
    for (const j of pairs.resultsOf[i] ?? []) add(j);
    for (const j of pairs.callsOf[i] ?? []) add(j);
  }
  return preserved;
}

/** The messages kept wherever a cut falls (system, pinned, their tool partners), and their tokens. */
export interface AlwaysKept {
  /** Ascending indices. */
  readonly indices: readonly number[];
  readonly tokens: number;
}

/** What `preservedBefore` keeps when everything is compacted: an upper bound of what any cut preserves. */
export function alwaysKept(view: MessageView, pairs: ToolPairs = toolPairs(view.facts)): AlwaysKept {
  const indices = [...preservedBefore(view, view.facts.length, pairs)].sort((a, b) => a - b);
  let tokens = 0;
  for (const i of indices) tokens += view.tokens[i] ?? 0;
  return { indices, tokens };
}

/**
 * For every cut position `k` from 0 to n (keep messages `k..n-1`), whether it separates no tool
 * call from a result answering it: pairs are matched by position (`toolPairs`), so ids reused
 * every turn (`call_0`) block only the cuts inside their own turn.
 */
export function safeCuts(view: MessageView, pairs: ToolPairs = toolPairs(view.facts)): boolean[] {
  const n = view.facts.length;
  const delta = new Array<number>(n + 2).fill(0);
  pairs.callsOf.forEach((calls, result) => {
    for (const call of calls) {
      if (call >= result) continue;
      // Cutting at k with call < k <= result keeps the result and drops its call.
      delta[call + 1] = (delta[call + 1] ?? 0) + 1;
      delta[result + 1] = (delta[result + 1] ?? 0) - 1;
    }
  });
  const safe: boolean[] = [];
  let open = 0;
  for (let k = 0; k <= n; k++) {
    open += delta[k] ?? 0;
    safe.push(open === 0);
  }
  return safe;
}

/**
 * Tokens the kept suffix may hold: the budget less the summary's room and less what is always
 * kept. Never negative.
 */
export function keptRoom(view: MessageView, options: { readonly budget: number; readonly summaryTokens: number }): number {
  return Math.max(0, options.budget - options.summaryTokens - alwaysKept(view).tokens);
}
