import type { MessageFacts } from "../messages/adapter.js";

/** What cut rules need to know about a working set: each message's facts and token count. */
export interface MessageView {
  readonly facts: readonly MessageFacts[];
  readonly tokens: readonly number[];
}

/** Sum of every message's tokens. */
export function totalTokens(view: MessageView): number {
  let total = 0;
  for (const tokens of view.tokens) total += tokens;
  return total;
}

/** Sum of `tokens[i]` for the given indices. */
export function sumTokens(view: MessageView, indices: Iterable<number>): number {
  let total = 0;
  for (const i of indices) total += view.tokens[i] ?? 0;
  return total;
}

/**
 * Which messages answer which: for every message, the indices of the calls its results answer
 * (`callsOf`) and of the results that answer its calls (`resultsOf`). A result pairs with the
 * nearest earlier call with its id, so ids reused across turns (some OpenAI-compatible servers
 * send `call_0` every turn) pair correctly. A tool result with no id (OpenAI's deprecated
 * `function` role) pairs with the nearest earlier assistant message.
 */
export interface ToolPairs {
  readonly callsOf: readonly (readonly number[])[];
  readonly resultsOf: readonly (readonly number[])[];
}

export function toolPairs(facts: readonly MessageFacts[]): ToolPairs {
  const callsOf: number[][] = facts.map(() => []);
  const resultsOf: number[][] = facts.map(() => []);
  const latestCall = new Map<string, number>();
  let latestAssistant = -1;
  const link = (result: number, call: number | undefined) => {
    if (call === undefined || call === result || callsOf[result]?.includes(call)) return;
    callsOf[result]?.push(call);
    resultsOf[call]?.push(result);
  };
  facts.forEach((f, i) => {
    for (const id of f.toolResultIds) link(i, latestCall.get(id));
    if (f.kind === "toolResult" && f.toolResultIds.length === 0 && latestAssistant >= 0) link(i, latestAssistant);
    for (const call of f.toolCalls) latestCall.set(call.id, i);
    if (f.kind === "assistant") latestAssistant = i;
  });
  return { callsOf, resultsOf };
}

/**
 * Index of the message that issued each tool-call id (the newest one, when an id repeats).
 * Prefer `toolPairs`, which pairs repeated ids by position.
 */
export function toolCallOwners(facts: readonly MessageFacts[]): Map<string, number> {
  const owners = new Map<string, number>();
  facts.forEach((f, i) => {
    for (const call of f.toolCalls) owners.set(call.id, i);
  });
  return owners;
}
