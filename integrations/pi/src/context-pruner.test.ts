import { type Compactor, createCompactor, type PiMessage } from "@compaction/core";
import { isPrunedMarker } from "@compaction/plugin-layered";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContextPruner, layeredOptionsOf } from "./context-pruner.js";
import { copyFixture, fixtureBranch, type SessionDir } from "./test-support/pi-session.js";

let session: SessionDir;
let messages: PiMessage[];
const compactors: Compactor<PiMessage>[] = [];

beforeAll(() => {
  session = copyFixture();
  ({ messages } = fixtureBranch(session));
});
afterAll(() => {
  for (const compactor of compactors) compactor.dispose();
  session.remove();
});

async function compactorWith(layered: Record<string, unknown> = {}): Promise<Compactor<PiMessage>> {
  session.config({ tokenizer: { counter: "estimate" }, options: { layered } });
  const compactor = await createCompactor<PiMessage>({ cwd: session.dir, adapter: "pi" });
  compactors.push(compactor);
  return compactor;
}

/** What pi hands a `context` handler: a fresh deep copy before every model call. */
const piCopy = (list: readonly PiMessage[]): PiMessage[] => structuredClone(list) as PiMessage[];

function userMessage(tokens: number): PiMessage {
  return { role: "user", content: [{ type: "text", text: "word ".repeat(Math.ceil(tokens * 0.8)) }], timestamp: 1_800_000_000_000 + tokens } as PiMessage;
}

function prunedIndices(sent: readonly PiMessage[]): number[] {
  return sent.flatMap((m, i) => (m.role === "toolResult" && isPrunedMarker((m.content[0] as { text?: string })?.text ?? "") ? [i] : []));
}

describe("ContextPruner on the real session (about 125k counted tokens, 65k of tool output)", () => {
  it("replaces the outputs older than the protected tail with markers and leaves every other message as it was", async () => {
    const compactor = await compactorWith();
    const options = layeredOptionsOf(compactor);
    const input = piCopy(messages);
    const pruned = new ContextPruner(compactor).prune(input, { contextWindow: 150_000 });
    if (pruned === undefined) throw new Error("nothing was pruned");

    let newer = 0;
    for (let i = input.length - 1; i >= 0; i--) {
      const original = input[i] as PiMessage;
      const sent = pruned.messages[i] as PiMessage;
      const protectedTail = newer < options.pruneProtectTokens;
      newer += compactor.tokens.count(original);
      if (sent === original) continue;
      expect(original.role).toBe("toolResult");
      expect(protectedTail).toBe(false);
      expect(sent.role === "toolResult" && isPrunedMarker((sent.content[0] as { text: string }).text)).toBe(true);
    }
    expect(pruned.prunedCount).toBe(prunedIndices(pruned.messages).length);
    expect(pruned.tokensSaved).toBeGreaterThanOrEqual(options.pruneMinSavings);
  });

  it("does not change the messages it was given", async () => {
    const compactor = await compactorWith();
    const input = piCopy(messages);
    new ContextPruner(compactor).prune(input, { contextWindow: 150_000 });
    expect(input).toEqual(messages);
  });

  it("sends the messages as they are while the context is at or below pruneThreshold of the window", async () => {
    const compactor = await compactorWith();
    expect(new ContextPruner(compactor).prune(piCopy(messages), { contextWindow: 1_000_000 })).toBeUndefined();
  });

  it("sends the messages as they are while the tool outputs hold no more than pruneMinToolTokens", async () => {
    const compactor = await compactorWith({ pruneMinToolTokens: 100_000 });
    expect(new ContextPruner(compactor).prune(piCopy(messages), { contextWindow: 150_000 })).toBeUndefined();
  });

  it("counts the system prompt into the context size", async () => {
    const compactor = await compactorWith();
    const total = compactor.tokens.total(messages);
    const contextWindow = Math.ceil(total / 0.8) + 1_000; // just below the threshold without a system prompt
    const pruner = new ContextPruner(compactor);
    expect(pruner.prune(piCopy(messages), { contextWindow })).toBeUndefined();
    const pruned = pruner.prune(piCopy(messages), { contextWindow, systemPrompt: "You are a coding agent. ".repeat(1_000) });
    expect(pruned?.ratio).toBeGreaterThan(0.8);
    expect(pruned?.prunedCount).toBeGreaterThan(0);
  });

  // The real session's newest outputs are small: with a 5k pruneMinSavings, 4k more tokens free
  // too little to prune more, 40k more enough.
  it("keeps the same outputs pruned when the outputs that newly left the tail would save less than pruneMinSavings", async () => {
    const compactor = await compactorWith({ pruneMinSavings: 5_000 });
    const pruner = new ContextPruner(compactor);
    const first = prunedIndices(pruner.prune(piCopy(messages), { contextWindow: 150_000 })?.messages ?? []);
    const longer = [...messages, userMessage(4_000)];
    const stateless = prunedIndices(new ContextPruner(compactor).prune(piCopy(longer), { contextWindow: 150_000 })?.messages ?? []);
    expect(stateless.length).toBeGreaterThan(first.length); // a fresh pruner would prune more
    const second = prunedIndices(pruner.prune(piCopy(longer), { contextWindow: 150_000 })?.messages ?? []);
    expect(second).toEqual(first);
  });

  it("prunes the outputs that left the tail once together they save at least pruneMinSavings", async () => {
    const compactor = await compactorWith({ pruneMinSavings: 5_000 });
    const pruner = new ContextPruner(compactor);
    const first = prunedIndices(pruner.prune(piCopy(messages), { contextWindow: 150_000 })?.messages ?? []);
    const longer = [...messages, userMessage(40_000)];
    const stateless = new ContextPruner(compactor, { ...layeredOptionsOf(compactor), pruneMinSavings: 0 }).prune(piCopy(longer), { contextWindow: 150_000 });
    const newlySaved = (stateless?.tokensSaved ?? 0) - (pruner.prune(piCopy(messages), { contextWindow: 150_000 })?.tokensSaved ?? 0);
    expect(newlySaved).toBeGreaterThanOrEqual(5_000);
    const second = prunedIndices(pruner.prune(piCopy(longer), { contextWindow: 150_000 })?.messages ?? []);
    expect(second.length).toBeGreaterThan(first.length);
    expect(second).toEqual(expect.arrayContaining(first));
  });

  it("starts over after reset, like a new pruner", async () => {
    const compactor = await compactorWith();
    const pruner = new ContextPruner(compactor);
    pruner.prune(piCopy(messages), { contextWindow: 150_000 });
    pruner.reset();
    const longer = [...messages, userMessage(4_000)];
    const afterReset = prunedIndices(pruner.prune(piCopy(longer), { contextWindow: 150_000 })?.messages ?? []);
    const fresh = prunedIndices(new ContextPruner(compactor).prune(piCopy(longer), { contextWindow: 150_000 })?.messages ?? []);
    expect(afterReset).toEqual(fresh);
  });
});
