/**
 * Every window benchmark: every real transcript replayed at every window it outgrows,
 * through every built-in preset with the default config, by the two hosts (the context manager and
 * the AI SDK integration), with what a user would ask of compaction at that window. Run:
 * `cd test && npx tsx bench/windows.bench.ts` (also part of `npm run bench`).
 *
 * The config is what a user writes and no more: a `.compactionrc.json` holding `preset`,
 * `adapter: "pi"` and `contextWindow` (no `reserveTokens`: the default reserve is what is measured;
 * where it cannot fit the window, the cell could not run, and says why). Each transcript is the
 * whole recorded conversation as pi messages (`loadFixtureAsPi`, usage figures left out: they
 * describe the original's requests), converted for the AI SDK by its thread entry's
 * `fromPiMessages`, and replayed by @compaction/replay (`replaySession`: messages appended in order,
 * a request at every model call of the recording); see bench/windows/hosts.ts for how each host is
 * driven. Per (transcript, window, preset, host):
 * - compactions, and failed compaction attempts in the loop + at once (a `failed` status, an
 *   error, a shaping tap that failed, an AI SDK warning after a compaction started);
 * - apart from failures: compactions that worked but left the context over the threshold (the
 *   context manager's `cannot-free` warning: a newest turn larger than the target leaves), and
 *   requests that left out older messages (COMPACTION_CONTEXT_TRIMMED);
 * - requests cut to fewer messages than fit: requests holding fewer messages than the newest
 *   messages of the history whose tokens fit in an eighth of the window (what every preset keeps
 *   verbatim beside its summary at least), with the worst one (held / fit);
 * - cache hits (share of input tokens read from the prompt cache) and misses (requests that read
 *   less than half of the previous one from it), the replay's prompt-cache measure;
 * - appended tokens (the transcript, our o200k count) and the storm bound, appended / (window/4) + 1;
 * - continuity (@compaction/replay's ContinuityProbe: of the identifiers the recorded agent went on
 *   to use from memory at 6 cut points past the window, the share the context held) in a loop (the
 *   request sent at the cut) and at once (the history up to the cut taken in one call), beside
 *   truncation to half the window (the newest messages that fit in it).
 * Then per window, pooled over the transcripts (kept / needed summed), and the targets, MET / NOT MET.
 *
 * Environment (optional, comma lists): WINDOWS_FIXTURES (file names), WINDOWS_WINDOWS (tokens),
 * WINDOWS_PRESETS, WINDOWS_HOSTS (cm, ai-sdk). Progress goes to stderr, one line per cell.
 * BENCH_DOCS=1 writes docs/numbers.md's table of this run (on the full run only), BENCH_DOCS=print
 * prints it (see support/doc-tables.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createCompactor, createTiktokenCounter, type PiMessage } from "@compaction/core";
import { ALL_FIXTURES, loadFixtureAsPi } from "@compaction/fixtures";
import { printTable } from "./print-table.js";
import { aiSdkHost, contextManagerHost, type Host, type HostName } from "./windows/hosts.js";
import { type Cell, failedCell, runCell, Subject } from "./windows/run-cell.js";
import { checkTargets, k, pct, pooled, short } from "./windows/targets.js";
import { writeDocTables } from "./support/doc-tables.js";

const list = (name: string, fallback: readonly (string | number)[]): string[] =>
  (process.env[name]?.trim() ? (process.env[name] as string).split(",") : fallback.map(String)).map((s) => s.trim()).filter(Boolean);

const FIXTURES = list("WINDOWS_FIXTURES", ALL_FIXTURES);
const WINDOWS = list("WINDOWS_WINDOWS", [8_000, 16_000, 32_000, 64_000, 128_000]).map(Number);
const PRESETS = list("WINDOWS_PRESETS", ["safeguard", "layered", "sliding-window", "rolling"]);
const HOSTS = list("WINDOWS_HOSTS", ["cm", "ai-sdk"]) as HostName[];
/** The variables that narrow the run: with one set, the docs' table is not written. */
const NARROWING = ["WINDOWS_FIXTURES", "WINDOWS_WINDOWS", "WINDOWS_PRESETS", "WINDOWS_HOSTS"];

const TEST_ROOT = fileURLToPath(new URL("..", import.meta.url));
const counter = createTiktokenCounter();

/** A project as a user sets it up: the preset, the adapter and the window, nothing else (inside the repo, so presets resolve). */
function project(preset: string, window: number, root: string): string {
  const cwd = mkdtempSync(join(root, `${preset}-${k(window)}-`));
  writeFileSync(join(cwd, "package.json"), JSON.stringify({ name: "windows-bench-project", private: true }));
  writeFileSync(join(cwd, ".compactionrc.json"), JSON.stringify({ preset, adapter: "pi", contextWindow: window }));
  return cwd;
}

/** The project's compactor's reserve for the reply, or why no compactor can be made from it. */
async function reserveOf(cwd: string): Promise<{ reserveTokens: number } | { error: string }> {
  try {
    const compactor = await createCompactor<PiMessage>({ cwd });
    const reserveTokens = compactor.reserveFor();
    compactor.dispose();
    return { reserveTokens };
  } catch (error) {
    return { error: (error as Error).message.replace(/^Invalid compaction config \S+: /, "config invalid: ") };
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  const root = mkdtempSync(join(TEST_ROOT, ".windows-bench-"));
  const hosts: Host<unknown>[] = [];
  if (HOSTS.includes("cm")) hosts.push(contextManagerHost(counter) as Host<unknown>);
  if (HOSTS.includes("ai-sdk")) hosts.push(aiSdkHost(counter) as Host<unknown>);
  const cells: Cell[] = [];
  try {
    const projects = new Map<string, { cwd: string; reserve: Awaited<ReturnType<typeof reserveOf>> }>();
    const projectOf = async (preset: string, window: number) => {
      const key = `${preset}@${window}`;
      let found = projects.get(key);
      if (found === undefined) {
        const cwd = project(preset, window, root);
        found = { cwd, reserve: await reserveOf(cwd) };
        projects.set(key, found);
      }
      return found;
    };
    // The grid: each transcript at the windows it outgrows (our count of it as pi messages).
    const piHost = contextManagerHost(counter);
    const transcripts = FIXTURES.map((fixture) => {
      const pi = loadFixtureAsPi(fixture, { usage: false });
      const size = pi.reduce((sum, message) => sum + piHost.tokensOf(message), 0);
      return { fixture, pi, windows: WINDOWS.filter((window) => size > window) };
    });
    const total = transcripts.reduce((sum, t) => sum + t.windows.length, 0);
    let done = 0;
    for (const { fixture, pi, windows } of transcripts) {
      const subjects = hosts.map((host) => new Subject(host, fixture, host.messages(pi, fixture)));
      for (const window of windows) {
        for (const preset of PRESETS) {
          const { cwd, reserve } = await projectOf(preset, window);
          for (const subject of subjects) {
            const key = { fixture, window, preset, host: subject.host.name };
            const cell = "error" in reserve ? failedCell(subject, key, reserve.error) : await runCell(subject, key, cwd);
            cells.push(cell);
            process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0)} s] ${short(fixture)} ${k(window)} ${preset}/${subject.host.name}: ${cell.error === undefined ? `${cell.compactions} compactions, ${(cell.ms / 1000).toFixed(1)} s` : "could not run"}\n`);
          }
        }
        done += 1;
        process.stderr.write(`  -- ${done}/${total} (transcript, window) done\n`);
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  report(cells);
  console.log(`\nRun time: ${((performance.now() - started) / 60_000).toFixed(1)} min (${cells.length} cells, ${cells.filter((c) => c.error === undefined).length} run)`);
  counter.dispose?.();
}

const count = (n: number): string => n.toLocaleString("en-US");
const held = (cell: Cell, mode: "loop" | "atOnce" | "truncation"): string => (cell.error !== undefined ? "-" : `${pct(cell[mode].share)} (${cell[mode].kept}/${cell[mode].needed})`);

function cellRow(cell: Cell): string[] {
  const ran = cell.error === undefined;
  const worst = cell.cut.worst === undefined ? "" : ` (worst ${cell.cut.worst.held}/${cell.cut.worst.fit})`;
  return [
    short(cell.fixture),
    k(cell.window),
    cell.preset,
    cell.host,
    ran ? count(cell.calls) : "-",
    ran ? String(cell.compactions) : "not run",
    ran ? `${cell.failed} + ${cell.failedAtOnce}` : "-",
    ran ? `${cell.overThreshold} / ${cell.trimmed}` : "-",
    ran ? `${cell.cut.count}${worst}` : "-",
    ran ? pct(cell.hitShare) : "-",
    ran ? String(cell.misses) : "-",
    count(cell.appended),
    `${cell.bound.toFixed(1)}${ran && cell.compactions > cell.bound ? " (over)" : ""}`,
    held(cell, "loop"),
    held(cell, "atOnce"),
    held(cell, "truncation"),
    ran ? (cell.ms / 1000).toFixed(1) : "-",
  ];
}

function report(cells: readonly Cell[]): void {
  printTable("Every window: each transcript at each window it outgrows, each preset, each host (cm: context manager, ai-sdk: prepareStep)", [
    ["transcript", "window", "preset", "host", "calls", "compactions", "failed (loop + at once)", "over threshold / trimmed", "cut requests", "cache hits", "cache misses", "appended", "storm bound", "continuity loop", "at once", "truncation 1/2", "s"],
    ...cells.filter((cell) => cell.error === undefined).map(cellRow),
  ]);
  const notRun = new Map<string, Cell[]>();
  for (const cell of cells.filter((c) => c.error !== undefined)) notRun.set(`${k(cell.window)}: ${cell.error}`, [...(notRun.get(`${k(cell.window)}: ${cell.error}`) ?? []), cell]);
  if (notRun.size > 0) {
    console.log("\nCells that could not run (left out of the table above)");
    for (const [why, group] of notRun) console.log(`- ${group.length} cells (${new Set(group.map((c) => c.fixture)).size} transcripts x ${new Set(group.map((c) => c.preset)).size} presets x ${new Set(group.map((c) => c.host)).size} hosts) at ${why}`);
  }

  const rows: string[][] = [];
  for (const window of WINDOWS) {
    for (const preset of PRESETS) {
      for (const host of HOSTS) {
        const group = cells.filter((c) => c.window === window && c.preset === preset && c.host === host);
        if (group.length === 0) continue;
        const ran = group.filter((c) => c.error === undefined);
        if (ran.length === 0) {
          rows.push([k(window), preset, host, `0 of ${group.length}`, "-", "-", "-", "-", "-", "-", "-"]);
          continue;
        }
        const sum = (f: (c: Cell) => number) => ran.reduce((s, c) => s + f(c), 0);
        rows.push([
          k(window),
          preset,
          host,
          `${ran.length} of ${group.length}`,
          pct(pooled(ran.map((c) => c.loop))),
          pct(pooled(ran.map((c) => c.atOnce))),
          pct(pooled(ran.map((c) => c.truncation))),
          `${sum((c) => c.failed)} + ${sum((c) => c.failedAtOnce)}`,
          String(sum((c) => c.cut.count)),
          String(ran.filter((c) => c.compactions > c.bound).length),
          String(ran.filter((c) => c.misses > c.compactions + 1).length),
        ]);
      }
    }
  }
  printTable("Per window, pooled over the transcripts that ran (continuity: kept / needed summed)", [
    ["window", "preset", "host", "transcripts run", "continuity loop", "at once", "truncation 1/2", "failed (loop + at once)", "cut requests", "storms (over bound)", "misses > compactions + 1"],
    ...rows,
  ]);

  const failing = cells.filter((cell) => cell.error === undefined && cell.failed + cell.failedAtOnce > 0);
  if (failing.length > 0) {
    console.log("\nFailed compactions, per cell (loop + at once): the first reason");
    for (const cell of failing) console.log(`- ${k(cell.window)} ${cell.preset}/${cell.host} ${short(cell.fixture)}: ${cell.failed} + ${cell.failedAtOnce}: ${cell.reasons[0] ?? ""}`);
  }

  const reasons = new Map<string, number>();
  for (const cell of cells) {
    // Numbers vary from one compaction to the next; the reasons are counted by their words.
    const words = new Set((cell.error === undefined ? cell.reasons : [`could not run: ${cell.error}`]).map((reason) => reason.replace(/\d[\d,.]*/g, "#")));
    for (const reason of words) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  }
  if (reasons.size > 0) {
    console.log("\nWhy compactions failed or cells could not run (cells, numbers left out)");
    for (const [reason, n] of [...reasons].sort((a, b) => b[1] - a[1])) console.log(`- ${n}x ${reason}`);
  }

  console.log("\nTargets");
  for (const line of checkTargets(cells)) console.log(`- ${line}`);
  writeDocTables(import.meta.url, NARROWING, [{ page: "docs/numbers.md", name: "windows-continuity", rows: continuityPerWindow(cells) }]);
}

/**
 * docs/numbers.md's table: continuity in a loop per window (a row) and preset (a column), pooled over
 * the transcripts that ran, beside truncation to half the window. The context manager's cells: the
 * AI SDK's give the same figures, as both run the same host loop.
 */
function continuityPerWindow(cells: readonly Cell[]): string[][] {
  const host: HostName = HOSTS.includes("cm") ? "cm" : (HOSTS[0] as HostName);
  const ran = cells.filter((c) => c.error === undefined && c.host === host);
  return [
    ["window", "transcripts", ...PRESETS, "truncation to half"],
    ...WINDOWS.filter((window) => ran.some((c) => c.window === window)).map((window) => {
      const at = ran.filter((c) => c.window === window);
      const ofPreset = (preset: string) => at.filter((c) => c.preset === preset);
      return [
        k(window),
        String(new Set(at.map((c) => c.fixture)).size),
        ...PRESETS.map((preset) => pct(pooled(ofPreset(preset).map((c) => c.loop)))),
        pct(pooled(ofPreset(PRESETS[0] as string).map((c) => c.truncation))),
      ];
    }),
  ];
}

await main();
