import type { MessageFacts } from "../messages/adapter.js";

/**
 * A turn is a user message and everything up to the next one. Returns the index of the user
 * message that starts the turn containing `index`, or -1 when no user message precedes it
 * (searching no further back than `startIndex`).
 */
export function findTurnStartIndex(facts: readonly MessageFacts[], index: number, startIndex = 0): number {
  for (let i = Math.min(index, facts.length - 1); i >= startIndex; i--) {
    if (facts[i]?.kind === "user") return i;
  }
  return -1;
}

/** Start indices of every turn, oldest first. Messages before the first user message belong to no turn. */
export function turnStartIndices(facts: readonly MessageFacts[]): number[] {
  const starts: number[] = [];
  facts.forEach((f, i) => {
    if (f.kind === "user") starts.push(i);
  });
  return starts;
}

/** Index of the last user message, or -1. */
export function lastUserIndex(facts: readonly MessageFacts[]): number {
  return findTurnStartIndex(facts, facts.length - 1);
}

/**
 * True when a cut may start at this message: not a tool result (which must stay after its call)
 * and not the system prompt (which is preserved, not kept as part of the suffix).
 */
export function isCutPoint(facts: MessageFacts): boolean {
  return facts.kind !== "toolResult" && facts.kind !== "system";
}
