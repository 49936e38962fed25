import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createPiAdapter, type PiMessage } from "../messages/pi-adapter.js";
import { assistant, toolResult, user, words } from "../testing/pi-messages.js";
import { createEstimateCounter } from "../tokens/estimate-counter.js";
import { Compactor } from "./compactor.js";
import type { CompactionPlugin } from "./plugin.js";

const WINDOW = 8_000;
const RESERVE = 2_000;

function compactor(plugins: CompactionPlugin[] = []) {
  return new Compactor<PiMessage>({ adapter: createPiAdapter(), tokenCounter: createEstimateCounter(), plugins, contextWindow: WINDOW, reserveTokens: RESERVE });
}

/** One step of a conversation: a user request, or a tool call with an output of `size` words. */
type Step = { kind: "user"; size: number } | { kind: "tool"; size: number };
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("user" as const), size: fc.integer({ min: 1, max: 60 }) }),
  fc.record({ kind: fc.constant("tool" as const), size: fc.integer({ min: 1, max: 900 }) }),
);

/** The messages each step appends (a tool step: the call and its output). */
function grow(steps: readonly Step[]): PiMessage[][] {
  let call = 0;
  return steps.map((step) => {
    if (step.kind === "user") return [user(words(step.size))];
    call += 1;
    return [assistant("", [{ id: `c${call}` }]), toolResult(`c${call}`, words(step.size))];
  });
}

const startsWith = (request: readonly PiMessage[], previous: readonly PiMessage[]) =>
  request.length >= previous.length && previous.every((m, i) => JSON.stringify(m) === JSON.stringify(request[i]));

describe("RequestShaper", () => {
  it("sends the context itself while it fits", () => {
    const c = compactor();
    const shaper = c.createRequestShaper();
    const messages = [user("look"), assistant("", [{ id: "c1" }]), toolResult("c1", "short")];
    const shaped = shaper.shape(messages);
    expect(shaped.messages).toBe(messages);
    expect(shaped).toMatchObject({ fits: true, shrunk: [], dropped: [] });
  });

  it("keeps a shrunk message's form on later requests, and frees room for them when it must shrink", () => {
    const c = compactor();
    const shaper = c.createRequestShaper();
    // The big output is an older step's (the newest step, the one being answered, is never shrunk for room).
    const context: PiMessage[] = [user("start"), assistant("", [{ id: "c1" }]), toolResult("c1", words(8_000)), assistant("read it"), user("go on")];
    const first = shaper.shape(context);
    expect(first.shrunk.map((s) => s.index)).toEqual([2]);
    // Room was freed below the budget, for what comes next (0.6 of the auto-compaction threshold).
    expect(first.tokens).toBeLessThan(first.budget * 0.75);
    context.push(assistant("", [{ id: "c2" }]), toolResult("c2", words(200)));
    const second = shaper.shape(context);
    expect(second.messages.slice(0, first.messages.length)).toEqual(first.messages);
    expect(second.messages[2]).toBe(first.messages[2]);
    expect(second.shrunk.map((s) => s.index)).toEqual([2]);
  });

  it("starts over when the context changed other than at its end (a compaction)", () => {
    const c = compactor();
    const shaper = c.createRequestShaper();
    const big = [user("start"), assistant("", [{ id: "c1" }]), toolResult("c1", words(8_000))];
    expect(shaper.shape(big).shrunk).toHaveLength(1);
    const compacted = [user("summary of it all"), assistant("ok")];
    const shaped = shaper.shape(compacted);
    expect(shaped.messages).toBe(compacted);
    expect(shaped.shrunk).toEqual([]);
  });

  it("treats equal copies of the messages (a host that rebuilds them for every call) as the same context", () => {
    const c = compactor();
    const shaper = c.createRequestShaper();
    const context = [user("start"), assistant("", [{ id: "c1" }]), toolResult("c1", words(8_000))];
    const first = shaper.shape(context);
    const copy = structuredClone(context);
    copy.push(user("next"));
    const second = shaper.shape(copy);
    expect(second.messages[2]).toBe(first.messages[2]);
  });

  it("changes what it sent before only when what it sent plus what was appended no longer fits, and fits whenever shapeRequest does (generated conversations)", () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 40 }), (steps) => {
        const c = compactor();
        const shaper = c.createRequestShaper();
        const context: PiMessage[] = [];
        let previous: readonly PiMessage[] | null = null;
        let previousTokens = 0;
        let appended = 0;
        for (const added of grow(steps)) {
          context.push(...added);
          appended += added.reduce((sum, m) => sum + c.tokens.count(m), 0);
          const shaped = shaper.shape(context);
          const stateless = c.shapeRequest(context);
          expect(shaped.fits).toBe(stateless.fits);
          if (shaped.fits) expect(shaped.tokens).toBeLessThanOrEqual(shaped.budget);
          if (previous !== null && !startsWith(shaped.messages, previous)) {
            // A new step: what was sent before and what came since did not fit together.
            expect(previousTokens + appended).toBeGreaterThan(shaped.budget);
          }
          previous = shaped.messages;
          previousTokens = shaped.tokens;
          appended = 0;
        }
      }),
      { numRuns: 150 },
    );
  });

  it("runs the plugins' taps on every request", () => {
    const tagged: CompactionPlugin = {
      name: "tag",
      apply: (x) => x.hooks.shapeRequest.tap("tag", (messages) => messages.map((m) => ({ ...m, tagged: true }) as PiMessage)),
    };
    const c = compactor([tagged]);
    const shaped = c.createRequestShaper().shape([user("hi")]);
    expect(shaped.shapedBy).toEqual(["tag"]);
    expect((shaped.messages[0] as PiMessage & { tagged?: boolean }).tagged).toBe(true);
  });
});
