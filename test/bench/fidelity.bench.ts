/**
 * Fidelity benchmark: what each preset keeps of a long session, and what recall finds of the
 * rest. Run: `cd test && npx tsx bench/fidelity.bench.ts` (also part of `npm run bench`).
 *
 * 1. A synthetic session of FIDELITY_MULTIPLE windows of tokens, with planted facts
 *    (constraint, decision, identifier, error, last request) is replayed under every preset, and
 *    under a baseline that truncates the oldest messages, as a host would run them (see
 *    fidelity/replay.ts). For every fact: still in the context sent (the last request, shaped
 *    as a host sends it), found by memory_search (top 5), or lost; and per run the compactions,
 *    the context after them, the largest context held and request sent, and the summary sizes.
 *    Twice, at a 32k and a 128k window (the 128k session adds about 20 s to the run);
 *    FIDELITY_WINDOW runs it at that one window instead.
 * 2. The same on the real transcripts, with facts taken from their own early messages (see
 *    fidelity/real-facts.ts) and a window of 1/FIDELITY_REAL_RATIO of each transcript.
 * 0. First, the extractive summary beside the two summaries a model wrote for pi in
 *    pi-before-compaction.jsonl, of the same spans: identifiers of the model's kept, filler
 *    lines, tokens (see fidelity/model-summaries.ts; FIDELITY_MODEL_SUMMARIES=0 skips it).
 *
 * Environment (all optional): FIDELITY_WINDOW (32000, then 128000), FIDELITY_MULTIPLE (4), FIDELITY_SEED (1),
 * FIDELITY_FACTS (facts per kind, 6; at most 9), FIDELITY_PRESETS (comma list), FIDELITY_COUNTER
 * (tiktoken | estimate), FIDELITY_REAL (0 skips the real transcripts), FIDELITY_FIXTURES (comma
 * list of transcript files), FIDELITY_REAL_RATIO (4), FIDELITY_MIN_WINDOW (8000),
 * FIDELITY_MATRIX (1: also print the per-fact matrix for the real transcripts). BENCH_DOCS=1 writes
 * the tables of docs/fidelity.md and docs/choosing-a-preset.md (on the full default run only),
 * BENCH_DOCS=print prints them (see support/doc-tables.ts).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createEstimateCounter, createPiAdapter, createTiktokenCounter, FactsCache, MessageTokenCounter, type PiMessage } from "@compaction/core";
import { ALL_FIXTURES, loadFixtureAsPi } from "@compaction/fixtures";
import { type Fact, REAL_KINDS, SYNTHETIC_KINDS } from "./fidelity/facts.js";
import { generateSession } from "./fidelity/generator.js";
import { measureFacts, recallSearch, ShapingLosses, sharesByKind } from "./fidelity/measure.js";
import { modelSummaryTable } from "./fidelity/model-summaries.js";
import { realFacts } from "./fidelity/real-facts.js";
import { type ReplayOutcome, replayPreset, replayTruncation } from "./fidelity/replay.js";
import { costRows, costTable, factMatrix, factMatrixRows, idleRuns, notes, ofWindow, retentionRows, retentionTable, type RunResult, sharesCell, summarySeries, summarySeriesRows } from "./fidelity/table.js";
import { type DocTable, writeDocTables } from "./support/doc-tables.js";

const env = (name: string, fallback: string): string => process.env[name]?.trim() || fallback;
const num = (name: string, fallback: number): number => {
  const value = Number(env(name, String(fallback)));
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, found "${process.env[name]}".`);
  return value;
};

/** The synthetic session's windows: the full run's two, or the one FIDELITY_WINDOW names. */
const WINDOWS = process.env["FIDELITY_WINDOW"]?.trim() ? [num("FIDELITY_WINDOW", 32_000)] : [32_000, 128_000];
const MULTIPLE = num("FIDELITY_MULTIPLE", 4);
const SEED = num("FIDELITY_SEED", 1);
const FACTS_PER_KIND = num("FIDELITY_FACTS", 6);
const PRESETS = env("FIDELITY_PRESETS", "safeguard,rolling,layered,sliding-window").split(",").map((p) => p.trim());
const COUNTER = env("FIDELITY_COUNTER", "tiktoken") === "estimate" ? "estimate" : "tiktoken";
const REAL = env("FIDELITY_REAL", "1") !== "0";
const FIXTURES = env("FIDELITY_FIXTURES", ALL_FIXTURES.join(",")).split(",").map((f) => f.trim());
const REAL_RATIO = num("FIDELITY_REAL_RATIO", 4);
const MIN_WINDOW = num("FIDELITY_MIN_WINDOW", 8_000);
const MATRIX_REAL = env("FIDELITY_MATRIX", "0") === "1";
const MODEL_SUMMARIES = env("FIDELITY_MODEL_SUMMARIES", "1") !== "0";
/** The variables that narrow the run or change its inputs: with one set, the docs' tables are not written. */
const NARROWING = [
  "FIDELITY_WINDOW",
  "FIDELITY_MULTIPLE",
  "FIDELITY_SEED",
  "FIDELITY_FACTS",
  "FIDELITY_PRESETS",
  "FIDELITY_COUNTER",
  "FIDELITY_REAL",
  "FIDELITY_FIXTURES",
  "FIDELITY_REAL_RATIO",
  "FIDELITY_MIN_WINDOW",
  "FIDELITY_MODEL_SUMMARIES",
];
const FIDELITY_PAGE = "docs/fidelity.md";
/** The tables this run writes to the docs (BENCH_DOCS=1), gathered as it goes. */
const docTables: DocTable[] = [];
/** The truncation baseline: past 80% of the window (the default threshold), drop the oldest messages down to 60%. */
const TRUNCATE = { trigger: 0.8, target: 0.6 };
/** The config's default reserve (16,384 of a 200,000 window), scaled to the window. */
const reserveFor = (window: number): number => Math.round((window * 16_384) / 200_000);

const tokens = new MessageTokenCounter(new FactsCache(createPiAdapter()), COUNTER === "estimate" ? createEstimateCounter() : createTiktokenCounter());
const count = (message: PiMessage): number => tokens.count(message);

interface Dirs {
  readonly projects: string;
  readonly sessions: string;
}

/** Every preset and the baseline over one session, each measured against the facts. */
async function runAll(label: string, messages: readonly PiMessage[], facts: readonly Fact[], kinds: readonly string[], window: number, dirs: Dirs): Promise<RunResult[]> {
  const runs: RunResult[] = [];
  const replays: ((losses: ShapingLosses) => Promise<ReplayOutcome>)[] = [
    ...PRESETS.map((preset) => (losses: ShapingLosses) =>
      replayPreset(messages, {
        preset,
        window,
        reserveTokens: reserveFor(window),
        counter: COUNTER,
        projectsDir: dirs.projects,
        sessionsDir: dirs.sessions,
        label,
        onShaped: (held, sent) => losses.observe(held, sent),
      }),
    ),
    () => replayTruncation(messages, { window, ...TRUNCATE, tokens, sessionsDir: dirs.sessions, label }),
  ];
  for (const replay of replays) {
    const losses = new ShapingLosses(facts);
    const outcome = await replay(losses);
    const recall = await recallSearch(outcome.sessionPath, 5);
    try {
      const measured = await measureFacts(facts, outcome.request, recall.search, outcome.context);
      runs.push({ outcome, facts: measured, shares: sharesByKind(measured, kinds), cutFromRequests: losses.cut });
    } finally {
      await recall.close();
    }
  }
  return runs;
}

function print(title: string, runs: readonly RunResult[], matrix: boolean): void {
  console.log(`\n${title}\n`);
  console.log("Facts: % in the context sent (the last request, shaped) / % found by memory_search (top 5) / % lost (neither); (n) facts of the kind\n");
  console.log(retentionTable(runs));
  console.log("\nCompactions (tokens after: the context loaded again from the session file; held: that context; sent: it shaped as the context manager's send() shapes it)\n");
  console.log(costTable(runs));
  const series = summarySeries(runs);
  if (series !== "") console.log(`\nSummary or note tokens after each compaction:\n${series}`);
  const extra = notes(runs);
  if (extra !== "") console.log(`\nNotes:\n${extra}`);
  if (matrix) console.log(`\nWhere each fact ended (C: in context, S: found by search, -: lost)\n\n${factMatrix(runs)}`);
}

/** The page's tables of the synthetic session, per window of the full run (a run at another window writes none). */
const SYNTHETIC_TABLES: ReadonlyMap<number, { facts: string; cost: string; summaries: string; matrix?: string }> = new Map([
  [32_000, { facts: "fidelity-synthetic-32k-facts", cost: "fidelity-synthetic-32k-cost", summaries: "fidelity-synthetic-32k-summaries", matrix: "fidelity-synthetic-32k-matrix" }],
  [128_000, { facts: "fidelity-synthetic-128k-facts", cost: "fidelity-synthetic-128k-cost", summaries: "fidelity-synthetic-128k-summaries" }],
]);

/** The synthetic session at one window; docs/choosing-a-preset.md's table is of the 32k run. */
async function synthetic(dirs: Dirs, window: number): Promise<void> {
  const started = performance.now();
  const session = generateSession({ seed: SEED, targetTokens: MULTIPLE * window, factsPerKind: FACTS_PER_KIND, count });
  const runs = await runAll(`synthetic-${window}`, session.messages, session.facts, SYNTHETIC_KINDS, window, dirs);
  const names = SYNTHETIC_TABLES.get(window);
  if (names !== undefined) {
    docTables.push(
      { page: FIDELITY_PAGE, name: names.facts, rows: retentionRows(runs) },
      { page: FIDELITY_PAGE, name: names.cost, rows: costRows(runs) },
      { page: FIDELITY_PAGE, name: names.summaries, rows: summarySeriesRows(runs) },
    );
    if (names.matrix !== undefined) docTables.push({ page: FIDELITY_PAGE, name: names.matrix, rows: factMatrixRows(runs) });
  }
  if (window === 32_000) docTables.push({ page: "docs/choosing-a-preset.md", name: "choosing-a-preset-fidelity", rows: choosingRows(runs) });
  print(
    `## Synthetic session: ${session.messages.length} messages, ${session.tokens.toLocaleString("en-US")} tokens (${(session.tokens / window).toFixed(1)}× a ${window.toLocaleString("en-US")} window, reserve ${reserveFor(window).toLocaleString("en-US")}), seed ${SEED}, ${session.facts.length} facts; ${((performance.now() - started) / 1000).toFixed(1)} s`,
    runs,
    true,
  );
}

function loadTranscript(file: string): PiMessage[] | undefined {
  return ALL_FIXTURES.includes(file) ? loadFixtureAsPi(file, { usage: false }) : undefined;
}

/**
 * docs/choosing-a-preset.md's table of the synthetic run: all facts, the largest context held and
 * request sent as shares of the window, compactions (and the runs that wrote nothing).
 */
function choosingRows(runs: readonly RunResult[]): string[][] {
  const share = (n: number, window: number): string => `${Math.round((100 * n) / window)}%`;
  return [
    ["preset", "all facts: in context / found by search / lost", "largest context held", "largest request sent", "compactions"],
    ...runs.map(({ outcome, shares }) => {
      const all = shares.find((s) => s.kind === "all");
      const idle = idleRuns(outcome);
      return [
        outcome.shaping === null ? `${outcome.name} (baseline, sends what it holds)` : outcome.name,
        all === undefined ? "-" : sharesCell(all).replace(/(\d+)/g, "$1%"),
        share(outcome.peakHeldTokens, outcome.window),
        share(outcome.peakSentTokens, outcome.window),
        idle === 0 ? String(outcome.compactions.length) : `${outcome.compactions.length} (+${idle} runs that did nothing)`,
      ];
    }),
  ];
}

/** One real transcript's runs, for docs/fidelity.md's two pivots. */
interface RealRuns {
  readonly label: string;
  readonly window: number;
  readonly facts: number;
  readonly runs: readonly RunResult[];
}

/**
 * docs/fidelity.md's tables of the real transcripts: a transcript per row, a preset per column;
 * all facts (% in context / found / lost), then compactions (runs that wrote nothing) with
 * safeguard's largest context held and request sent.
 */
function realTables(real: readonly RealRuns[]): DocTable[] {
  const names = (real[0]?.runs ?? []).map((run) => run.outcome.name);
  const over = (n: number, window: number): string => `${ofWindow(n, window)}${n > window ? " OVER" : ""}`;
  const facts = [
    ["transcript, window", ...names],
    ...real.map((one) => [
      `${one.label}, ${one.window.toLocaleString("en-US")} (${one.facts} facts)`,
      ...one.runs.map((run) => {
        const all = run.shares.find((s) => s.kind === "all");
        return all === undefined ? "-" : sharesCell(all);
      }),
    ]),
  ];
  const compactions = [
    ["transcript", ...names, "largest context held (safeguard)", "largest request sent (safeguard)"],
    ...real.map((one) => {
      const safeguard = one.runs.find((run) => run.outcome.name === "safeguard")?.outcome;
      return [
        one.label,
        ...one.runs.map(({ outcome }) => `${outcome.compactions.length} (${idleRuns(outcome)})`),
        safeguard === undefined ? "-" : over(safeguard.peakHeldTokens, safeguard.window),
        safeguard === undefined ? "-" : over(safeguard.peakSentTokens, safeguard.window),
      ];
    }),
  ];
  return [
    { page: FIDELITY_PAGE, name: "fidelity-real-facts", rows: facts },
    { page: FIDELITY_PAGE, name: "fidelity-real-compactions", rows: compactions },
  ];
}

async function real(dirs: Dirs): Promise<void> {
  const measured: RealRuns[] = [];
  for (const file of FIXTURES) {
    const started = performance.now();
    const messages = loadTranscript(file);
    if (messages === undefined) {
      console.log(`\n## ${file}: not a known fixture (known: ${ALL_FIXTURES.join(", ")}); skipped`);
      continue;
    }
    const size = tokens.total(messages);
    const window = Math.round(size / REAL_RATIO);
    if (window < MIN_WINDOW) {
      console.log(`\n## ${file}: ${size.toLocaleString("en-US")} tokens; skipped: 1/${REAL_RATIO} of it is under the ${MIN_WINDOW.toLocaleString("en-US")}-token minimum window`);
      continue;
    }
    const facts = realFacts(messages);
    const runs = await runAll(file.replace(/\.jsonl$/, ""), messages, facts, REAL_KINDS, window, dirs);
    measured.push({ label: file.replace(/\.jsonl$/, ""), window, facts: facts.length, runs });
    print(
      `## ${file}: ${messages.length} messages, ${size.toLocaleString("en-US")} tokens (${REAL_RATIO}× a ${window.toLocaleString("en-US")} window, reserve ${reserveFor(window).toLocaleString("en-US")}), ${facts.length} facts; ${((performance.now() - started) / 1000).toFixed(1)} s`,
      runs,
      MATRIX_REAL,
    );
  }
  docTables.push(...realTables(measured));
}

async function main(): Promise<void> {
  const started = performance.now();
  console.log(`# Fidelity benchmark: node ${process.version}, ${COUNTER} token counts, extractive summarizer, presets ${PRESETS.join(", ")} and truncation (${TRUNCATE.trigger * 100}% → ${TRUNCATE.target * 100}%)`);
  const tmpRoot = fileURLToPath(new URL("../.tmp/", import.meta.url));
  mkdirSync(tmpRoot, { recursive: true });
  const dirs = { projects: mkdtempSync(join(tmpRoot, "fidelity-")), sessions: mkdtempSync(join(tmpdir(), "fidelity-sessions-")) };
  try {
    if (MODEL_SUMMARIES) {
      console.log("\n## The extractive summary beside pi's model-written summaries (pi-before-compaction.jsonl, same spans)\n");
      const table = await modelSummaryTable(tokens.counter);
      console.log(table.text);
      docTables.push({ page: FIDELITY_PAGE, name: "fidelity-handover", rows: table.rows });
    }
    for (const window of WINDOWS) await synthetic(dirs, window);
    if (REAL) await real(dirs);
  } finally {
    rmSync(dirs.projects, { recursive: true, force: true });
    rmSync(dirs.sessions, { recursive: true, force: true });
    tokens.counter.dispose();
  }
  writeDocTables(import.meta.url, NARROWING, docTables);
  console.log(`\nDone in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
}

await main();
