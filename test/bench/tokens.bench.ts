/**
 * Token counting benchmark on the real transcripts. Run: `cd test && npx tsx bench/tokens.bench.ts`.
 *
 * Per fixture it prints:
 *  a. cold count of the whole context (new counter + MessageTokenCounter, facts read from scratch)
 *     against one raw tiktoken `encode_ordinary` of the same text joined (target: within 1.2x);
 *  b. one new-message update on a warm counter against pi's `estimateTokens` summed over the whole
 *     context, which is what pi does each turn;
 *  c. accuracy: totals, and counts of the messages between two provider usage figures against the
 *     difference of those figures (target: context size within 5% of the provider's).
 *
 * Then a summary of every fixture, which BENCH_DOCS=1 writes to docs/numbers.md (BENCH_DOCS=print
 * prints it; see support/doc-tables.ts). The run has no narrowing variables: it is always the full one.
 */
import { get_encoding } from "tiktoken";
import { estimateTokens } from "@mariozechner/pi-coding-agent";
import {
  createAnthropicAdapter,
  createEstimateCounter,
  createOpenAIAdapter,
  createPiAdapter,
  createTiktokenCounter,
  FactsCache,
  type MessageAdapter,
  MessageTokenCounter,
  messageTokenText,
} from "@compaction/core";
import { CLAUDE_FIXTURES, CODEX_FIXTURES, PI_FIXTURES, loadClaudeMessages, loadCodexMessages, loadPiMessages } from "@compaction/fixtures";
import { printTable } from "./print-table.js";
import { writeDocTables } from "./support/doc-tables.js";

const COLD = { warmup: 3, iterations: 20 };
const UPDATE = { warmup: 200, iterations: 2000 };
const OVERHEAD_TARGET = 1.2;
const CONTEXT_ERROR_TARGET = 0.05;

type PiLike = Parameters<typeof estimateTokens>[0];

interface Fixture<T> {
  readonly file: string;
  readonly adapter: MessageAdapter<T>;
  /** What the model sees after loading the file (pi's boundary rule applied). */
  readonly context: T[];
  /** Every message in file order, for usage pairs. */
  readonly all: T[];
  /** pi's own estimate, for pi fixtures only. */
  readonly piEstimate?: (message: T) => number;
}

// ---------------------------------------------------------------------------------------------
// Timing

/**
 * Nanoseconds of each timed run of `a` and `b`, run alternately (a, b, a, b, ...) after
 * `warmup` untimed rounds, so that both see the same machine load.
 */
function sampleAlternating(
  a: () => void,
  b: () => void,
  { warmup, iterations }: { warmup: number; iterations: number },
): [number[], number[]] {
  const samples: [number[], number[]] = [[], []];
  for (let i = 0; i < warmup + iterations; i++) {
    [a, b].forEach((fn, which) => {
      const start = process.hrtime.bigint();
      fn();
      if (i >= warmup) samples[which]?.push(Number(process.hrtime.bigint() - start));
    });
  }
  return samples;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Mean µs per op of `op(i)` over a fixed number of iterations, timed as one block. */
function microsPerOp(op: (i: number) => void, { warmup, iterations }: { warmup: number; iterations: number }): number {
  for (let i = 0; i < warmup; i++) op(i);
  const start = process.hrtime.bigint();
  for (let i = warmup; i < warmup + iterations; i++) op(i);
  return Number(process.hrtime.bigint() - start) / 1000 / iterations;
}

// ---------------------------------------------------------------------------------------------
// Output

const ms = (ns: number): string => `${(ns / 1e6).toFixed(2)} ms`;
const us = (value: number): string => `${value.toFixed(2)} µs/op`;
const micros = (value: number): string => `${value.toFixed(2)} µs`;
const tokens = (value: number): string => `${Math.round(value).toLocaleString("en-US")} tokens`;
const pct = (value: number): string => `${(value * 100).toFixed(1)}%`;
const signedPct = (value: number): string => `${value >= 0 ? "+" : "−"}${Math.abs(value * 100).toFixed(1)}%`;
const verdict = (met: boolean): string => (met ? "MET" : "NOT MET");


// ---------------------------------------------------------------------------------------------
// a. cold count vs raw tiktoken

const rawEncoder = get_encoding("o200k_base");

function concatenatedText<T>(fixture: Fixture<T>): string {
  return fixture.context.map((message) => messageTokenText(fixture.adapter.readFacts(message))).join("\n");
}

function benchCold<T>(fixture: Fixture<T>): { ratio: number; rows: string[][] } {
  const text = concatenatedText(fixture);
  const [ours, raw] = sampleAlternating(
    () => {
      const counter = createTiktokenCounter();
      new MessageTokenCounter(new FactsCache(fixture.adapter), counter).total(fixture.context);
      counter.dispose();
    },
    () => void rawEncoder.encode_ordinary(text).length,
    COLD,
  );
  const ratio = median(ours) / median(raw);
  const minRatio = Math.min(...ours) / Math.min(...raw);
  return {
    ratio,
    rows: [
      ["a. cold count of the whole context", "median", "min"],
      ["ours: new counter + MessageTokenCounter.total", ms(median(ours)), ms(Math.min(...ours))],
      ["raw tiktoken encode_ordinary of the joined text", ms(median(raw)), ms(Math.min(...raw))],
      [`overhead ratio (target <= ${OVERHEAD_TARGET}x)`, `${ratio.toFixed(2)}x`, `${minRatio.toFixed(2)}x`],
      ["overhead target, by medians", verdict(ratio <= OVERHEAD_TARGET), ""],
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// b. one new message on a warm counter vs pi's per-turn estimate

/** A typical new message: the tool result or user message of median token count in the context. */
function sampleNewMessage<T>(fixture: Fixture<T>, warm: MessageTokenCounter<T>): T {
  const candidates = fixture.context.filter((message) => {
    const kind = fixture.adapter.readFacts(message).kind;
    return kind === "toolResult" || kind === "user";
  });
  candidates.sort((a, b) => warm.count(a) - warm.count(b));
  const middle = candidates[Math.floor(candidates.length / 2)];
  if (middle === undefined) throw new Error(`${fixture.file}: no tool result or user message to append`);
  return middle;
}

/** `opMicros`: our tiktoken count of a new message, `estimateMicros` our chars/4 one, `piMicros` pi's estimate summed over the context. */
function benchUpdate<T>(fixture: Fixture<T>): { rows: string[][]; opMicros: number; estimateMicros: number; piMicros?: number } {
  const tiktoken = createTiktokenCounter();
  const warm = new MessageTokenCounter(new FactsCache(fixture.adapter), tiktoken);
  warm.total(fixture.context);
  const warmEstimate = new MessageTokenCounter(new FactsCache(fixture.adapter), createEstimateCounter());
  warmEstimate.total(fixture.context);
  const template = sampleNewMessage(fixture, warm);
  const total = UPDATE.warmup + UPDATE.iterations;
  // Fresh objects, made before timing: each op counts one message never seen before.
  const fresh = (): T[] => Array.from({ length: total }, () => structuredClone(template));
  const work = [...fixture.context];
  const appendAnd = (fn: (messages: T[]) => void, newMessages: T[]) => (i: number) => {
    work.push(newMessages[i] as T);
    fn(work);
    work.pop();
  };

  const contextOp = microsPerOp(appendAnd((m) => void warm.contextTokens(m), fresh()), UPDATE);
  const totalOp = microsPerOp(appendAnd((m) => void warm.total(m), fresh()), UPDATE);
  const templateText = messageTokenText(fixture.adapter.readFacts(template));
  const encodeOp = microsPerOp(() => void tiktoken.count(templateText), UPDATE);
  const seen = fresh().slice(0, 1);
  warm.count(seen[0] as T);
  const bookkeepingOp = microsPerOp(appendAnd((m) => void warm.contextTokens(m), new Array<T>(total).fill(seen[0] as T)), UPDATE);
  const estimateOp = microsPerOp(appendAnd((m) => void warmEstimate.contextTokens(m), fresh()), UPDATE);
  const estimateTotalOp = microsPerOp(appendAnd((m) => void warmEstimate.total(m), fresh()), UPDATE);

  const rows = [
    ["b. one new message on a warm counter", "time", ""],
    [`new message: median ${fixture.adapter.readFacts(template).kind}, ${warm.count(template)} tokens`, "", ""],
    ["ours tiktoken: contextTokens, new message counted", us(contextOp), ""],
    ["ours tiktoken: total of all, new message counted", us(totalOp), ""],
    ["  of which tiktoken encode of the new message", us(encodeOp), ""],
    ["ours: contextTokens, message already counted", us(bookkeepingOp), ""],
    ["ours chars/4: contextTokens, new message counted", us(estimateOp), ""],
    ["ours chars/4: total of all, new message counted", us(estimateTotalOp), ""],
  ];
  let piMicros: number | undefined;
  if (fixture.piEstimate !== undefined) {
    const estimate = fixture.piEstimate;
    const piOp = microsPerOp(
      appendAnd((messages) => {
        let sum = 0;
        for (const message of messages) sum += estimate(message);
        if (sum < 0) throw new Error("unreachable");
      }, fresh()),
      UPDATE,
    );
    piMicros = piOp;
    rows.push(
      ["pi estimateTokens summed over the context", us(piOp), ""],
      ["ours chars/4 total vs pi (goal: cheaper)", `${(estimateTotalOp / piOp).toFixed(3)}x pi`, verdict(estimateTotalOp < piOp)],
      [
        "ours tiktoken contextTokens vs pi",
        `${(contextOp / piOp).toFixed(2)}x pi`,
        "(tiktoken encode of the new message dominates)",
      ],
    );
  }
  tiktoken.dispose();
  return { rows, opMicros: contextOp, estimateMicros: estimateOp, ...(piMicros === undefined ? {} : { piMicros }) };
}

// ---------------------------------------------------------------------------------------------
// c. accuracy

const OURS = "ours tiktoken o200k";

interface PairError {
  pairs: number;
  skipped: number;
  sumDelta: number;
  sumUsage: number;
  /** Σ|count - delta| per estimator. */
  abs: Map<string, number>;
  /** Σ(count - delta) per estimator. */
  signed: Map<string, number>;
}

/**
 * Pairs of consecutive assistant messages with valid usage, i < j: compares usage_j - usage_i
 * with each estimator's count of messages i+1..j. Pairs whose difference is not positive (a
 * compaction or reset between them) are skipped.
 */
function pairErrors<T>(all: readonly T[], adapter: MessageAdapter<T>, estimators: Record<string, (m: T) => number>): PairError {
  const result: PairError = { pairs: 0, skipped: 0, sumDelta: 0, sumUsage: 0, abs: new Map(), signed: new Map() };
  let previous: { index: number; usage: number } | undefined;
  for (let j = 0; j < all.length; j++) {
    const usage = adapter.readFacts(all[j] as T).usageContextTokens;
    if (usage === undefined) continue;
    if (previous !== undefined) {
      const delta = usage - previous.usage;
      if (delta <= 0) {
        result.skipped += 1;
      } else {
        result.pairs += 1;
        result.sumDelta += delta;
        result.sumUsage += usage;
        for (const [name, estimate] of Object.entries(estimators)) {
          let count = 0;
          for (let k = previous.index + 1; k <= j; k++) count += estimate(all[k] as T);
          result.abs.set(name, (result.abs.get(name) ?? 0) + Math.abs(count - delta));
          result.signed.set(name, (result.signed.get(name) ?? 0) + (count - delta));
        }
      }
    }
    previous = { index: j, usage };
  }
  return result;
}

/**
 * `totalOff`: our total against raw o200k of the joined text; `contextErrors` per estimator, with
 * `baseline` (counting nothing after the usage) and `bias` (ours between two usages), when the
 * fixture has usage pairs.
 */
function benchAccuracy<T>(fixture: Fixture<T>): { rows: string[][]; contextErrors: Map<string, number>; totalOff: number; baseline?: number; bias?: number } {
  const tiktoken = createTiktokenCounter();
  const ours = new MessageTokenCounter(new FactsCache(fixture.adapter), tiktoken);
  const chars = new MessageTokenCounter(new FactsCache(fixture.adapter), createEstimateCounter());
  const estimators: Record<string, (m: T) => number> = {
    [OURS]: (m) => ours.count(m),
    "chars/4 of our facts": (m) => chars.count(m),
  };
  if (fixture.piEstimate !== undefined) estimators["pi estimateTokens"] = fixture.piEstimate;

  const rows: string[][] = [["c. accuracy", "value", ""]];
  const raw = rawEncoder.encode_ordinary(concatenatedText(fixture)).length;
  rows.push(["raw o200k of the joined context text", tokens(raw), ""]);
  let totalOff = Number.NaN;
  for (const [name, estimate] of Object.entries(estimators)) {
    let sum = 0;
    for (const message of fixture.context) sum += estimate(message);
    const off = (sum - raw) / raw;
    if (name === OURS) totalOff = off;
    rows.push([`total, ${name}`, tokens(sum), `${signedPct(off)} vs o200k${name.startsWith("ours") ? ` (target within ${pct(CONTEXT_ERROR_TARGET)}: ${verdict(Math.abs(off) <= CONTEXT_ERROR_TARGET)})` : ""}`]);
  }
  rows.push(["context size (ours.contextTokens)", tokens(ours.contextTokens(fixture.context).tokens), ""]);

  const pairs = pairErrors(fixture.all, fixture.adapter, estimators);
  const contextErrors = new Map<string, number>();
  if (pairs.pairs === 0) {
    rows.push(["usage pairs", "none with valid usage", ""]);
  } else {
    rows.push([
      "usage pairs (consecutive assistant usages)",
      `${pairs.pairs} pairs, ${pairs.skipped} skipped`,
      `Σ(usage_j - usage_i) = ${tokens(pairs.sumDelta)}`,
    ]);
    for (const name of Object.keys(estimators)) {
      const abs = pairs.abs.get(name) ?? 0;
      const signed = pairs.signed.get(name) ?? 0;
      rows.push([`between-usage count error, ${name}`, `${pct(abs / pairs.sumDelta)} abs`, `${signedPct(signed / pairs.sumDelta)} bias`]);
    }
    // What counting nothing after the last usage would score: shows how much of the context-size
    // figure comes from anchoring on the provider's usage rather than from the counts.
    rows.push(["context-size error, counting nothing after the usage (baseline)", pct(pairs.sumDelta / pairs.sumUsage), ""]);
    for (const name of Object.keys(estimators)) {
      // usage_i + count(i+1..j) predicts usage_j: the context size a host would act on.
      const error = (pairs.abs.get(name) ?? 0) / pairs.sumUsage;
      contextErrors.set(name, error);
      rows.push([
        `context-size error, ${name} (target <= ${pct(CONTEXT_ERROR_TARGET)})`,
        pct(error),
        verdict(error <= CONTEXT_ERROR_TARGET),
      ]);
    }
  }
  tiktoken.dispose();
  if (pairs.pairs === 0) return { rows, contextErrors, totalOff };
  return { rows, contextErrors, totalOff, baseline: pairs.sumDelta / pairs.sumUsage, bias: (pairs.signed.get(OURS) ?? 0) / pairs.sumDelta };
}

// ---------------------------------------------------------------------------------------------

function loadFixtures(): Fixture<unknown>[] {
  const pi = createPiAdapter();
  const anthropic = createAnthropicAdapter();
  const openai = createOpenAIAdapter();
  const fixtures: Fixture<unknown>[] = [];
  for (const file of PI_FIXTURES) {
    fixtures.push({
      file,
      adapter: pi as MessageAdapter<unknown>,
      context: loadPiMessages(file, { context: true }),
      all: loadPiMessages(file),
      piEstimate: (message) => estimateTokens(message as PiLike),
    });
  }
  for (const file of CLAUDE_FIXTURES) {
    const messages = loadClaudeMessages(file);
    fixtures.push({ file, adapter: anthropic as MessageAdapter<unknown>, context: messages, all: messages });
  }
  // Codex records no usage figures: its rows give the counting cost and totals only.
  for (const file of CODEX_FIXTURES) {
    const messages = loadCodexMessages(file);
    fixtures.push({ file, adapter: openai as MessageAdapter<unknown>, context: messages, all: messages });
  }
  return fixtures;
}

function main(): void {
  const loadStart = process.hrtime.bigint();
  const keeper = createTiktokenCounter(); // holds the shared o200k encoder for the whole run
  const loadNs = Number(process.hrtime.bigint() - loadStart);
  console.log(`Token counting benchmark (node ${process.version}); o200k_base encoder load: ${ms(loadNs)} (once per process)`);
  console.log(
    `cold: ${COLD.warmup} warm-up + ${COLD.iterations} timed runs of each, alternating; update: ${UPDATE.warmup} warm-up + ${UPDATE.iterations} timed ops`,
  );

  const summary: string[][] = [["fixture", "messages", "a. overhead", "b. warm update (tiktoken)", "c. context error (ours)"]];
  const page: string[][] = [
    [
      "fixture",
      "messages",
      `cold count ÷ raw \`encode_ordinary\` (target ≤ ${OVERHEAD_TARGET}x)`,
      `our total vs raw o200k (target ≤ ${CONTEXT_ERROR_TARGET * 100}%)`,
      "one new message, warm (ours, tiktoken / chars/4)",
      "pi `estimateTokens` over the context",
      `context size vs provider usage (target ≤ ${CONTEXT_ERROR_TARGET * 100}%; counting nothing scores)`,
      "between two usages, ours vs provider",
    ],
  ];
  for (const fixture of loadFixtures()) {
    console.log(`\n=== ${fixture.file}: ${fixture.context.length} messages in context, ${fixture.all.length} in file ===`);
    const cold = benchCold(fixture);
    printTable("", cold.rows);
    const update = benchUpdate(fixture);
    printTable("", update.rows);
    const accuracy = benchAccuracy(fixture);
    printTable("", accuracy.rows);
    const contextError = accuracy.contextErrors.get(OURS);
    summary.push([
      fixture.file,
      String(fixture.context.length),
      `${cold.ratio.toFixed(2)}x ${verdict(cold.ratio <= OVERHEAD_TARGET)}`,
      us(update.opMicros),
      contextError === undefined ? "no usage" : `${pct(contextError)} ${verdict(contextError <= CONTEXT_ERROR_TARGET)}`,
    ]);
    page.push([
      fixture.file.replace(/\.jsonl$/, ""),
      String(fixture.context.length),
      `${cold.ratio.toFixed(2)}x`,
      signedPct(accuracy.totalOff),
      `${micros(update.opMicros)} / ${micros(update.estimateMicros)}`,
      update.piMicros === undefined ? "—" : micros(update.piMicros),
      contextError === undefined || accuracy.baseline === undefined ? "no usage figures" : `${pct(contextError)} (${pct(accuracy.baseline)})`,
      accuracy.bias === undefined ? "—" : signedPct(accuracy.bias),
    ]);
  }
  printTable("=== summary ===", summary);
  writeDocTables(import.meta.url, [], [{ page: "docs/numbers.md", name: "numbers-counting", rows: page }]);
  keeper.dispose();
  rawEncoder.free();
}

main();
