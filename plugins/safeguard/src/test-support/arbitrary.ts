/** fast-check arbitraries: well-formed conversations as plain specs, built in any format. */
import type { Builders } from "@compaction/core/testing";
import { words } from "@compaction/core/testing";
import fc from "fast-check";
import type { Message } from "./conversation.js";

export interface CallSpecArb {
  readonly tool: "bash" | "read" | "edit";
  readonly outputWords: number;
  readonly isError: boolean;
}

export interface StepSpec {
  readonly textWords: number;
  readonly calls: readonly CallSpecArb[];
}

export interface TurnSpecArb {
  readonly askWords: number;
  readonly pinned: boolean;
  readonly steps: readonly StepSpec[];
}

export interface ConversationSpec {
  readonly system: boolean;
  readonly turns: readonly TurnSpecArb[];
}

const callArb: fc.Arbitrary<CallSpecArb> = fc.record({
  tool: fc.constantFrom("bash", "read", "edit"),
  outputWords: fc.integer({ min: 1, max: 120 }),
  isError: fc.boolean(),
});

const stepArb: fc.Arbitrary<StepSpec> = fc.record({
  textWords: fc.integer({ min: 0, max: 40 }),
  calls: fc.array(callArb, { maxLength: 2 }),
});

const turnArb: fc.Arbitrary<TurnSpecArb> = fc.record({
  askWords: fc.integer({ min: 1, max: 30 }),
  pinned: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 4 }),
});

/** A conversation of 1 to `maxTurns` turns, each a user ask and one to four assistant steps. */
export function conversationArb(maxTurns = 12): fc.Arbitrary<ConversationSpec> {
  return fc.record({ system: fc.boolean(), turns: fc.array(turnArb, { minLength: 1, maxLength: maxTurns }) });
}

/** The messages of `spec` in the builders' format. User asks start with `Request <n>:`. */
export function buildConversation(b: Builders, spec: ConversationSpec): Message[] {
  const messages: Message[] = [];
  const system = spec.system ? b.system("You are a careful coding agent.") : undefined;
  if (system !== undefined) messages.push(system);
  let callId = 0;
  spec.turns.forEach((turn, n) => {
    const ask = b.user(`Request ${n}: ${words(turn.askWords, "please")}`);
    messages.push(turn.pinned ? b.pin(ask) : ask);
    for (const step of turn.steps) {
      const calls = step.calls.map((call) => {
        const id = `call${callId++}`;
        const args = call.tool === "bash" ? { command: `make step${callId}` } : { path: `src/m${callId}.ts` };
        return { spec: call, id, name: call.tool, args };
      });
      messages.push(b.assistant(step.textWords > 0 ? `Step: ${words(step.textWords, "work")}` : "", calls));
      if (calls.length > 0) {
        messages.push(
          ...b.toolResults(
            calls.map((call) => ({
              id: call.id,
              name: call.name,
              text: call.spec.isError ? `Error: ${words(call.spec.outputWords, "bad")}` : words(call.spec.outputWords, "out"),
              isError: call.spec.isError,
            })),
          ),
        );
      }
    }
  });
  return messages;
}
