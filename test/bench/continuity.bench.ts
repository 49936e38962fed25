/**
 * Continuity benchmark: of the identifiers the agent of a real recording went on to use
 * from memory, the share a compacted context still held. Run: `cd test && npx tsx
 * bench/continuity.bench.ts` (also part of `npm run bench`). The measure and the identifier rule
 * are `@compaction/replay`'s `continuity.ts` and `continuity-identifiers.ts`.
 *
 * Per real transcript, at a window it outgrows (WINDOW_OF), the probe's cut points (6 model
 * calls evenly spaced past the first window), measured:
 * - in a loop: the transcript replayed through an in-memory context manager per preset (usage
 *   stripped, since it describes the original), the request sent at each cut point scored;
 * - at once: the history up to the cut compacted in one `compactor.compact()` at the window it
 *   overflows, then shaped with `compactor.shapeRequest` (a switch to a smaller model, an
 *   overflow recovery);
 * beside truncation to half the window (the newest messages that fit in it) and the whole
 * history; and at the two real compactions of pi-before-compaction.jsonl, what pi itself sent
 * on the real continuation (its model's summary and the messages it kept) beside the presets at
 * once and truncation at the same cut. The long-memory part (needed identifiers the newest quarter
 * of the window does not show) is split out. Rolling's recall: of the long memory rolling's
 * request lacks at a cut, the share `memory_search` returns in its top 5 (snippets, and the whole
 * entries the hits name) when queried with the words of the user request the agent is answering.
 *
 * Targets, printed as MET / NOT MET: at once, no preset keeps less than truncation to
 * half the window (per transcript); layered keeps at least what safeguard keeps (at once, per
 * transcript); in a loop, no preset loses more than 1 point against the baseline figures recorded
 * per transcript and preset (`continuity.baseline.json`; `CONTINUITY_RECORD=1` rewrites it).
 *
 * Environment (optional): CONTINUITY_FIXTURES, CONTINUITY_PRESETS (comma lists), CONTINUITY_CUTS;
 * CONTINUITY_MISSED=1 also prints, per transcript and preset in a loop, the identifiers the
 * requests lacked at each cut (what a mechanism should keep). BENCH_DOCS=1 writes the tables of
 * docs/continuity.md (on the full run only), BENCH_DOCS=print prints them (see support/doc-tables.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createCompactor, createPiAdapter, createTiktokenCounter, FactsCache, MessageTokenCounter, type PiMessage } from "@compaction/core";
import { ALL_FIXTURES, FIXTURES_DIR, loadFixtureAsPi } from "@compaction/fixtures";
import { type ContinuityProbe as Probe, ContinuityProbe, type ContinuityScore, contextManagerPolicy, type ContinuityTotals, sumScores, replaySession, withoutUsage } from "@compaction/replay";
import { printTable } from "./print-table.js";
import { recallOfLongMemory, type RecallMeasure } from "./continuity-recall.js";
import { type DocTable, writeDocTables } from "./support/doc-tables.js";

const list = (name: string, fallback: readonly string[]): string[] =>
  (process.env[name]?.trim() ? (process.env[name] as string).split(",") : [...fallback]).map((s) => s.trim()).filter(Boolean);

const FIXTURES = list("CONTINUITY_FIXTURES", ALL_FIXTURES);
const PRESETS = list("CONTINUITY_PRESETS", ["safeguard", "layered", "sliding-window", "rolling"]);
const CUTS = Number(process.env["CONTINUITY_CUTS"] ?? 6);
/** The variables that narrow the run: with one set, the docs' tables are not written. */
const NARROWING = ["CONTINUITY_FIXTURES", "CONTINUITY_PRESETS", "CONTINUITY_CUTS"];
/**
 * The window each transcript is replayed at: the largest of 128k, 64k and 32k it outgrows by half
 * (the issue's windows), and for the short transcripts a small one they outgrow (by about twice:
 * 16k for the two of 36k, 4k for the two of 5k and 10k).
 */
const WINDOW_OF: Readonly<Record<string, number>> = {
  "pi-large-session.jsonl": 64_000,
  "pi-before-compaction.jsonl": 128_000,
  "claude-code-log-37f83ec9.jsonl": 32_000,
  "claude-code-deep-manifest-a7da6a22.jsonl": 32_000,
  "claude-code-worktrees-ef958aa1.jsonl": 8_000,
  "claude-code-viewer-fe5e1c67.jsonl": 4_000,
  "claude-code-log-fe869ecb.jsonl": 16_000,
  "claude-code-me-next-9e953218.jsonl": 32_000,
  "claude-code-soundrecorder-7acd37a8.jsonl": 16_000,
  "claude-code-entire-review-847ff7d2.jsonl": 64_000,
  "claude-code-entire-attribution-6113e919.jsonl": 128_000,
  "claude-code-entire-openclaw-ca8cc13b.jsonl": 64_000,
  "codex-pomodoro-example.jsonl": 4_000,
};
/** The config's default reserve, or a quarter of a window too small for it. */
const reserveOf = (window: number): number => Math.min(16_384, Math.floor(window / 4));

const TEST_ROOT = fileURLToPath(new URL("..", import.meta.url));
const BASELINE = fileURLToPath(new URL("./continuity.baseline.json", import.meta.url));
const tokens = new MessageTokenCounter(new FactsCache(createPiAdapter()), createTiktokenCounter());
const factsOf = (m: PiMessage) => tokens.facts.of(m);
const tokensOf = (m: PiMessage) => tokens.count(m);

function load(file: string): PiMessage[] {
  return loadFixtureAsPi(file, { usage: false });
}

/** A preset as a user configures it: a `.compactionrc.json` in a project folder inside the repo (so presets resolve). */
function presetProject(preset: string, window: number, projects: string): string {
  const cwd = mkdtempSync(join(projects, `${preset}-`));
  writeFileSync(join(cwd, "package.json"), JSON.stringify({ name: "continuity-bench-project", private: true }));
  writeFileSync(join(cwd, ".compactionrc.json"), JSON.stringify({ preset, adapter: "pi", contextWindow: window, reserveTokens: reserveOf(window) }));
  return cwd;
}

/** The newest messages before the cut whose tokens fit in `budget`. */
function truncated(history: readonly PiMessage[], budget: number): PiMessage[] {
  let start = history.length;
  let held = 0;
  while (start > 0 && held + tokensOf(history[start - 1] as PiMessage) <= budget) held += tokensOf(history[--start] as PiMessage);
  return history.slice(start);
}

/** The history up to the cut compacted in one call at `window`, then shaped as a host sends it. */
async function atOnce(cwd: string, history: readonly PiMessage[]): Promise<PiMessage[]> {
  const compactor = await createCompactor<PiMessage>({ cwd });
  try {
    const result = await compactor.compact({ messages: history, trigger: "auto" });
    if (result.status === "failed") throw new Error(`at once: ${result.reason ?? "failed"}`);
    return [...compactor.shapeRequest(result.messages).messages];
  } finally {
    compactor.dispose();
  }
}

interface Row {
  readonly fixture: string;
  readonly window: number;
  readonly mode: "loop" | "at once" | "pi's cut";
  readonly policy: string;
  readonly scores: readonly ContinuityScore[];
  readonly recall?: RecallMeasure;
}

const pct = (share: number | undefined): string => (share === undefined ? "-" : `${(share * 100).toFixed(1)}%`);
const ofTotal = (kept: number, total: number, share: number | undefined): string => `${pct(share)} (${kept}/${total})`;
const meanTokens = (scores: readonly ContinuityScore[]): string =>
  scores.length === 0 ? "-" : Math.round(scores.reduce((sum, s) => sum + s.contextTokens, 0) / scores.length).toLocaleString("en-US");

function rowCells(row: Row): string[] {
  const t = sumScores(row.scores);
  return [row.fixture.replace(/\.jsonl$/, ""), `${row.window / 1000}k`, row.policy, String(t.cuts), ofTotal(t.kept, t.needed, t.share), ofTotal(t.longMemoryKept, t.longMemory, t.longMemoryShare), meanTokens(row.scores)];
}

/** The two real compactions of pi-before-compaction.jsonl: the cut (messages before the entry) and what pi sent after it. */
function piCompactions(): { cut: number; context: PiMessage[]; label: string }[] {
  const entries = readFileSync(join(FIXTURES_DIR, "pi-before-compaction.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const found: { cut: number; context: PiMessage[]; label: string }[] = [];
  let messagesBefore = 0;
  entries.forEach((entry, index) => {
    if (entry["type"] === "message") messagesBefore += 1;
    if (entry["type"] !== "compaction") return;
    const kept = entries
      .slice(Number(entry["firstKeptEntryIndex"]), index)
      .filter((e) => e["type"] === "message")
      .map((e) => e["message"] as PiMessage);
    const summary = { role: "compactionSummary", summary: String(entry["summary"]), tokensBefore: Number(entry["tokensBefore"]), timestamp: 0 } as PiMessage;
    found.push({ cut: messagesBefore, context: withoutUsage([summary, ...kept]), label: `compaction ${found.length + 1} (entry ${index})` });
  });
  return found;
}

async function main(): Promise<void> {
  const projects = mkdtempSync(join(TEST_ROOT, ".continuity-bench-"));
  const recallDir = mkdtempSync(join(tmpdir(), "continuity-recall-"));
  const rows: Row[] = [];
  try {
    for (const fixture of FIXTURES) {
      const messages = load(fixture);
      const window = WINDOW_OF[fixture] ?? 128_000;
      const probe = ContinuityProbe.of(messages, { factsOf, tokensOf, window, cutPoints: CUTS });
      const cwds = new Map(PRESETS.map((preset) => [preset, presetProject(preset, window, projects)]));
      for (const preset of PRESETS) {
        const recorder = probe.recorder();
        const requests = new Map<number, readonly PiMessage[]>();
        const policy = contextManagerPolicy(preset, () => createCompactor<PiMessage>({ cwd: cwds.get(preset) as string }), window);
        await replaySession(messages, policy, {
          tokensOf,
          factsOf,
          onCall: (call) => {
            recorder.onCall(call);
            if (probe.cutAt(call.index) !== undefined) requests.set(call.index, [...call.request]);
          },
        });
        const recall = preset === "rolling" ? await recallOfLongMemory(probe, messages, requests, { factsOf, dir: recallDir }) : undefined;
        rows.push({ fixture, window, mode: "loop", policy: preset, scores: recorder.scores(), ...(recall === undefined ? {} : { recall }) });
      }
      rows.push(...(await atOnceRows(fixture, window, messages, probe, cwds)));
      if (fixture === "pi-before-compaction.jsonl") {
        for (const real of piCompactions()) {
          const at = ContinuityProbe.of(messages, { factsOf, tokensOf, window, at: [real.cut] });
          const label = `pi-before-compaction ${real.label}`;
          rows.push({ fixture: label, window, mode: "pi's cut", policy: "pi (model summary + kept)", scores: [at.score(real.cut, real.context)] });
          rows.push(...(await atOnceRows(label, window, messages, at, cwds)).map((row) => ({ ...row, mode: "pi's cut" as const })));
        }
      }
    }
  } finally {
    rmSync(projects, { recursive: true, force: true });
    rmSync(recallDir, { recursive: true, force: true });
  }
  report(rows);
  tokens.counter.dispose?.();
}

async function atOnceRows(fixture: string, window: number, messages: readonly PiMessage[], probe: Probe<PiMessage>, cwds: ReadonlyMap<string, string>): Promise<Row[]> {
  const rows: Row[] = [];
  for (const preset of PRESETS) {
    const scores: ContinuityScore[] = [];
    for (const cut of probe.cuts) scores.push(probe.score(cut, await atOnce(cwds.get(preset) as string, messages.slice(0, cut.index))));
    rows.push({ fixture, window, mode: "at once", policy: preset, scores });
  }
  rows.push({ fixture, window, mode: "at once", policy: "truncation to half the window", scores: probe.cuts.map((cut) => probe.score(cut, truncated(messages.slice(0, cut.index), window / 2))) });
  rows.push({ fixture, window, mode: "at once", policy: "whole history", scores: probe.cuts.map((cut) => probe.score(cut, messages.slice(0, cut.index))) });
  return rows;
}

const HEADER = ["transcript", "window", "policy", "cuts", "needed next, held", "long memory, held", "mean context tokens"];

function report(rows: readonly Row[]): void {
  const byMode = (mode: Row["mode"]) => rows.filter((r) => r.mode === mode);
  printTable("Continuity in a loop: the request sent at each cut point, replayed through the context manager", [HEADER, ...byMode("loop").map(rowCells), ...totalsRows(byMode("loop"))]);
  printTable("Continuity at once: the history up to the cut compacted in one call at a window it overflows", [HEADER, ...byMode("at once").map(rowCells), ...totalsRows(byMode("at once"))]);
  printTable("At pi's two real compactions (pi-before-compaction.jsonl): what pi sent beside the presets at once", [HEADER, ...byMode("pi's cut").map(rowCells)]);
  if (process.env["CONTINUITY_MISSED"] === "1") {
    console.log("\nIn a loop, what the request lacked at each cut point (cut index: identifiers)");
    for (const row of byMode("loop")) {
      const lacked = row.scores.filter((s) => s.missed.length > 0).map((s) => `${s.index}: ${s.missed.join(" ")}`);
      console.log(`- ${row.fixture} ${row.policy}: ${lacked.length === 0 ? "nothing" : lacked.join(" | ")}`);
    }
  }
  const recalled = rows.filter((r) => r.recall !== undefined);
  printTable("Rolling's long memory through memory_search (top 5, queried with the user request being answered)", [
    ["transcript", "window", "long memory rolling's request lacks", "in the top 5 snippets", "in the entries they name"],
    ...recalled.map((r) => {
      const m = r.recall as RecallMeasure;
      return [r.fixture.replace(/\.jsonl$/, ""), `${r.window / 1000}k`, String(m.lacking), ofTotal(m.inSnippets, m.lacking, m.lacking === 0 ? undefined : m.inSnippets / m.lacking), ofTotal(m.inEntries, m.lacking, m.lacking === 0 ? undefined : m.inEntries / m.lacking)];
    }),
  ]);
  const failures = checkTargets(rows);
  console.log(failures.length === 0 ? "\nTargets: MET" : "\nTargets:");
  for (const line of failures) console.log(`- ${line}`);
  writeDocTables(import.meta.url, NARROWING, docTables(rows));
}

const PAGE = "docs/continuity.md";

/** docs/continuity.md's tables: the console's rows pivoted, a transcript per row and a policy per column. */
function docTables(rows: readonly Row[]): DocTable[] {
  const cell = (scores: readonly ContinuityScore[] | undefined): string => {
    if (scores === undefined) return "-";
    const t = sumScores(scores);
    return `${pct(t.share)} (${pct(t.longMemoryShare)})`;
  };
  const pivot = (mode: Row["mode"], title: string, policies: readonly string[]): string[][] => {
    const of = rows.filter((r) => r.mode === mode);
    const fixtures = [...new Set(of.map((r) => r.fixture))];
    return [
      [title, ...policies],
      ...fixtures.map((fixture) => {
        const first = of.find((r) => r.fixture === fixture) as Row;
        return [`${fixture.replace(/\.jsonl$/, "")}, ${first.window / 1000}k`, ...policies.map((policy) => cell(of.find((r) => r.fixture === fixture && r.policy === policy)?.scores))];
      }),
      ["**all transcripts**", ...policies.map((policy) => cell(of.filter((r) => r.policy === policy).flatMap((r) => r.scores)))],
    ];
  };
  return [
    { page: PAGE, name: "continuity-loop", rows: pivot("loop", "in a loop: needed next (long memory)", PRESETS) },
    { page: PAGE, name: "continuity-at-once", rows: pivot("at once", "at once: needed next (long memory)", [...PRESETS, "truncation to half the window"]) },
    { page: PAGE, name: "continuity-pi-compactions", rows: piCompactionsTable(rows.filter((r) => r.mode === "pi's cut")) },
  ];
}

/**
 * At pi's real compactions: a column pair per compaction (needed next, long memory, as kept/needed),
 * a row for pi's context, then the presets at once (those with the same cells on one row), then truncation.
 */
function piCompactionsTable(rows: readonly Row[]): string[][] {
  const labels = [...new Set(rows.map((r) => r.fixture))];
  const cellsOf = (policy: string): string[] =>
    labels.flatMap((label) => {
      const t = sumScores(rows.find((r) => r.fixture === label && r.policy === policy)?.scores ?? []);
      return [`${t.kept}/${t.needed}`, `${t.longMemoryKept}/${t.longMemory}`];
    });
  const pi = "pi (model summary + kept)";
  const piTokens = labels.map((label) => meanTokens(rows.find((r) => r.fixture === label && r.policy === pi)?.scores ?? [])).join(" / ");
  const groups: { policies: string[]; cells: string[] }[] = [];
  for (const preset of PRESETS) {
    const cells = cellsOf(preset);
    const same = groups.find((g) => g.cells.join("|") === cells.join("|"));
    if (same === undefined) groups.push({ policies: [preset], cells });
    else same.policies.push(preset);
  }
  return [
    ["", ...labels.flatMap((_, i) => [`compaction ${i + 1}: needed next`, "long memory"])],
    [`pi (its model's summary + kept, ${piTokens} tokens)`, ...cellsOf(pi)],
    ...groups.map((g) => [g.policies.join(", "), ...g.cells]),
    ["truncation to half the window", ...cellsOf("truncation to half the window")],
  ];
}

/** Every transcript summed, per policy. */
function totalsRows(rows: readonly Row[]): string[][] {
  const policies = [...new Set(rows.map((r) => r.policy))];
  return policies.map((policy) => {
    const t = sumScores(rows.filter((r) => r.policy === policy).flatMap((r) => r.scores));
    return ["all transcripts", "", policy, String(t.cuts), ofTotal(t.kept, t.needed, t.share), ofTotal(t.longMemoryKept, t.longMemory, t.longMemoryShare), ""];
  });
}

type Baseline = Record<string, Record<string, number>>;

/** The issue's targets: one MET / NOT MET line each, the misses named. */
function checkTargets(rows: readonly Row[]): string[] {
  const lines: string[] = [];
  const share = (t: ContinuityTotals): number => t.share ?? 1;
  const atOnce = rows.filter((r) => r.mode === "at once");
  const totalOf = (fixture: string, policy: string) => sumScores(atOnce.find((r) => r.fixture === fixture && r.policy === policy)?.scores ?? []);
  const fixtures = [...new Set(atOnce.map((r) => r.fixture))];
  const underTruncation: string[] = [];
  const underSafeguard: string[] = [];
  for (const fixture of fixtures) {
    const truncation = share(totalOf(fixture, "truncation to half the window"));
    for (const preset of PRESETS) {
      const mine = share(totalOf(fixture, preset));
      if (mine < truncation) underTruncation.push(`${fixture} ${preset} ${pct(mine)} < ${pct(truncation)}`);
    }
    if (PRESETS.includes("layered") && PRESETS.includes("safeguard")) {
      const layered = share(totalOf(fixture, "layered"));
      const safeguard = share(totalOf(fixture, "safeguard"));
      if (layered < safeguard) underSafeguard.push(`${fixture} layered ${pct(layered)} < safeguard ${pct(safeguard)}`);
    }
  }
  lines.push(`${underTruncation.length === 0 ? "MET" : "NOT MET"}: at once, no preset keeps less than truncation to half the window${underTruncation.length === 0 ? "" : ` (${underTruncation.join("; ")})`}`);
  lines.push(`${underSafeguard.length === 0 ? "MET" : "NOT MET"}: at once, layered keeps at least what safeguard keeps${underSafeguard.length === 0 ? "" : ` (${underSafeguard.join("; ")})`}`);

  const loop = rows.filter((r) => r.mode === "loop");
  const now: Baseline = {};
  for (const row of loop) (now[row.fixture] ??= {})[row.policy] = share(sumScores(row.scores));
  if (process.env["CONTINUITY_RECORD"] === "1") {
    writeFileSync(BASELINE, `${JSON.stringify(now, null, 2)}\n`);
    lines.push(`recorded the loop's shares as the baseline in ${BASELINE}`);
    return lines;
  }
  let baseline: Baseline;
  try {
    baseline = JSON.parse(readFileSync(BASELINE, "utf8")) as Baseline;
  } catch (error) {
    lines.push(`NOT MET: in a loop, no baseline to compare with (${(error as Error).message}); run once with CONTINUITY_RECORD=1 on the commit to compare against`);
    return lines;
  }
  const lost: string[] = [];
  for (const [fixture, policies] of Object.entries(now)) {
    for (const [policy, value] of Object.entries(policies)) {
      const before = baseline[fixture]?.[policy];
      if (before !== undefined && value < before - 0.01) lost.push(`${fixture} ${policy} ${pct(value)} < ${pct(before)} - 1 point`);
    }
  }
  lines.push(`${lost.length === 0 ? "MET" : "NOT MET"}: in a loop, no preset loses more than 1 point against the baseline${lost.length === 0 ? "" : ` (${lost.join("; ")})`}`);
  return lines;
}

await main();
