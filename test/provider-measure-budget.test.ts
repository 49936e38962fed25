/**
 * The budget in the provider's measure, on the real transcripts: their usage figures are Claude's,
 * which counts about 1.25x what o200k (our counter) counts. Continued with one enormous tool
 * output, every recorded session is compacted by every built-in preset, and the messages it keeps
 * fit the window less the reserve as the provider counts them (at the calibrated ratio), not
 * only by our count; so does the request send-time shaping builds. Before the budget was scaled,
 * every preset left about 226,000 provider tokens (by the After the run itself reported) in a
 * 200,000-token window on the shipped session continued so: a request the provider refuses,
 * compacted again to the same size.
 */
import { type Compactor, createCompactor, type PiMessage, providerMeasure, providerRatio } from "@compaction/core";
import { builders, type Format } from "@compaction/core/testing";
import { CLAUDE_FIXTURES, loadClaudeMessages, loadPiMessages, PI_FIXTURES } from "@compaction/fixtures";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { PRESETS } from "./support/never-stuck.js";
import { tmpProject } from "./support/tmp-project.js";

const WINDOW = 32_000;
const RESERVE = 2_000;

const compactors: Compactor<unknown>[] = [];
afterEach(() => {
  for (const compactor of compactors.splice(0)) compactor.dispose();
});

/** A compactor for a new project with this `.compactionrc.json`, disposed after the test. */
async function compactorWith(config: Record<string, unknown>): Promise<Compactor<unknown>> {
  const compactor = await createCompactor<unknown>({ cwd: tmpProject({ ".compactionrc.json": JSON.stringify(config) }) });
  compactors.push(compactor);
  return compactor;
}

/** Every transcript with provider usage figures (the Codex rollout records none: nothing to calibrate on). */
const FIXTURES: ReadonlyArray<readonly [string, Format, () => unknown[]]> = [
  ...PI_FIXTURES.map((file) => [file, "pi", () => loadPiMessages(file, { context: true })] as const),
  ...CLAUDE_FIXTURES.map((file) => [file, "anthropic", () => loadClaudeMessages(file)] as const),
];

/**
 * The least calibrated ratio each transcript's figures give (1.1 unless listed): Claude Opus 4.5
 * and 4.6 count closer to o200k on the entire-* sessions (1.06 on entire-review, 1.09 on
 * entire-openclaw, measured), so there the test still compares a ratio above 1 with our count.
 */
const CALIBRATED_ABOVE: Readonly<Record<string, number>> = {
  "claude-code-entire-review-847ff7d2.jsonl": 1.05,
  "claude-code-entire-openclaw-ca8cc13b.jsonl": 1.05,
};

/** About `tokens` o200k tokens, in numbered lines. */
function output(tokens: number): string {
  const lines = Math.ceil(tokens / 12);
  return Array.from({ length: lines }, (_, i) => `testlog line ${String(i).padStart(7, "0")} passed in 12 ms`).join("\n");
}

function continued(format: Format, load: () => unknown[]): unknown[] {
  const b = builders(format);
  return [
    ...load(),
    b.user("Run the whole test suite and tell me which tests fail."),
    b.assistant("Running it.", [{ id: "huge", name: "bash" }]),
    ...b.toolResults([{ id: "huge", text: output(60_000) }]),
  ];
}

describe.each(PRESETS)("the budget in the provider's measure (preset %s)", (preset) => {
  it.each(FIXTURES)("%s: the messages kept fit the window less the reserve as the provider counts them (the calibrated ratio)", async (file, format, load) => {
    const compactor = await compactorWith({ preset, adapter: format, contextWindow: WINDOW, reserveTokens: RESERVE });
    const messages = continued(format, load);
    // The provider's tokens per token of ours in these transcripts' messages (Claude's figures).
    const calibrated = compactor.tokens.calibration(messages).ratio;
    expect(calibrated).toBeGreaterThan(CALIBRATED_ABOVE[file] ?? 1.1);
    const result = await compactor.compact({ messages, trigger: "auto" });
    expect(result.status, result.reason ?? "").toBe("compacted");
    // The messages kept, as the provider counts them, leave the reserve free: for the reply and
    // what no message shows (the system prompt and tools, which the reserve must cover: the
    // Claude Code transcripts' first figures put it at 15,000-30,000 tokens, more than this
    // small window's reserve).
    expect(Math.round((result.countedTokensAfter ?? Number.NaN) * calibrated)).toBeLessThanOrEqual(WINDOW - RESERVE);
    // So does the After the run reports (the event's, which the CLI prints beside the provider's
    // Before): one measure, so a user comparing it with the window sees the context fit.
    expect(result.event?.tokensAfterCompaction).toBeLessThanOrEqual(WINDOW - RESERVE);
    // What send-time shaping (a host that keeps the full transcript) sends fits it too.
    const shaped = compactor.shapeRequest(messages);
    expect(Math.round(compactor.tokens.total(shaped.messages) * calibrated)).toBeLessThanOrEqual(WINDOW - RESERVE);
  });
});

it("sizes a whole request by the calibrated ratio alone: on the real pi sessions, within 5% of the provider's figure for all the messages before it", async () => {
  // The calibration's perMessage term is fitted on the spans between figures; summed over a whole
  // request it overshoots the provider's own figure, which holds the system prompt and tools too.
  // So budgets are sized with the ratio alone (budgetRatioOf), and the reserve covers that fixed part.
  for (const file of PI_FIXTURES) {
    const compactor = await compactorWith({ preset: "safeguard", adapter: "pi" });
    const messages = loadPiMessages(file, { context: true });
    const calibration = compactor.tokens.calibration(messages);
    const { usageTokens: figure, lastUsageIndex } = compactor.tokens.contextBase(messages);
    expect(lastUsageIndex, file).not.toBeNull();
    const covered = messages.slice(0, (lastUsageIndex as number) + 1);
    const counted = compactor.tokens.total(covered);
    const byRatio = counted * compactor.tokens.budgetRatio(messages);
    expect(Math.abs(byRatio / figure - 1), `${file}: ${Math.round(byRatio)} for a figure of ${figure}`).toBeLessThanOrEqual(0.05);
    expect(calibration.perMessage, file).toBeGreaterThan(5);
    expect(providerMeasure(calibration, counted, covered.length), file).toBeGreaterThan(figure);
  }
});

it("leaves the budget as it was when the context carries no usage figure", async () => {
  const compactor = await compactorWith({ preset: "safeguard", adapter: "openai", contextWindow: WINDOW, reserveTokens: RESERVE });
  const b = builders("openai");
  const messages = [b.user("Run the tests."), b.assistant("Running.", [{ id: "t", name: "bash" }]), ...b.toolResults([{ id: "t", text: output(60_000) }])];
  const result = await compactor.compact({ messages, trigger: "auto" });
  expect(result.status, result.reason ?? "").toBe("compacted");
  // No usage figure: the measure is our count, and the context is brought just under the budget.
  expect(result.tokensBefore).toBe(compactor.tokens.total(messages));
  expect(result.tokensAfter).toBeLessThanOrEqual(WINDOW - RESERVE);
  expect(result.tokensAfter).toBeGreaterThan((WINDOW - RESERVE) * 0.8);
});

it("sizes against the calibrated ratio when the newest usage figure is of a request pruned when sent", async () => {
  // A pi session file keeps every output whole; what was sent had old ones pruned, so the newest
  // figure is far below the provider's count of what is stored.
  const compactor = await compactorWith({ preset: "safeguard", adapter: "pi", contextWindow: WINDOW, reserveTokens: RESERVE });
  const messages = loadPiMessages(PI_FIXTURES[0] as string, { context: true }) as PiMessage[];
  const last = messages.length - 1 - [...messages].reverse().findIndex((m) => m.role === "assistant" && "usage" in m);
  const newest = messages[last] as PiMessage & { usage: { totalTokens: number; input: number } };
  const sent = Math.round(compactor.tokens.total(messages) * 0.6);
  messages[last] = { ...newest, usage: { ...newest.usage, input: sent, cacheRead: 0, cacheWrite: 0, output: 0, totalTokens: sent } } as PiMessage;
  const calibrated = compactor.tokens.calibration(messages).ratio;
  expect(calibrated).toBeGreaterThan(1.1);
  expect(providerRatio(compactor.tokens.contextTokens(messages).tokens, compactor.tokens.total(messages))).toBe(1);
  expect(compactor.tokens.budgetRatio(messages)).toBe(calibrated);
  const shaped = compactor.shapeRequest(messages);
  expect(shaped.budget).toBe(Math.floor((WINDOW - RESERVE) / calibrated));
  expect(compactor.tokens.total(shaped.messages) * calibrated).toBeLessThanOrEqual(WINDOW - RESERVE);
});

it("counts a system prompt given to shapeRequest once: the calibrated ratio holds none of it", async () => {
  const compactor = await compactorWith({ preset: "safeguard", adapter: "pi", contextWindow: 200_000, reserveTokens: 16_384 });
  const messages = loadPiMessages(PI_FIXTURES[0] as string, { context: true });
  const systemPrompt = "You are a careful coding agent. ".repeat(1000);
  const systemPromptTokens = compactor.tokens.counter.count(systemPrompt);
  const calibrated = compactor.tokens.calibration(messages).ratio;
  const shaped = compactor.shapeRequest(messages, { systemPrompt });
  expect(shaped.budget).toBe(Math.floor((200_000 - 16_384) / calibrated) - systemPromptTokens);
  // The shipped session fits beside that prompt as the provider counts it: nothing is shrunk.
  expect(compactor.tokens.total(messages) * calibrated + systemPromptTokens * calibrated).toBeLessThan(200_000 - 16_384);
  expect(shaped.messages).toBe(messages);
});

it("rolling without recall keeps its recent messages within the budget in our count (the target converted, not compared as is)", async () => {
  // A window whose budget in our count (22,000 at the run's ratio: 1.25 plus the 25,000 fixed tokens spread over the messages) is below rolling's keepRecentTokens (20,000).
  const compactor = await compactorWith({ preset: "rolling", adapter: "pi", contextWindow: 24_000, reserveTokens: RESERVE, options: { rolling: { recall: false } } });
  // Usage figures of a provider counting 1.25x ours plus 25,000 tokens no message shows.
  const messages: PiMessage[] = [];
  let counted = 0;
  let at = Date.UTC(2026, 0, 1);
  for (let i = 0; i < 26; i++) {
    const user = { role: "user", content: [{ type: "text", text: `question ${i}: ${"why does the parser drop the last token? ".repeat(40)}` }], timestamp: (at += 1000) } as PiMessage;
    messages.push(user);
    counted += compactor.tokens.count(user);
    const reply = { role: "assistant", content: [{ type: "text", text: `answer ${i}: ${"the loop ends one index early, fixed in parse.ts. ".repeat(40)}` }], stopReason: "stop", timestamp: (at += 1000) };
    counted += compactor.tokens.count(reply as PiMessage);
    const total = Math.round(25_000 + 1.25 * counted);
    messages.push({ ...reply, usage: { input: total, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: total } } as PiMessage);
  }
  messages.push({ role: "user", content: [{ type: "text", text: "continue" }], timestamp: (at += 1000) } as PiMessage);
  const result = await compactor.compact({ messages, trigger: "auto" });
  expect(result.status, result.reason ?? "").toBe("compacted");
  expect(result.warnings.join("\n")).not.toMatch(/cannot bring the context within the budget/);
  // The fallback kept recent messages verbatim after its summary, within the budget.
  expect(result.messages.length).toBeGreaterThan(2);
  expect((result.countedTokensAfter ?? Number.NaN) * compactor.tokens.calibration(messages).ratio).toBeLessThanOrEqual(24_000 - RESERVE);
});

it("keeps generated sessions within the window as a provider counting r times ours sees them, every preset", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...PRESETS),
      fc.double({ min: 1, max: 2.5, noNaN: true }),
      fc.integer({ min: 12_000, max: 40_000 }),
      fc.integer({ min: 4, max: 30 }),
      fc.integer({ min: 0, max: 30_000 }),
      async (preset, r, window, turns, lastOutput) => {
        const reserve = 2_000;
        const compactor = await compactorWith({ preset, adapter: "pi", contextWindow: window, reserveTokens: reserve, tokenizer: { counter: "estimate" } });
        // Usage figures of a provider counting r times ours, plus a fixed part the reserve covers.
        const messages: PiMessage[] = [];
        let counted = 0;
        let at = Date.UTC(2026, 0, 1);
        for (let i = 0; i < turns; i++) {
          const user = { role: "user", content: [{ type: "text", text: `step ${i}: ${"check the parser and its tests. ".repeat(20 + (i % 7) * 10)}` }], timestamp: (at += 1000) } as PiMessage;
          messages.push(user);
          counted += compactor.tokens.count(user);
          const reply = { role: "assistant", content: [{ type: "text", text: `done ${i}: ${"fixed an off-by-one in parse.ts. ".repeat(20 + (i % 5) * 12)}` }], stopReason: "stop", timestamp: (at += 1000) };
          counted += compactor.tokens.count(reply as PiMessage);
          const total = Math.round(reserve / 2 + r * counted);
          messages.push({ ...reply, usage: { input: total, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: total } } as PiMessage);
        }
        messages.push({ role: "user", content: [{ type: "text", text: `${"log line of the last step ".repeat(lastOutput / 5)}continue` }], timestamp: (at += 1000) } as PiMessage);
        const ratio = compactor.tokens.budgetRatio(messages);
        const result = await compactor.compact({ messages, trigger: "manual" });
        expect(["compacted", "noop"], result.reason ?? "").toContain(result.status);
        // What the session holds after the run (all of it when nothing was compacted) fits.
        const kept = result.status === "compacted" ? (result.countedTokensAfter ?? Number.NaN) : compactor.tokens.total(messages);
        expect(kept * ratio).toBeLessThanOrEqual(window - reserve);
        if (result.status === "compacted") expect(result.event?.tokensAfterCompaction).toBeLessThanOrEqual(window - reserve);
      },
    ),
    // First, a case that ended 9 tokens over before the core counted the eviction note (rule 6 of
    // core/src/compactor/fit-budget.ts): kept messages within the budget, the note beyond it. Then
    // cases where the kept request left layered's summary 14 or 16 tokens, headings alone, and the
    // run failed (rule 5; found by a CI run, 3 in 20,000 generated sessions).
    {
      numRuns: 100,
      examples: [
        ["rolling", 2.205282858487405, 34_054, 8, 11_155],
        ["layered", 1.7511018846177546, 12_003, 11, 4_201],
        ["layered", 1.923526542378659, 28_969, 7, 10_481],
        ["layered", 1.9864767128424947, 38_688, 13, 13_945],
      ],
    },
  );
});

it("reports an After within the window less the reserve on the real pi sessions cut anywhere, every preset, with and without suffixOnly", async () => {
  const sessions = PI_FIXTURES.map((file) => loadPiMessages(file, { context: true }));
  const byPreset = new Map<string, Compactor<unknown>>();
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...PRESETS),
      fc.nat({ max: sessions.length - 1 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.integer({ min: 14_000, max: 80_000 }),
      fc.double({ min: 0, max: 0.33, noNaN: true }),
      fc.boolean(),
      async (preset, which, share, window, reserveShare, suffixOnly) => {
        const session = sessions[which] as unknown[];
        const messages = session.slice(0, 40 + Math.floor(share * (session.length - 40)));
        const reserve = Math.floor(window * reserveShare);
        let compactor = byPreset.get(preset);
        if (compactor === undefined) {
          compactor = await compactorWith({ preset, adapter: "pi", options: { rolling: { recall: true } } });
          byPreset.set(preset, compactor);
        }
        const result = await compactor.compact({ messages, contextWindow: window, reserveTokens: reserve, trigger: "auto", suffixOnly });
        if (result.status !== "compacted") return;
        // A host that records only summary + suffix is told to shrink at send time when what it keeps is over.
        if (result.warnings.some((warning) => warning.includes("must shrink them when it sends"))) return;
        expect(result.event?.tokensAfterCompaction, result.warnings.join("\n")).toBeLessThanOrEqual(window - reserve);
      },
    ),
    { numRuns: 100 },
  );
});
