import { CompactionError, ErrorCodes } from "../errors.js";
import { describeValue } from "../messages/message-fields.js";
import type { CheckedCut, Cut } from "./cut.js";
import { type MessageView, sumTokens, type ToolPairs, toolPairs } from "./message-view.js";
import { preservedBefore } from "./structure.js";
import { findTurnStartIndex, lastUserIndex } from "./turns.js";

export interface CheckCutOptions {
  /** Name of the plugin that proposed the cut, for messages. */
  readonly plugin: string;
  /** Most tokens the preserved and kept messages may hold; `Infinity` for no limit. */
  readonly budget: number;
  /**
   * Whether a cut inside the newest turn keeps its request (the newest user message) ahead of the
   * summary, preserved like a pinned message. Default true. False for a host that records only
   * summary + suffix (`suffixOnly`): the request is then compacted with the turn's early part,
   * and the core carries its text in the summary (`carryRequest`).
   */
  readonly requestAhead?: boolean;
}

/**
 * Checks a proposed cut against the rules every compaction must keep, repairing what can be
 * repaired and refusing what cannot:
 * - a tool result is never separated from the call that issued it: a kept result pulls the cut
 *   back to its call (repair);
 * - the system prompt and pinned messages are never dropped: they, and their tool partners,
 *   are preserved before the summary;
 * - the newest user message (the request being worked on) is never dropped: a cut inside the
 *   newest turn preserves it the same way (unless `requestAhead` is false), and the turn's early
 *   part after it is the split turn's prefix (the core moves a cut past it back to it while the
 *   newest turn fits the run's target: `keepNewestRequest`);
 * - the kept part must fit the budget (refusal, code COMPACTION_CUT_REFUSED);
 * - a cut that starts inside a turn is reported as a split turn.
 */
export function checkCut(view: MessageView, proposed: Cut, options: CheckCutOptions): CheckedCut {
  const { facts } = view;
  const n = facts.length;
  const { plugin } = options;
  const first = (proposed as Partial<Cut> | null | undefined)?.firstKeptIndex;
  if (typeof first !== "number" || !Number.isInteger(first) || first < 0 || first > n) {
    const found = typeof proposed !== "object" || proposed === null ? describeValue(proposed) : `firstKeptIndex ${describeValue(first)}`;
    throw new CompactionError(
      ErrorCodes.CUT_REFUSED,
      `Plugin '${plugin}' returned a cut with ${found}; expected { firstKeptIndex } with a whole number from 0 to ${n} (the number of messages).`,
      { plugin, hint: "Return { firstKeptIndex } as an index into run.messages, or undefined to let the next plugin choose." },
    );
  }
  if (!(options.budget >= 0)) {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, `checkCut needs a budget of 0 or more tokens; found ${String(options.budget)}.`);
  }

  const repairs: string[] = [];
  const pairs = toolPairs(facts);
  const firstKeptIndex = pullBackToToolCalls(first, n, pairs);
  if (firstKeptIndex !== first) {
    repairs.push(
      `Plugin '${plugin}' cut at message ${first}, between a tool call and its result; the cut was moved back to message ${firstKeptIndex} so the call stays with its result.`,
    );
  }

  const request = lastUserIndex(facts);
  const keepsRequest = options.requestAhead !== false && request >= 0 && request < firstKeptIndex;
  const preserved = preservedBefore(view, firstKeptIndex, pairs, keepsRequest ? [request] : []);
  const preservedIndices = [...preserved].sort((a, b) => a - b);
  const compactedIndices: number[] = [];
  for (let i = 0; i < firstKeptIndex; i++) if (!preserved.has(i)) compactedIndices.push(i);

  const keptTokens = sumTokens(view, preservedIndices) + sumTokens(view, range(firstKeptIndex, n));
  if (keptTokens > options.budget) {
    throw new CompactionError(
      ErrorCodes.CUT_REFUSED,
      `Plugin '${plugin}' chose a cut that keeps ${keptTokens} tokens verbatim, more than the budget of ${options.budget} tokens.`,
      { plugin, hint: "Keep fewer recent messages (e.g. lower keepRecentTokens), or raise the context window." },
    );
  }

  let turnStartIndex = -1;
  if (firstKeptIndex < n && facts[firstKeptIndex]?.kind !== "user") {
    const start = findTurnStartIndex(facts, firstKeptIndex - 1);
    // The newest turn split keeps its request (preserved above); what follows it is the prefix.
    const splitsNewest = start === request && !facts[start]?.pinned && compactedIndices.some((i) => i > start);
    if (start >= 0 && (!preserved.has(start) || splitsNewest)) turnStartIndex = start;
  }

  return {
    ...proposed,
    firstKeptIndex,
    preservedIndices,
    compactedIndices,
    isSplitTurn: turnStartIndex >= 0,
    turnStartIndex,
    keptTokens,
    compactedTokens: sumTokens(view, compactedIndices),
    selectedBy: plugin,
    repairs,
  };
}

/** Moves the cut back until no kept message answers a call issued before the cut. */
function pullBackToToolCalls(first: number, n: number, pairs: ToolPairs): number {
  let cut = first;
  let scanFrom = n;
  // Each pass scans only the messages newly brought into the kept part.
  while (scanFrom > cut) {
    let next = cut;
    for (let i = cut; i < scanFrom; i++) for (const call of pairs.callsOf[i] ?? []) if (call < next) next = call;
    scanFrom = cut;
    cut = next;
  }
  return cut;
}

function* range(from: number, to: number): Generator<number> {
  for (let i = from; i < to; i++) yield i;
}
