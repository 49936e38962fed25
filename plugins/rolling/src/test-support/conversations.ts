/**
 * Test helpers: random conversations in every format (for fast-check), and the invariants
 * every rolling result must keep, checked against the input messages by identity.
 */
import { checkCut, type MessageAdapter, type MessageFacts, type MessageView } from "@compaction/core";
import { builders, type Format, words } from "@compaction/core/testing";
import fc from "fast-check";

export interface CallSpec {
  readonly answered: boolean;
  readonly resultWords: number;
}
export interface StepSpec {
  readonly textWords: number;
  readonly calls: readonly CallSpec[];
  readonly pinned: boolean;
  readonly pinResults: boolean;
}
export interface TurnSpec {
  readonly userWords: number;
  readonly pinned: boolean;
  readonly steps: readonly StepSpec[];
}
export interface ConversationSpec {
  readonly system: boolean;
  readonly timestamps: boolean;
  readonly turns: readonly TurnSpec[];
}

const rarely = fc.integer({ min: 0, max: 29 }).map((n) => n === 0);

/** Turns of a user message and assistant steps; steps issue 0–3 calls, a few left unanswered; a few messages pinned. */
export const arbConversation: fc.Arbitrary<ConversationSpec> = fc.record({
  system: fc.boolean(),
  timestamps: fc.boolean(),
  turns: fc.array(
    fc.record({
      userWords: fc.integer({ min: 1, max: 40 }),
      pinned: rarely,
      steps: fc.array(
        fc.record({
          textWords: fc.integer({ min: 0, max: 40 }),
          calls: fc.array(
            fc.record({ answered: fc.integer({ min: 0, max: 7 }).map((n) => n !== 0), resultWords: fc.integer({ min: 0, max: 80 }) }),
            { maxLength: 3 },
          ),
          pinned: rarely,
          pinResults: rarely,
        }),
        { maxLength: 4 },
      ),
    }),
    { maxLength: 10 },
  ),
});

const BASE_TIME = Date.UTC(2026, 2, 1, 9, 0, 0);

/** Builds the conversation in `format`. Timestamps are a minute apart when `spec.timestamps`, absent otherwise. */
export function buildConversation(format: Format, spec: ConversationSpec): unknown[] {
  const b = builders(format);
  const out: unknown[] = [];
  let id = 0;
  if (spec.system) {
    const system = b.system(words(12, "policy"));
    // pi and Anthropic keep the system prompt outside the messages: a pinned note stands in for it.
    out.push(system ?? b.pin(b.user(words(12, "policy"))));
  }
  for (const turn of spec.turns) {
    const user = b.user(words(turn.userWords, "ask"));
    out.push(turn.pinned ? b.pin(user) : user);
    for (const step of turn.steps) {
      const ids = step.calls.map(() => `call_${id++}`);
      const assistant = b.assistant(words(step.textWords, "reply"), ids.map((callId) => ({ id: callId })));
      out.push(step.pinned ? b.pin(assistant) : assistant);
      const results = b.toolResults(
        step.calls.flatMap((call, k) => (call.answered ? [{ id: ids[k] as string, text: words(call.resultWords, "out") }] : [])),
      );
      for (const result of results) out.push(step.pinResults ? b.pin(result) : result);
    }
  }
  return out.map((message, i) => {
    const { timestamp: _drop, ...rest } = message as Record<string, unknown>;
    return spec.timestamps ? { ...rest, timestamp: BASE_TIME + i * 60_000 } : rest;
  });
}

/** Problems with `output` as the result of rolling `input`; empty when every invariant holds. */
export function invariantProblems<T>(adapter: MessageAdapter<T>, input: readonly T[], output: readonly T[]): string[] {
  const problems: string[] = [];
  const inInput = new Set<unknown>(input);
  const kept = output.filter((m) => inInput.has(m));
  const keptSet = new Set<unknown>(kept);
  const facts = new Map<unknown, MessageFacts>(input.map((m) => [m, adapter.readFacts(m)]));
  const f = (m: T) => facts.get(m) as MessageFacts;

  // Kept messages keep their order.
  let cursor = 0;
  for (const m of kept) {
    while (cursor < input.length && input[cursor] !== m) cursor++;
    if (cursor === input.length) problems.push("kept messages are out of order");
    cursor++;
  }
  for (const [i, m] of input.entries()) {
    if ((f(m).kind === "system" || f(m).pinned) && !keptSet.has(m)) problems.push(`${f(m).kind} message ${i} (pinned or system) was dropped`);
  }
  // No tool call without its results, no result without its call.
  const issuedBy = new Map<string, number[]>();
  const answeredBy = new Map<string, number[]>();
  input.forEach((m, i) => {
    for (const c of f(m).toolCalls) issuedBy.set(c.id, [...(issuedBy.get(c.id) ?? []), i]);
    for (const id of f(m).toolResultIds) answeredBy.set(id, [...(answeredBy.get(id) ?? []), i]);
  });
  for (const [id, callers] of issuedBy) {
    const partners = [...callers, ...(answeredBy.get(id) ?? [])];
    const keptCount = partners.filter((i) => keptSet.has(input[i])).length;
    if (keptCount !== 0 && keptCount !== partners.length) problems.push(`tool call ${id} was separated from its results`);
  }
  return problems;
}

/**
 * An independent oracle, built on the core's cut check: the smallest cut that leaves at least
 * `minKeepMessages` of the newest messages and the newest user message, needs no repair, compacts something and keeps at most
 * `targetTokens` (plus `noteTokens`). `null` when the context already fits; `undefined` when no cut does.
 */
export function smallestCutMeetingTarget(
  view: MessageView,
  options: { targetTokens: number; minKeepMessages: number; noteTokens?: number },
): number | null | undefined {
  const n = view.facts.length;
  const total = view.tokens.reduce((a, b) => a + b, 0);
  if (total <= options.targetTokens) return null;
  // The newest user message is never evicted: no cut after it.
  let request = n;
  for (let i = n - 1; i >= 0; i--) if (view.facts[i]?.kind === "user") { request = i; break; }
  const lastCut = Math.min(n - Math.min(options.minKeepMessages, n), request);
  for (let c = 1; c <= lastCut; c++) {
    const cut = checkCut(view, { firstKeptIndex: c }, { plugin: "oracle", budget: Number.POSITIVE_INFINITY });
    if (cut.repairs.length > 0 || cut.compactedIndices.length === 0) continue;
    if (cut.keptTokens + (options.noteTokens ?? 0) <= options.targetTokens) return c;
  }
  return undefined;
}
