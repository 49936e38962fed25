import { type Compactor, createCompactor, type PiMessage } from "@compaction/core";
import type { SessionEntry } from "@compaction/transcript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BranchCompactEvent, compactBranch, compactionWindow, inferTrigger, type PiCompactionReason } from "./compact-branch.js";
import { type CapturedCompaction, capturePiCompaction, copyFixture, type SessionDir } from "./test-support/pi-session.js";

function eventWith(tokensBefore: number, reserveTokens: number, customInstructions?: string): BranchCompactEvent {
  return {
    branchEntries: [],
    signal: new AbortController().signal,
    preparation: { tokensBefore, settings: { reserveTokens } },
    ...(customInstructions === undefined ? {} : { customInstructions }),
  };
}

describe("inferTrigger", () => {
  it.each([
    { case: "past pi's threshold, no instructions", tokensBefore: 190_000, instructions: undefined, trigger: "auto" },
    { case: "at pi's threshold exactly", tokensBefore: 183_616, instructions: undefined, trigger: "manual" },
    { case: "below pi's threshold", tokensBefore: 50_000, instructions: undefined, trigger: "manual" },
    { case: "past the threshold with /compact instructions", tokensBefore: 190_000, instructions: "keep the API notes", trigger: "manual" },
    { case: "/compact with empty instructions", tokensBefore: 190_000, instructions: "", trigger: "manual" },
  ])("is $trigger $case", ({ tokensBefore, instructions, trigger }) => {
    expect(inferTrigger(eventWith(tokensBefore, 16_384, instructions), 200_000)).toBe(trigger);
  });
});

describe("inferTrigger with pi's reason (pi 0.79.10 and later)", () => {
  it.each([
    { reason: "manual", tokensBefore: 190_000, trigger: "manual" },
    { reason: "threshold", tokensBefore: 50_000, trigger: "auto" },
    { reason: "overflow", tokensBefore: 50_000, trigger: "auto" },
  ] as const)("is $trigger for reason $reason, whatever the size ($tokensBefore tokens)", ({ reason, tokensBefore, trigger }) => {
    expect(inferTrigger({ ...eventWith(tokensBefore, 16_384), reason }, 200_000)).toBe(trigger);
  });
});

describe("compactionWindow", () => {
  it.each([
    { reason: undefined, tokensBefore: 180_000, window: 1_000_000, expected: 1_000_000 },
    { reason: "manual", tokensBefore: 180_000, window: 1_000_000, expected: 1_000_000 },
    { reason: "threshold", tokensBefore: 990_000, window: 1_000_000, expected: 1_000_000 },
    { reason: "overflow", tokensBefore: 180_000, window: 1_000_000, expected: 180_000 },
    { reason: "overflow", tokensBefore: 1_200_000, window: 1_000_000, expected: 1_000_000 },
    { reason: "overflow", tokensBefore: 0, window: 1_000_000, expected: 1_000_000 },
  ] as Array<{ reason: PiCompactionReason | undefined; tokensBefore: number; window: number; expected: number }>)(
    "is $expected for reason $reason with $tokensBefore tokens in a $window-token window",
    ({ reason, tokensBefore, window, expected }) => {
      const event = { ...eventWith(tokensBefore, 16_384), ...(reason === undefined ? {} : { reason }) };
      expect(compactionWindow(event, window)).toBe(expected);
    },
  );
});

describe("compactBranch with the event pi built for the real session", () => {
  let session: SessionDir;
  let captured: CapturedCompaction;

  beforeAll(async () => {
    session = copyFixture();
    session.config({ preset: "safeguard", tokenizer: { counter: "estimate" } });
    captured = await capturePiCompaction(session, 200_000, "  keep the theme decisions  ");
  });
  afterAll(() => {
    captured.runtime.dispose();
    session.remove();
  });

  async function run() {
    const compactor = await createCompactor<PiMessage>({ cwd: session.dir, adapter: "pi" });
    try {
      return await compactBranch(compactor, captured.event, { contextWindow: 200_000, agent: "coder" });
    } finally {
      compactor.dispose();
    }
  }

  it("compacts the messages pi would send for the branch", async () => {
    const { messages } = await run();
    expect(messages).toEqual(captured.runtime.sessions.buildSessionContext().messages);
  });

  it("passes the /compact instructions, trimmed, as the focus and records a manual trigger", async () => {
    const { result, trigger } = await run();
    expect(trigger).toBe("manual");
    expect(result.event?.customInstruction).toBe("keep the theme decisions");
    expect(result.event?.trigger).toBe("manual");
  });

  it("plans pi's entry from the result", async () => {
    const { result, plan } = await run();
    expect(result.status).toBe("compacted");
    expect(plan.ok).toBe(true);
  });

  it("starts Before from the After our last compaction on the branch recorded, plus what followed it", async () => {
    const entries = captured.event.branchEntries as unknown as SessionEntry[];
    const last = entries.at(-1) as SessionEntry;
    const kept = entries.at(-6) as SessionEntry;
    const at = Date.parse(last.timestamp) + 1000;
    const ours = {
      type: "compaction",
      id: "anch0001",
      parentId: last.id,
      timestamp: new Date(at).toISOString(),
      summary: "earlier work",
      firstKeptEntryId: kept.id,
      tokensBefore: 150_000,
      details: { type: "compaction", strategy: "safeguard", tokensBeforeCompaction: 150_000, tokensAfterCompaction: 12_345 },
    };
    const next = { type: "message", id: "anch0002", parentId: "anch0001", timestamp: new Date(at + 1000).toISOString(), message: { role: "user", content: "go on", timestamp: at + 1000 } };
    const event = { ...captured.event, branchEntries: [...entries, ours, next] } as unknown as BranchCompactEvent;
    const compactor = await createCompactor<PiMessage>({ cwd: session.dir, adapter: "pi" });
    try {
      const { result, messages } = await compactBranch(compactor, event, { contextWindow: 200_000 });
      const anchor = { tokens: 12_345, lastIndex: messages.length - 2 };
      expect(result.tokensBefore).toBe(compactor.tokens.contextTokens(messages, anchor).tokens);
      expect(result.tokensBefore).not.toBe(compactor.tokens.contextTokens(messages).tokens);
    } finally {
      compactor.dispose();
    }
  });
});

describe("compactBranch with the layered preset (suffixOnly)", () => {
  let session: SessionDir;
  let captured: CapturedCompaction;
  let auto: BranchCompactEvent;
  let messages: PiMessage[];
  let tokens: number;

  beforeAll(async () => {
    session = copyFixture();
    session.config({ preset: "layered", tokenizer: { counter: "estimate" } });
    captured = await capturePiCompaction(session, 200_000);
    // pi's threshold is the window minus its reserveTokens: a large reserve makes the run automatic.
    const event = captured.event;
    auto = { ...event, preparation: { ...event.preparation, settings: { ...event.preparation.settings, reserveTokens: 10_000_000 } } };
    messages = captured.runtime.sessions.buildSessionContext().messages as PiMessage[];
    tokens = await withCompactor((compactor) => compactor.tokens.contextTokens(messages).tokens);
  });
  afterAll(() => {
    captured.runtime.dispose();
    session.remove();
  });

  async function withCompactor<R>(use: (compactor: Compactor<PiMessage>) => R | Promise<R>): Promise<R> {
    const compactor = await createCompactor<PiMessage>({ cwd: session.dir, adapter: "pi" });
    try {
      return await use(compactor);
    } finally {
      compactor.dispose();
    }
  }

  const windowAt = (ratio: number) => Math.round(tokens / ratio);

  it("prunes only, with no cut pi can record, when the host does not ask for suffixOnly (the old behaviour)", async () => {
    const result = await withCompactor((c) => c.compact({ messages, contextWindow: windowAt(0.84), trigger: "auto" }));
    expect([result.status, result.cut, result.event?.layer]).toEqual(["compacted", null, "prune"]);
  });

  it("declines an automatic run between pruneThreshold and summarizeThreshold as a noop that says why", async () => {
    const { result, plan, trigger } = await withCompactor((c) => compactBranch(c, auto, { contextWindow: windowAt(0.84) }));
    expect(trigger).toBe("auto");
    expect(result.status).toBe("noop");
    expect(result.reason).toMatch(/layered: the context is at 84% of the window, not above summarizeThreshold 88%; layer 1 \(pruning\) does not run/);
    expect(plan.ok).toBe(false);
  });

  it("summarises above summarizeThreshold with a cut pi's entry records", async () => {
    const { result, plan } = await withCompactor((c) => compactBranch(c, auto, { contextWindow: windowAt(0.92) }));
    expect(result.status).toBe("compacted");
    expect(result.event?.layer).toBe("summarize");
    expect(plan.ok).toBe(true);
  });
});
