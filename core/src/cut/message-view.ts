import type { MessageFacts } from "../messages/adapter.js";

/** What cut rules need to know about a working set: each message's facts and token count. */
export interface MessageView {
  readonly facts: readonly MessageFacts[];
  readonly tokens: readonly number[];
}

/** Sum of `tokens[i]` for the given indices. */
export function sumTokens(view: MessageView, indices: Iterable<number>): number {
  let total = 0;
  for (const i of indices) total += view.tokens[i] ?? 0;
  return total;
}

/** Index of the message that issued each tool-call id (the first one, if repeated). */
export function toolCallOwners(facts: readonly MessageFacts[]): Map<string, number> {
  const owners = new Map<string, number>();
  facts.forEach((f, i) => {
    for (const call of f.toolCalls) if (!owners.has(call.id)) owners.set(call.id, i);
  });
  return owners;
}

/** Indices of the messages that answer each tool-call id. */
export function toolResultHolders(facts: readonly MessageFacts[]): Map<string, number[]> {
  const holders = new Map<string, number[]>();
  facts.forEach((f, i) => {
    for (const id of f.toolResultIds) {
      const list = holders.get(id);
      if (list) list.push(i);
      else holders.set(id, [i]);
    }
  });
  return holders;
}
