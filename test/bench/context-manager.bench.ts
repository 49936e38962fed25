/**
 * Per-turn cost of the context manager. Run: `cd test && npx tsx bench/context-manager.bench.ts`.
 *
 * Each real pi session is replayed message by message, as an agent loop would append them. Per
 * message ("turn") it times:
 *  - ours: `await manager.append(message)` then `await manager.afterResponse()` (the threshold
 *    check), with the chars/4 counter and with tiktoken o200k_base, in memory, with a context
 *    window large enough that no turn compacts (a compaction is a different cost, not per turn);
 *  - of which: reading the new message's facts and counting it (no manager), to show how much of
 *    the manager's cost is the facts model (which the compaction later reuses) and how much is
 *    the manager's own bookkeeping;
 *  - pi: what pi-coding-agent does after each response: `estimateContextTokens(messages)` then
 *    `shouldCompact(tokens, window, DEFAULT_COMPACTION_SETTINGS)`, after pushing the message.
 * The pi functions come from pi-coding-agent's own compiled module
 * (`dist/core/compaction/compaction.js`, resolved from the package's entry point), because the
 * package's `exports` publish `shouldCompact` but not `estimateContextTokens`.
 *
 * Every replay works on fresh copies of the messages (made before timing), so no count is
 * memoised from an earlier replay. Variants run alternately, replay after replay, so both see the
 * same machine load; the first replay of each is a warm-up. A last row times the manager on a pi
 * session file (each append is a locked write and an fsync) over the first turns, once.
 *
 * BENCH_DOCS=1 writes the summary to docs/context-manager.md, BENCH_DOCS=print prints it (see
 * support/doc-tables.ts). The run has no narrowing variables: it is always the full one.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Compactor,
  createEstimateCounter,
  createPiAdapter,
  createTiktokenCounter,
  type PiMessage,
  type TokenCounter,
} from "@compaction/core";
import { type ContextManager, createContextManager } from "@compaction/context-manager";
import { createSession } from "@compaction/transcript";
import { PI_FIXTURES, loadPiMessages } from "@compaction/fixtures";
import { createExtractiveSummarizer } from "@compaction/plugin-summarizer-extractive";
import { printTable } from "./print-table.js";
import { writeDocTables } from "./support/doc-tables.js";

interface PiCompaction {
  estimateContextTokens(messages: unknown[]): { tokens: number };
  shouldCompact(tokens: number, contextWindow: number, settings: unknown): boolean;
  DEFAULT_COMPACTION_SETTINGS: unknown;
}

const REPLAYS = 6; // the first is a warm-up
const WINDOW = 100_000_000;
const SESSION_TURNS = 200;

const pi = (await import(
  new URL("./core/compaction/compaction.js", import.meta.resolve("@mariozechner/pi-coding-agent")).href
)) as PiCompaction;

// ---------------------------------------------------------------------------------------------

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index] as number;
}

interface Stats {
  median: number;
  p95: number;
  mean: number;
  turns: number;
}

function stats(nanos: readonly number[]): Stats {
  const sorted = [...nanos].sort((a, b) => a - b);
  const sum = nanos.reduce((a, b) => a + b, 0);
  return { median: quantile(sorted, 0.5) / 1000, p95: quantile(sorted, 0.95) / 1000, mean: sum / nanos.length / 1000, turns: nanos.length };
}

const us = (value: number): string => `${value.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })} µs`;
/** A median against pi's: whole times from 10x, else one decimal (the timings are not finer than that). */
const vsPi = (ratio: number): string => `${ratio >= 10 ? ratio.toFixed(0) : ratio.toFixed(1)}x`;


// ---------------------------------------------------------------------------------------------

type Variant = (messages: readonly PiMessage[], samples: number[]) => Promise<void>;

function compactor(counter: TokenCounter): Compactor<PiMessage> {
  return new Compactor<PiMessage>({ summarizer: createExtractiveSummarizer(), adapter: createPiAdapter(), tokenCounter: counter, ownsTokenCounter: true, contextWindow: WINDOW });
}

/** Ours: append then the after-response check, awaited as an agent loop awaits them. */
function ours(makeCounter: () => TokenCounter): Variant {
  return async (messages, samples) => {
    const manager = await createContextManager<PiMessage>({ compactor: compactor(makeCounter()), messages: [] });
    let compactions = 0;
    for (const message of messages) {
      const start = process.hrtime.bigint();
      await manager.append(message);
      if ((await manager.afterResponse()) !== null) compactions += 1;
      samples.push(Number(process.hrtime.bigint() - start));
    }
    if (compactions !== 0) throw new Error("a turn compacted; the window is meant to be large enough for none to");
    manager.compactor.dispose();
    await manager.dispose();
  };
}

/** Ours without the manager: reading the new message's facts and counting it, nothing else. */
const countOnly: Variant = async (messages, samples) => {
  const counting = compactor(createEstimateCounter());
  for (const message of messages) {
    const start = process.hrtime.bigint();
    counting.tokens.count(message);
    samples.push(Number(process.hrtime.bigint() - start));
  }
  counting.dispose();
};

/** pi: push, estimateContextTokens over the context, shouldCompact. */
const piCheck: Variant = async (messages, samples) => {
  const context: unknown[] = [];
  let compactions = 0;
  for (const message of messages) {
    const start = process.hrtime.bigint();
    context.push(message);
    const { tokens } = pi.estimateContextTokens(context);
    if (pi.shouldCompact(tokens, WINDOW, pi.DEFAULT_COMPACTION_SETTINGS)) compactions += 1;
    samples.push(Number(process.hrtime.bigint() - start));
  }
  if (compactions !== 0) throw new Error("pi's check said compact; the window is meant to be large enough for none to");
};

/** Ours on a session file: every append is a locked write + fsync. Once, over the first turns. */
async function oursOnSession(messages: readonly PiMessage[]): Promise<Stats> {
  const dir = mkdtempSync(join(tmpdir(), "context-manager-bench-"));
  try {
    const path = join(dir, "session.jsonl");
    await createSession(path, { cwd: dir });
    const manager: ContextManager<PiMessage> = await createContextManager<PiMessage>({ compactor: compactor(createEstimateCounter()), session: path });
    const samples: number[] = [];
    for (const message of messages.slice(0, SESSION_TURNS)) {
      const start = process.hrtime.bigint();
      await manager.append(message);
      await manager.afterResponse();
      samples.push(Number(process.hrtime.bigint() - start));
    }
    manager.compactor.dispose();
    await manager.dispose();
    return stats(samples);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One fixture's per-turn timings: the console's rows, and the page's (its name on the first). */
async function benchFixture(file: string): Promise<{ summary: string[][]; page: string[][] }> {
  const original = loadPiMessages(file);
  // [the console's name, the page's name, the variant]
  const variants: Array<[string, string, Variant]> = [
    ["ours, chars/4: await append + await afterResponse", "ours, chars/4", ours(createEstimateCounter)],
    ["ours, tiktoken o200k: await append + await afterResponse", "ours, tiktoken o200k", ours(() => createTiktokenCounter())],
    ["  of which: facts + chars/4 count of the new message", "of which: facts + chars/4 count of the new message", countOnly],
    ["pi: estimateContextTokens + shouldCompact", "pi: `estimateContextTokens` + `shouldCompact`", piCheck],
  ];
  const samples = variants.map((): number[] => []);
  for (let replay = 0; replay < REPLAYS; replay++) {
    for (const [index, [, , run]] of variants.entries()) {
      const copies = structuredClone(original);
      const into: number[] = [];
      await run(copies, into);
      if (replay > 0) samples[index]?.push(...into);
    }
  }
  const results = variants.map(([name, pageName], index) => ({ name, pageName, stats: stats(samples[index] ?? []) }));
  const piMedian = (results[3] as (typeof results)[number]).stats.median;
  const rows: string[][] = [["per turn", "median", "p95", "mean", "median vs pi", "turns timed"]];
  for (const { name, stats: s } of results) rows.push([name, us(s.median), us(s.p95), us(s.mean), vsPi(s.median / piMedian), String(s.turns)]);
  const session = await oursOnSession(structuredClone(original));
  rows.push([`ours on a session file (first ${session.turns} turns, once)`, us(session.median), us(session.p95), us(session.mean), vsPi(session.median / piMedian), String(session.turns)]);
  console.log(`\n=== ${file}: ${original.length} messages replayed, ${REPLAYS - 1} timed replays (+1 warm-up) ===`);
  printTable("", rows);
  const millis = (micros: number): string => `${(micros / 1000).toFixed(1)} ms`;
  const page = [
    ...results.map(({ pageName, stats: s }) => [pageName, us(s.median), us(s.p95), vsPi(s.median / piMedian)]),
    // Against pi's in-memory check the ratio says nothing: the file's write is the cost.
    [`ours on a session file (first ${session.turns} turns; append = locked write + fsync)`, millis(session.median), millis(session.p95), "—"],
  ].map((row, i) => [i === 0 ? `${file.replace(/\.jsonl$/, "")} (${original.length} messages)` : "", ...row]);
  return { summary: rows.slice(1, 5).map((row) => [file, ...row.slice(0, 3), row[4] as string]), page };
}

async function main(): Promise<void> {
  console.log(`Context manager per-turn benchmark (node ${process.version})`);
  const summary: string[][] = [["fixture", "per turn", "median", "p95", "median vs pi"]];
  const page: string[][] = [["fixture", "per turn", "median", "p95", "median vs pi"]];
  for (const file of PI_FIXTURES) {
    const measured = await benchFixture(file);
    summary.push(...measured.summary);
    page.push(...measured.page);
  }
  printTable("=== summary ===", summary);
  writeDocTables(import.meta.url, [], [{ page: "docs/context-manager.md", name: "context-manager-per-turn", rows: page }]);
}

await main();
