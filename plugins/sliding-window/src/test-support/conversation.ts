import { type Builders, words } from "@compaction/core/testing";

/** One assistant step: some text and `calls` tool calls, each answered with `resultWords` words. */
export interface StepSpec {
  readonly words: number;
  readonly calls: number;
  readonly resultWords: number;
}

export interface TurnSpec {
  readonly userWords: number;
  readonly steps: readonly StepSpec[];
  readonly pinned?: boolean;
}

/**
 * A conversation in `b`'s format: an optional system prompt (only formats that keep it in the
 * messages get one), then for each turn a user message followed by its steps. Call ids are unique.
 */
export function conversation(b: Builders, turns: readonly TurnSpec[], system?: string): unknown[] {
  const messages: unknown[] = [];
  const prompt = system === undefined ? undefined : b.system(system);
  if (prompt !== undefined) messages.push(prompt);
  let id = 0;
  turns.forEach((turn, t) => {
    const user = b.user(`turn ${t}: ${words(turn.userWords, "ask")}`);
    messages.push(turn.pinned === true ? b.pin(user) : user);
    for (const step of turn.steps) {
      const calls = Array.from({ length: step.calls }, () => ({ id: `call_${id++}` }));
      messages.push(b.assistant(words(step.words, "reply"), calls));
      if (calls.length > 0) messages.push(...b.toolResults(calls.map((c) => ({ id: c.id, text: words(step.resultWords, "out") }))));
    }
  });
  return messages;
}

/** `n` plain turns of a user message and one assistant reply, `size` words each. */
export function plainTurns(n: number, size = 20): TurnSpec[] {
  return Array.from({ length: n }, () => ({ userWords: size, steps: [{ words: size, calls: 0, resultWords: 0 }] }));
}
