import type { MessageAdapter, MessageFacts, MessageView } from "@compaction/core";
import { formatPrunedMarker, isPrunedMarker, type PrunedCall } from "./marker.js";

export interface PruneToolOutputsOptions<T> {
  /** Builds the pruned copies (`replaceToolOutput`). */
  readonly adapter: Pick<MessageAdapter<T>, "replaceToolOutput">;
  /** Facts of a message (e.g. `run.factsOf`). */
  readonly factsOf: (message: T) => MessageFacts;
  /** Tokens of a message (e.g. `run.tokensOf`); also counts the pruned copies. */
  readonly tokensOf: (message: T) => number;
  /**
   * Tool outputs within the newest this-many tokens of `messages` keep their output. A message
   * partly inside (the messages after it hold fewer tokens than this) counts as inside.
   */
  readonly protectTokens: number;
}

export interface PrunedToolOutputs<T> {
  /** The messages with old tool outputs replaced by markers: a new array, or `messages` itself when nothing was pruned. */
  readonly messages: readonly T[];
  /** Indices of the replaced messages, oldest first. */
  readonly prunedIndices: readonly number[];
  /** Tokens saved: counted tokens of the replaced messages minus those of their markers. */
  readonly tokensSaved: number;
}

/**
 * Replaces old tool outputs with a short marker naming the tool, its arguments and whether it
 * failed (see formatPrunedMarker). Walks from the newest message back; outputs within the
 * newest `protectTokens` tokens are kept. Never prunes a pinned tool result, a result of a
 * pinned call, an output pruned before, or an output smaller than its marker. Pure: the input
 * array and its messages are not changed (pruned messages are copies).
 */
export function pruneToolOutputs<T>(messages: readonly T[], options: PruneToolOutputsOptions<T>): PrunedToolOutputs<T> {
  const { adapter, factsOf, tokensOf, protectTokens } = options;
  const facts = messages.map((m) => factsOf(m));
  const owners = issuingMessages(facts);
  const replacements = new Map<number, T>();
  let tokensSaved = 0;
  let newerTokens = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as T;
    const f = facts[i] as MessageFacts;
    const tokens = tokensOf(message);
    const isProtected = newerTokens < protectTokens;
    newerTokens += tokens;
    if (isProtected || !isPrunable(f, facts, owners[i] as ReadonlyMap<string, number>)) continue;
    const marker = formatPrunedMarker({
      calls: callsAnswered(f, facts, owners[i] as ReadonlyMap<string, number>),
      failed: f.isError,
      imageCount: f.imageCount,
      tokens,
    });
    const pruned = adapter.replaceToolOutput(message, marker);
    const saved = tokens - tokensOf(pruned);
    if (saved <= 0) continue;
    replacements.set(i, pruned);
    tokensSaved += saved;
  }
  if (replacements.size === 0) return { messages, prunedIndices: [], tokensSaved: 0 };
  return {
    messages: messages.map((m, i) => replacements.get(i) ?? m),
    prunedIndices: [...replacements.keys()].sort((a, b) => a - b),
    tokensSaved,
  };
}

/** Sum of the tokens of the tool-result messages (pinned and already-pruned ones included). */
export function toolOutputTokens(view: MessageView): number {
  let total = 0;
  view.facts.forEach((f, i) => {
    if (f.kind === "toolResult") total += view.tokens[i] ?? 0;
  });
  return total;
}

/**
 * For each message, the index of the message that issued each call it answers: the nearest
 * earlier one with that id, so ids reused across turns (`call_0` every turn) pair correctly.
 */
function issuingMessages(facts: readonly MessageFacts[]): ReadonlyMap<string, number>[] {
  const latestCall = new Map<string, number>();
  return facts.map((f, i) => {
    const owners = new Map<string, number>();
    for (const id of f.toolResultIds) {
      const owner = latestCall.get(id);
      if (owner !== undefined) owners.set(id, owner);
    }
    for (const call of f.toolCalls) latestCall.set(call.id, i);
    return owners;
  });
}

function isPrunable(f: MessageFacts, facts: readonly MessageFacts[], owners: ReadonlyMap<string, number>): boolean {
  if (f.kind !== "toolResult" || f.pinned) return false;
  for (const id of f.toolResultIds) {
    const owner = owners.get(id);
    if (owner !== undefined && facts[owner]?.pinned === true) return false;
  }
  return !isPrunedMarker(f.text);
}

/** The calls a tool result answers, with name and arguments from the issuing call when it is in `facts`. */
function callsAnswered(f: MessageFacts, facts: readonly MessageFacts[], owners: ReadonlyMap<string, number>): PrunedCall[] {
  if (f.toolResultIds.length === 0) return [{ name: f.toolName ?? "" }];
  return f.toolResultIds.map((id) => {
    const owner = owners.get(id);
    const call = owner === undefined ? undefined : facts[owner]?.toolCalls.find((c) => c.id === id);
    if (call === undefined) return { name: f.toolName ?? "" };
    return { name: call.name !== "" ? call.name : (f.toolName ?? ""), arguments: call.arguments };
  });
}
