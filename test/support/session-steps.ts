/**
 * Generated agent sessions for the never-stuck property test and the soak benchmark: user
 * requests, assistant steps with parallel tool calls (some failing), plain answers, pinned
 * messages and, now and then, a huge tool output, in any of the three built-in formats.
 */
import type { ContextManager } from "@compaction/context-manager";
import { builders, type Format } from "@compaction/core/testing";
import fc from "fast-check";
import { requestProblems } from "./never-stuck.js";

export type Step =
  | { readonly kind: "user"; readonly words: number; readonly pinned: boolean }
  | { readonly kind: "tools"; readonly outputs: readonly { readonly words: number; readonly isError: boolean }[] }
  | { readonly kind: "answer"; readonly words: number }
  | { readonly kind: "huge"; readonly tokens: number };

export const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("user" as const), words: fc.integer({ min: 1, max: 400 }), pinned: fc.constant(false) }) },
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant("tools" as const),
      outputs: fc.array(fc.record({ words: fc.integer({ min: 0, max: 2500 }), isError: fc.boolean() }), { minLength: 1, maxLength: 4 }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("answer" as const), words: fc.integer({ min: 1, max: 600 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("pinned" as const) }).map(() => ({ kind: "user" as const, words: 20, pinned: true })) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("huge" as const), tokens: fc.integer({ min: 20_000, max: 120_000 }) }) },
);

/** `n` words of numbered text (about 1.3 tokens each by chars/4). */
function text(label: string, n: number): string {
  let out = label;
  for (let i = 0; i < n; i++) out += ` w${i % 97}`;
  return out;
}

export interface RunOutcome {
  readonly steps: number;
  readonly compactions: number;
  readonly problems: readonly string[];
}

/**
 * Plays `steps` into the manager (a session starts with a user request), checking after every
 * step what `send()` would send: no tool result without its call, every Anthropic tool_use
 * answered in the next message, the newest user message present, pinned messages present, and
 * after a compaction, the request within the budget. Returns the first problems found.
 */
export async function playSession<T>(manager: ContextManager<T>, format: Format, steps: readonly Step[]): Promise<RunOutcome> {
  const b = builders(format);
  const adapter = manager.compactor.adapter;
  const facts = manager.compactor.facts;
  const budget = manager.budget;
  let newest = "start the work";
  const pinnedTexts: string[] = [];
  let call = 0;
  let compactions = 0;
  let played = 0;
  const system = b.system("You are a coding agent.");
  await manager.append([...(system === undefined ? [] : [system]), b.user(newest) as T]);
  for (const step of steps) {
    played += 1;
    let added: unknown[];
    switch (step.kind) {
      case "user": {
        newest = text(`request ${played}${step.pinned ? " (pinned)" : ""}`, step.words);
        const message = b.user(newest);
        if (step.pinned) pinnedTexts.push(newest);
        added = [step.pinned ? b.pin(message) : message];
        break;
      }
      case "answer":
        added = [b.assistant(text(`answer ${played}`, step.words))];
        break;
      case "tools": {
        const calls = step.outputs.map(() => ({ id: `call_${++call}` }));
        added = [
          b.assistant(`step ${played}`, calls),
          ...b.toolResults(step.outputs.map((o, i) => ({ id: calls[i]!.id, text: text(`output ${played}.${i}`, o.words), isError: o.isError }))),
        ];
        break;
      }
      case "huge": {
        const id = `call_${++call}`;
        added = [b.assistant(`reading the log ${played}`, [{ id }]), ...b.toolResults([{ id, text: "L".repeat(step.tokens * 4) }])];
        break;
      }
    }
    await manager.append(added as T[]);
    const result = await manager.afterResponse();
    const sent = manager.requestMessages();
    const problems = requestProblems(adapter, sent, newest);
    for (const pinned of pinnedTexts) if (!sent.some((m) => facts.of(m).text === pinned)) problems.push(`pinned message ${JSON.stringify(pinned.slice(0, 30))} missing`);
    if (result?.status === "compacted") {
      compactions += 1;
      const tokens = manager.compactor.tokens.total(sent);
      if (tokens > budget) problems.push(`after a compaction the request is ${tokens} tokens, over the budget of ${budget}`);
    }
    if (problems.length > 0) return { steps: played, compactions, problems: problems.map((p) => `step ${played} (${step.kind}): ${p}`) };
  }
  return { steps: played, compactions, problems: [] };
}
