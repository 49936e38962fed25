/**
 * Background compaction benchmark (issue 41): every real transcript replayed on its own clock (the
 * recorded timestamps; Claude Code's per line) at the windows it outgrows, through each preset
 * with a model summarizer whose every call takes L seconds (the real @compaction/plugin-summarizer-
 * openai against a local OpenAI-compatible server, time simulated: bench/background/ and replayTimed), once as
 * hosts compact today (blocking: the agent waits for the summary at the threshold) and once with
 * background compaction (prepared past the prepare mark, applied at the threshold, and compacted
 * when the prompt cache went cold). Run: `cd test && npx tsx bench/background.bench.ts` (also part
 * of `npm run bench`, limited by its environment there).
 *
 * Per (transcript, window, preset, L, mode): compactions, seconds the agent waited for them, the
 * share of compactions with no wait, billed input (Anthropic's prices, base-price tokens) with the
 * cache expiring 5 minutes and 1 hour after the last request, the summarizer's own input, dropped
 * preparations, and continuity (what the agent needed next that the request held). Then the
 * issue's targets at L = 30 s, 64k and 128k, MET / NOT MET.
 *
 * Environment (optional, comma lists): BACKGROUND_FIXTURES (file names), BACKGROUND_WINDOWS
 * (tokens; default 64000,128000), BACKGROUND_PRESETS (default safeguard,layered,sliding-window,
 * rolling), BACKGROUND_LATENCIES (seconds; default 5,30,90), BACKGROUND_CACHE_TTL (the host's
 * cacheTtlMs in seconds, default 300), BACKGROUND_DEBUG=1 (a line per compaction on stderr).
 * BENCH_DOCS=1 writes docs/background-compaction.md's table (the second one printed; on the full
 * run only), BENCH_DOCS=print prints it (see support/doc-tables.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createCompactor, createPiAdapter, createTiktokenCounter, FactsCache, MessageTokenCounter, type PiMessage } from "@compaction/core";
import { ALL_FIXTURES, loadFixtureAsPi } from "@compaction/fixtures";
import { ContinuityProbe, type Mode, replayTimed, type TimedResult } from "@compaction/replay";
import { printTable } from "./print-table.js";
import { writeDocTables } from "./support/doc-tables.js";
import { TimedModelServer } from "./background/timed-model.js";
import { k, pct, pooled, short } from "./windows/targets.js";

const list = (name: string, fallback: readonly (string | number)[]): string[] =>
  (process.env[name]?.trim() ? (process.env[name] as string).split(",") : fallback.map(String)).map((s) => s.trim()).filter(Boolean);

const FIXTURES = list("BACKGROUND_FIXTURES", ALL_FIXTURES);
const WINDOWS = list("BACKGROUND_WINDOWS", [64_000, 128_000]).map(Number);
const PRESETS = list("BACKGROUND_PRESETS", ["safeguard", "layered", "sliding-window", "rolling"]);
const LATENCIES = list("BACKGROUND_LATENCIES", [5, 30, 90]).map(Number);
const CACHE_TTL_MS = Number(process.env["BACKGROUND_CACHE_TTL"] ?? 300) * 1000;
const MODES: readonly Mode[] = ["blocking", "background"];
/** BACKGROUND_DEBUG=1: one line per compaction on stderr. */
const DEBUG = process.env["BACKGROUND_DEBUG"] === "1";
/** The variables that narrow the run (or change what it measures): with one set, the docs' table is not written. */
const NARROWING = ["BACKGROUND_FIXTURES", "BACKGROUND_WINDOWS", "BACKGROUND_PRESETS", "BACKGROUND_LATENCIES", "BACKGROUND_CACHE_TTL"];

const TEST_ROOT = fileURLToPath(new URL("..", import.meta.url));
const counter = createTiktokenCounter();
const tokens = new MessageTokenCounter(new FactsCache(createPiAdapter()), counter);
const tokensOf = (message: PiMessage): number => tokens.count(message);

interface Row extends TimedResult {
  readonly fixture: string;
  readonly window: number;
  readonly preset: string;
  readonly latencyS: number;
  readonly mode: Mode;
  readonly error?: string;
}

/** A project as a user sets it up: the preset, the adapter, the window, and the model summarizer at the local server. */
function project(preset: string, window: number, root: string, baseUrl: string): string {
  const cwd = mkdtempSync(join(root, `${preset}-${k(window)}-`));
  writeFileSync(join(cwd, "package.json"), JSON.stringify({ name: "background-bench-project", private: true }));
  writeFileSync(
    join(cwd, ".compactionrc.json"),
    JSON.stringify({ preset, adapter: "pi", contextWindow: window, plugins: [["summarizer-openai", { model: "bench-model", baseUrl, maxRetries: 0, timeoutMs: 0 }]] }),
  );
  return cwd;
}

async function main(): Promise<void> {
  const started = performance.now();
  const root = mkdtempSync(join(TEST_ROOT, ".background-bench-"));
  const server = await TimedModelServer.start();
  const rows: Row[] = [];
  try {
    for (const fixture of FIXTURES) {
      const messages = loadFixtureAsPi(fixture, { usage: false, recordedTimes: true });
      const facts = messages.map((message) => tokens.facts.of(message));
      const size = messages.reduce((sum, message) => sum + tokensOf(message), 0);
      for (const window of WINDOWS.filter((w) => size > w)) {
        const probe = ContinuityProbe.of(messages, { factsOf: (m) => tokens.facts.of(m), tokensOf, window });
        for (const preset of PRESETS) {
          const cwd = project(preset, window, root, server.baseUrl);
          for (const latencyS of LATENCIES) {
            for (const mode of MODES) {
              const key = { fixture, window, preset, latencyS, mode };
              const t0 = performance.now();
              let compactor;
              try {
                compactor = await createCompactor<PiMessage>({ cwd });
                const result = await replayTimed({ messages, facts, tokensOf, probe, compactor, window, mode, latencyMs: latencyS * 1000, server, cacheTtlMs: CACHE_TTL_MS, ...(DEBUG ? { onCompaction: (line: string) => process.stderr.write(`    ${line}\n`) } : {}) });
                rows.push({ ...key, ...result });
              } catch (error) {
                rows.push({ ...key, ...EMPTY, error: (error as Error).message });
              } finally {
                compactor?.dispose();
              }
              const row = rows[rows.length - 1] as Row;
              process.stderr.write(
                `[${((performance.now() - started) / 1000).toFixed(0)} s] ${short(fixture)} ${k(window)} ${preset} L=${latencyS}s ${mode}: ${row.error ?? `${row.compactions} compactions, waited ${row.waitedS.toFixed(0)} s`} (${((performance.now() - t0) / 1000).toFixed(1)} s)\n`,
              );
            }
          }
        }
      }
    }
  } finally {
    await server.close();
    rmSync(root, { recursive: true, force: true });
    counter.dispose?.();
  }
  report(rows);
  console.log(`\nRun time: ${((performance.now() - started) / 60_000).toFixed(1)} min (${rows.length} replays)`);
}

const EMPTY: TimedResult = {
  compactions: 0,
  noWait: 0,
  waitedS: 0,
  billed5m: 0,
  billed1h: 0,
  summarizerInput: 0,
  dropped: 0,
  droppedWhy: [],
  continuity: { cuts: 0, needed: 0, kept: 0, longMemory: 0, longMemoryKept: 0, share: undefined, longMemoryShare: undefined },
  calls: 0,
};

const count = (n: number): string => Math.round(n).toLocaleString("en-US");
const share = (part: number, whole: number): string => (whole === 0 ? "-" : pct(part / whole));

function report(rows: readonly Row[]): void {
  printTable("Per replay: blocking (compact at the threshold, the agent waits) and background (prepared past the prepare mark)", [
    ["transcript", "window", "preset", "L", "mode", "compactions", "waited s", "no wait", "billed 5m", "billed 1h", "summarizer in", "dropped", "continuity"],
    ...rows.map((r) =>
      r.error !== undefined
        ? [short(r.fixture), k(r.window), r.preset, `${r.latencyS}s`, r.mode, `error: ${r.error.slice(0, 120)}`]
        : [short(r.fixture), k(r.window), r.preset, `${r.latencyS}s`, r.mode, String(r.compactions), r.waitedS.toFixed(0), share(r.noWait, r.compactions), count(r.billed5m), count(r.billed1h), count(r.summarizerInput), String(r.dropped), pct(r.continuity.share)],
    ),
  ]);

  const groups: string[][] = [];
  for (const window of WINDOWS) {
    for (const preset of PRESETS) {
      for (const latencyS of LATENCIES) {
        for (const mode of MODES) {
          const group = rows.filter((r) => r.error === undefined && r.window === window && r.preset === preset && r.latencyS === latencyS && r.mode === mode);
          if (group.length === 0) continue;
          const sum = (f: (r: Row) => number) => group.reduce((s, r) => s + f(r), 0);
          groups.push([
            k(window),
            preset,
            `${latencyS}s`,
            mode,
            String(group.length),
            String(sum((r) => r.compactions)),
            sum((r) => r.waitedS).toFixed(0),
            share(sum((r) => r.noWait), sum((r) => r.compactions)),
            count(sum((r) => r.billed5m)),
            count(sum((r) => r.billed1h)),
            String(sum((r) => r.dropped)),
            pct(pooled(group.map((r) => r.continuity))),
          ]);
        }
      }
    }
  }
  const perPreset = [["window", "preset", "L", "mode", "transcripts", "compactions", "waited s", "no wait", "billed 5m", "billed 1h", "dropped", "continuity"], ...groups];
  printTable("Per preset, summed over the transcripts (continuity pooled: kept / needed)", perPreset);
  writeDocTables(import.meta.url, NARROWING, [{ page: "docs/background-compaction.md", name: "background-per-preset", rows: perPreset }]);

  console.log("\nTargets (L = 30 s, every transcript at 64k and 128k, background against blocking)");
  for (const line of targets(rows)) console.log(`- ${line}`);
  const why = new Map<string, number>();
  for (const r of rows) for (const reason of r.droppedWhy) {
    const words = reason.replace(/\d[\d,.]*/g, "#");
    why.set(words, (why.get(words) ?? 0) + 1);
  }
  if (why.size > 0) {
    console.log("\nWhy prepared compactions were dropped (numbers left out)");
    for (const [reason, n] of [...why].sort((a, b) => b[1] - a[1])) console.log(`- ${n}x ${reason}`);
  }
  const failed = rows.filter((r) => r.error !== undefined);
  if (failed.length > 0) console.log(`\n${failed.length} replays could not run; first: ${failed[0]?.error}`);
}

function targets(rows: readonly Row[]): string[] {
  const pairs = rows
    .filter((r) => r.mode === "background" && r.latencyS === 30 && (r.window === 64_000 || r.window === 128_000) && r.error === undefined)
    .map((bg) => ({ bg, bl: rows.find((r) => r.mode === "blocking" && r.error === undefined && r.fixture === bg.fixture && r.window === bg.window && r.preset === bg.preset && r.latencyS === bg.latencyS) }))
    .filter((p): p is { bg: Row; bl: Row } => p.bl !== undefined);
  if (pairs.length === 0) return ["no replay at L = 30 s at 64k or 128k ran (set BACKGROUND_LATENCIES and BACKGROUND_WINDOWS to include them)"];
  const name = (p: { bg: Row }) => `${short(p.bg.fixture)} ${k(p.bg.window)} ${p.bg.preset}`;
  const verdict = (label: string, misses: string[]) => `${misses.length === 0 ? "MET" : "NOT MET"}: ${label}${misses.length === 0 ? "" : ` (misses: ${misses.join("; ")})`}`;
  const noWait = pairs.filter((p) => p.bg.compactions > 0 && p.bg.noWait / p.bg.compactions < 0.95).map((p) => `${name(p)} ${share(p.bg.noWait, p.bg.compactions)}`);
  const waited = pairs.filter((p) => p.bg.waitedS > 0.05 * p.bl.waitedS).map((p) => `${name(p)} ${p.bg.waitedS.toFixed(0)} s of ${p.bl.waitedS.toFixed(0)} s`);
  const continuity = pairs
    .filter((p) => (p.bg.continuity.share ?? 0) < (p.bl.continuity.share ?? 0) - 0.01)
    .map((p) => `${name(p)} ${pct(p.bg.continuity.share)} against ${pct(p.bl.continuity.share)}`);
  const billed = pairs.filter((p) => p.bg.billed5m > p.bl.billed5m).map((p) => `${name(p)} ${count(p.bg.billed5m)} against ${count(p.bl.billed5m)}`);
  return [
    verdict("at least 95% of compactions cost the agent no wait, on every transcript", noWait),
    verdict("the total wait is at most 5% of blocking's, on every transcript", waited),
    verdict("continuity within 1 point of blocking's, on every transcript", continuity),
    verdict("billed input with a 5-minute cache no higher than blocking's, on every transcript", billed),
  ];
}

await main();
