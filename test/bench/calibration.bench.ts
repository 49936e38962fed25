/**
 * How far our count is from the provider's, raw and calibrated, on every real transcript.
 * Run: `cd test && npx tsx bench/calibration.bench.ts` (part of `npm run bench`).
 *
 * Between two consecutive usage figures the provider counted exactly the messages in between, so
 * each pair is a test: predict the second figure from the first plus our count of what came
 * between, raw (ratio 1) and calibrated (the ratio a CalibrationSampler learned from the pairs
 * before this one only, as a host would have it at that moment). Prints per fixture the median
 * and the 10th/90th percentiles of the error of each pair, and the pooled error (sum of
 * predictions over sum of figures); target: the calibrated pooled error within ±5%.
 *
 * Beside them, the peers' measures on the same pairs: raw o200k is what an o200k limiter (Mastra's)
 * counts; pi estimates chars/4 (its own `estimateTokens` on the pi sessions; chars/4 of the same
 * message text on the Claude Code transcripts, which pi does not read).
 *
 * Then the After of a compaction: on every pi session that holds one (pi's own), the context right
 * after it (summary, kept messages and what followed, up to the first response with a usage
 * figure) measured the way a compaction measures what it keeps (`providerTokensAfter`: our count
 * at the ratio of the measure before the compaction to our count of its input), against that
 * usage figure; beside it the raw o200k count and pi's chars/4 of the same messages.
 *
 * BENCH_DOCS=1 writes both tables to docs/numbers.md, BENCH_DOCS=print prints them (see
 * support/doc-tables.ts). The run has no narrowing variables: it is always the full one.
 */
import {
  type Calibration,
  CalibrationSampler,
  createAnthropicAdapter,
  createEstimateCounter,
  createPiAdapter,
  createTiktokenCounter,
  FactsCache,
  type MessageAdapter,
  MessageTokenCounter,
  messageTokenText,
  type PiMessage,
} from "@compaction/core";
import { CLAUDE_FIXTURES, FIXTURES_DIR, loadClaudeMessages, loadPiMessages, PI_FIXTURES } from "@compaction/fixtures";
import { join } from "node:path";
import { buildContext, readSession, SessionTree } from "@compaction/transcript";
import { type DocTable, writeDocTables } from "./support/doc-tables.js";

// pi's own estimate, from its compiled compaction module (the package's `exports` do not publish it).
const pi = (await import(new URL("./core/compaction/compaction.js", import.meta.resolve("@mariozechner/pi-coding-agent")).href)) as {
  estimateTokens(message: unknown): number;
};
const charsOver4 = createEstimateCounter();

const TARGET = 0.05;

interface PairErrors {
  readonly raw: number[];
  readonly calibrated: number[];
  readonly peer: number[];
  actual: number;
  predictedRaw: number;
  predictedCalibrated: number;
  predictedPeer: number;
  /** Pairs before the sampler had a ratio (predicted raw, counted in both). */
  uncalibrated: number;
  last: Calibration | undefined;
}

/** `peerCount`: the peer's estimate of one message (pi's chars/4). */
function measure<T>(messages: readonly T[], adapter: MessageAdapter<T>, counter: ReturnType<typeof createTiktokenCounter>, peerCount: (message: T) => number): PairErrors {
  const tokens = new MessageTokenCounter(new FactsCache(adapter), counter);
  const sampler = new CalibrationSampler();
  const out: PairErrors = { raw: [], calibrated: [], peer: [], actual: 0, predictedRaw: 0, predictedCalibrated: 0, predictedPeer: 0, uncalibrated: 0, last: undefined };
  let lastUsage: number | undefined;
  let counted = 0;
  let estimated = 0;
  let spanMessages = 0;
  let hasImage = false;
  for (const message of messages) {
    const facts = tokens.facts.of(message);
    const count = tokens.count(message);
    if (facts.kind === "summary") {
      lastUsage = undefined;
      counted = 0;
      estimated = 0;
      spanMessages = 0;
      hasImage = false;
      sampler.push(facts, count);
      continue;
    }
    counted += count;
    estimated += peerCount(message);
    spanMessages += 1;
    if (facts.imageCount > 0) hasImage = true;
    const usage = facts.usageContextTokens;
    if (usage !== undefined) {
      if (lastUsage !== undefined && !hasImage && usage > lastUsage && counted > 0) {
        const actual = usage - lastUsage;
        const calibration = sampler.calibration;
        if (calibration.source === "none") out.uncalibrated += 1;
        out.raw.push(counted / actual - 1);
        const predicted = counted * calibration.ratio + spanMessages * calibration.perMessage;
        out.calibrated.push(predicted / actual - 1);
        out.actual += actual;
        out.predictedRaw += counted;
        out.predictedCalibrated += predicted;
        out.peer.push(estimated / actual - 1);
        out.predictedPeer += estimated;
      }
      lastUsage = usage;
      counted = 0;
      estimated = 0;
      spanMessages = 0;
      hasImage = false;
    }
    sampler.push(facts, count);
  }
  out.last = sampler.calibration;
  return out;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}

const pct = (value: number) => `${value >= 0 ? "+" : "−"}${Math.abs(value * 100).toFixed(1)}%`;

function row(name: string, errors: PairErrors): string[] {
  const ratio = errors.last === undefined ? "-" : `${errors.last.ratio.toFixed(3)} + ${errors.last.perMessage.toFixed(1)}/message (${errors.last.source}, ${errors.last.samples} pairs)`;
  return [
    name,
    String(errors.raw.length),
    `${pct(percentile(errors.raw, 0.5))} [${pct(percentile(errors.raw, 0.1))}, ${pct(percentile(errors.raw, 0.9))}]`,
    pct(errors.predictedRaw / errors.actual - 1),
    `${pct(percentile(errors.calibrated, 0.5))} [${pct(percentile(errors.calibrated, 0.1))}, ${pct(percentile(errors.calibrated, 0.9))}]`,
    pct(errors.predictedCalibrated / errors.actual - 1),
    `${pct(percentile(errors.peer, 0.5))} [${pct(percentile(errors.peer, 0.1))}, ${pct(percentile(errors.peer, 0.9))}]`,
    pct(errors.predictedPeer / errors.actual - 1),
    ratio,
  ];
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((r) => r[column]!.length)));
  return rows.map((r) => r.map((cell, column) => cell.padEnd(widths[column]!)).join("  ")).join("\n");
}

const counter = createTiktokenCounter();
const rows: string[][] = [
  ["fixture", "pairs", "raw o200k: median [p10, p90]", "raw pooled", "calibrated: median [p10, p90]", "calibrated pooled", "pi chars/4: median [p10, p90]", "chars/4 pooled", "ratio at the end"],
];
const pooled = { actual: 0, raw: 0, calibrated: 0, peer: 0 };
const failures: string[] = [];
for (const file of PI_FIXTURES) {
  const errors = measure(loadPiMessages(file), createPiAdapter(), counter, (message) => pi.estimateTokens(message));
  rows.push(row(file, errors));
  pooled.actual += errors.actual;
  pooled.raw += errors.predictedRaw;
  pooled.calibrated += errors.predictedCalibrated;
  pooled.peer += errors.predictedPeer;
  if (Math.abs(errors.predictedCalibrated / errors.actual - 1) > TARGET) failures.push(file);
}
for (const file of CLAUDE_FIXTURES) {
  const adapter = createAnthropicAdapter();
  const errors = measure(loadClaudeMessages(file), adapter, counter, (message) => charsOver4.count(messageTokenText(adapter.readFacts(message))));
  if (errors.raw.length === 0) {
    rows.push([file, "0", "no consecutive usage figures", "", "", "", "", "", ""]);
    continue;
  }
  rows.push(row(file, errors));
  pooled.actual += errors.actual;
  pooled.raw += errors.predictedRaw;
  pooled.calibrated += errors.predictedCalibrated;
  pooled.peer += errors.predictedPeer;
  if (Math.abs(errors.predictedCalibrated / errors.actual - 1) > TARGET) failures.push(file);
}
counter.dispose();

console.log("Provider count against ours between consecutive usage figures (o200k via tiktoken)");
console.log("error = our prediction / the provider's figure - 1; calibrated uses only the pairs before each one\n");
console.log(table(rows));
console.log(
  `\nall fixtures pooled: raw o200k ${pct(pooled.raw / pooled.actual - 1)}, calibrated ${pct(pooled.calibrated / pooled.actual - 1)} (target within ±${TARGET * 100}%), pi's chars/4 ${pct(pooled.peer / pooled.actual - 1)}`,
);
console.log(failures.length === 0 ? "calibrated pooled error within target on every fixture" : `over target: ${failures.join(", ")}`);

const NUMBERS_PAGE = "docs/numbers.md";
/** docs/numbers.md's tables, gathered as the run goes. */
const docTables: DocTable[] = [
  {
    page: NUMBERS_PAGE,
    name: "numbers-calibration",
    // The page's table: the fixture without `.jsonl`, no end ratio, and a last row of every fixture pooled.
    rows: [
      ["fixture", "pairs", "raw o200k: median [p10, p90]", "raw pooled", "calibrated: median [p10, p90]", "calibrated pooled", "pi's chars/4: median [p10, p90]", "chars/4 pooled"],
      ...rows.slice(1).map(([file = "", ...cells]) => [file.replace(/\.jsonl$/, ""), ...cells.slice(0, 7)]),
      [
        "all, pooled",
        String(rows.slice(1).reduce((sum, row) => sum + Number(row[1]), 0)),
        "",
        pct(pooled.raw / pooled.actual - 1),
        "",
        pct(pooled.calibrated / pooled.actual - 1),
        "",
        pct(pooled.peer / pooled.actual - 1),
      ],
    ],
  },
];

// ---------------------------------------------------------------------------------------------
// After a compaction: the measure of the context it left against the provider's next figure

{
  const afterCounter = createTiktokenCounter();
  const adapter = createPiAdapter();
  const afterRows: string[][] = [["fixture", "compaction (entry)", "provider's first figure after it", "our After measure (providerTokensAfter)", "raw o200k", "pi chars/4"]];
  const afterPage: string[][] = [["compaction", "provider's figure", "our After measure", "raw o200k", "pi's chars/4"]];
  for (const file of PI_FIXTURES) {
    const tree = new SessionTree(readSession(join(FIXTURES_DIR, file)).entries);
    const branch = tree.branch();
    branch.forEach((entry, at) => {
      if (entry.type !== "compaction" || at === 0) return;
      const tokens = new MessageTokenCounter(new FactsCache(adapter), afterCounter);
      const before = buildContext(tree, { leafId: branch[at - 1]!.id }).messages;
      // The first response after the compaction whose usage figure is trusted.
      const next = branch.findIndex((later, index) => index > at && later.type === "message" && tokens.facts.of((later as { message: PiMessage }).message).usageContextTokens !== undefined);
      if (next < 0) return;
      const after = buildContext(tree, { leafId: branch[next]!.id }).messages;
      const actual = tokens.facts.of(after[after.length - 1] as PiMessage).usageContextTokens as number;
      const ours = tokens.providerTokensAfter(before, after);
      const raw = tokens.total(after);
      const peer = after.reduce((sum: number, message) => sum + pi.estimateTokens(message), 0);
      const cell = (value: number) => `${value.toLocaleString("en-US")} (${pct(value / actual - 1)})`;
      afterRows.push([file, `#${at}`, actual.toLocaleString("en-US"), cell(ours), cell(raw), cell(peer)]);
      afterPage.push([`${file.replace(/\.jsonl$/, "")}, entry #${at}`, actual.toLocaleString("en-US"), cell(ours), cell(raw), cell(peer)]);
    });
  }
  afterCounter.dispose();
  console.log("\nThe context right after a compaction (pi's own, with the messages up to the next response), against that response's usage figure");
  console.log(afterRows.length === 1 ? "no pi fixture holds a compaction followed by a usage figure" : table(afterRows));
  docTables.push({ page: NUMBERS_PAGE, name: "numbers-compaction-after", rows: afterPage });
}

writeDocTables(import.meta.url, [], docTables);
