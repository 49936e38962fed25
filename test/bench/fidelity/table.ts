/** The benchmark's output: markdown tables, padded so they read in a terminal too. */
import type { FactOutcome, KindShares } from "./measure.js";
import type { ReplayOutcome } from "./replay.js";

/** One preset (or the baseline) over one session. */
export interface RunResult {
  readonly outcome: ReplayOutcome;
  readonly facts: readonly FactOutcome[];
  readonly shares: readonly KindShares[];
  /** Facts the context held but a shaped request along the way did not send, with how many requests lacked each. */
  readonly cutFromRequests?: ReadonlyMap<FactOutcome["fact"], number>;
}

const int = (n: number): string => Math.round(n).toLocaleString("en-US");
const pct = (count: number, total: number): string => (total === 0 ? "-" : `${Math.round((100 * count) / total)}`);
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** A markdown table with cells padded to the column width. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

/** True when the model would have been sent more than the window: what such a run "keeps" would not fit a model. */
export function overWindow(outcome: ReplayOutcome): boolean {
  return Math.max(outcome.requestTokens, outcome.peakSentTokens) > outcome.window;
}

/** `% in context / % found / % lost` of one kind's (or all) facts. */
export const sharesCell = (s: KindShares): string => `${pct(s.inContext, s.total)} / ${s.found === null ? "n/a" : pct(s.found, s.total)} / ${pct(s.lost, s.total)}`;

/** `n (p%)` of the window. */
export const ofWindow = (n: number, window: number): string => `${int(n)} (${pct(n, window)}%)`;

/** Per kind: % in context / % found by memory_search (top 5) / % lost; rows[0] is the header. */
export function retentionRows(runs: readonly RunResult[]): string[][] {
  const kinds = runs[0]?.shares ?? [];
  return [
    ["preset", ...kinds.map((k) => `${k.kind} (${k.total})`)],
    ...runs.map((run) => [overWindow(run.outcome) ? `${run.outcome.name} (request over the window!)` : run.outcome.name, ...run.shares.map(sharesCell)]),
  ];
}

export function retentionTable(runs: readonly RunResult[]): string {
  const [header = [], ...rows] = retentionRows(runs);
  return markdownTable(header, rows);
}

/** Whether the summaries stay within the limit, and how they grew. */
function summaryCells(outcome: ReplayOutcome): [string, string] {
  const sizes = outcome.compactions.map((c) => c.summaryTokens);
  if (outcome.summaryLimit === null || sizes.length === 0) return ["-", "-"];
  const first = sizes[0] as number;
  const last = sizes[sizes.length - 1] as number;
  const max = Math.max(...sizes);
  const growth = `${int(first)} → ${int(last)} (max ${int(max)})`;
  return [growth, max <= outcome.summaryLimit ? `yes, ≤ ${int(outcome.summaryLimit)}` : `NO: ${int(max)} > ${int(outcome.summaryLimit)}`];
}

/** Requests changed by send-time shaping, of all model calls; truncation sends what it holds. */
function shapedCell(outcome: ReplayOutcome): string {
  if (outcome.shaping === null) return "none: sends what it holds";
  const { shaped, requests, overBudget } = outcome.shaping;
  return `${int(shaped)} of ${int(requests)}${overBudget > 0 ? ` (${int(overBudget)} OVER budget)` : ""}`;
}

/**
 * What each run cost: compactions, context after them, the largest context held and the largest
 * request sent (the held context shaped as a host sends it), summary sizes, time; rows[0] is the header.
 */
export function costRows(runs: readonly RunResult[]): string[][] {
  const header = [
    "preset",
    "compactions",
    "runs writing nothing",
    "tokens after last compaction",
    "most after any",
    "largest context held",
    "largest request sent",
    "requests shaped",
    "context held at end",
    "summary tokens first → last",
    "summary bounded",
    "time",
  ];
  const rows = runs.map(({ outcome }) => {
    const after = outcome.compactions.map((c) => c.tokensAfter);
    const last = after[after.length - 1];
    const idle = idleRuns(outcome);
    const share = (n: number): string => ofWindow(n, outcome.window);
    return [
      outcome.name,
      int(outcome.compactions.length),
      int(idle),
      last === undefined ? "-" : share(last),
      after.length === 0 ? "-" : share(Math.max(...after)),
      `${share(outcome.peakHeldTokens)}${outcome.peakHeldTokens > outcome.window ? " OVER" : ""}`,
      `${share(outcome.peakSentTokens)}${outcome.peakSentTokens > outcome.window ? " OVER" : ""}`,
      shapedCell(outcome),
      `${share(outcome.contextTokens)}${outcome.contextTokens > outcome.window ? " OVER" : ""}`,
      ...summaryCells(outcome),
      seconds(outcome.ms),
    ];
  });
  return [header, ...rows];
}

export function costTable(runs: readonly RunResult[]): string {
  const [header = [], ...rows] = costRows(runs);
  return markdownTable(header, rows);
}

/** Runs past the threshold that wrote nothing. */
export const idleRuns = (outcome: ReplayOutcome): number => [...outcome.notWritten.values()].reduce((a, b) => a + b, 0);

/** Summary (or note) tokens after each compaction, per preset; long series keep their first and last 12; rows[0] is the header. */
export function summarySeriesRows(runs: readonly RunResult[]): string[][] {
  return [
    ["preset", "summary or note tokens after each compaction"],
    ...runs
      .filter((run) => run.outcome.summaryLimit !== null && run.outcome.compactions.length > 0)
      .map(({ outcome }) => {
        const sizes = outcome.compactions.map((c) => int(c.summaryTokens));
        return [outcome.name, sizes.length <= 24 ? sizes.join(" ") : `${sizes.slice(0, 12).join(" ")} … ${sizes.slice(-12).join(" ")}`];
      }),
  ];
}

/** The same as a list, one line per preset. */
export function summarySeries(runs: readonly RunResult[]): string {
  return summarySeriesRows(runs)
    .slice(1)
    .map(([name, sizes]) => `- ${name}: ${sizes}`)
    .join("\n");
}

/**
 * Why runs past the threshold wrote nothing, the compactions' warnings, with counts, what
 * shaping did to the requests, and the facts the held context has that the request sent lacks.
 */
export function notes(runs: readonly RunResult[]): string {
  const lines: string[] = [];
  for (const { outcome, facts, cutFromRequests } of runs) {
    for (const [reason, count] of outcome.notWritten) lines.push(`- ${outcome.name}: ${count}× wrote nothing: ${reason}`);
    for (const [warning, count] of outcome.warnings) lines.push(`- ${outcome.name}: ${count}× warning: ${warning.slice(0, 200)}`);
    const layers = new Map<string, number>();
    for (const c of outcome.compactions) layers.set(c.layer ?? "?", (layers.get(c.layer ?? "?") ?? 0) + 1);
    if (layers.size > 1) lines.push(`- ${outcome.name}: layers ${[...layers].map(([layer, n]) => `${layer} ${n}`).join(", ")}`);
    const diverged = outcome.compactions.filter((c) => c.tokensAfter !== c.resultTokensAfter).length;
    if (diverged > 0) lines.push(`- ${outcome.name}: ${diverged} compaction(s) reloaded to a context of another size than the result reported (kept messages changed in memory only)`);
    const shaping = outcome.shaping;
    if (shaping !== null && shaping.shaped > 0) {
      lines.push(
        `- ${outcome.name}: shaping to the budget of ${int(shaping.budget)} changed ${int(shaping.shaped)} of ${int(shaping.requests)} requests: ${int(shaping.shrunkMessages)} message(s) shrunk to head and tail, ${int(shaping.droppedMessages)} left out (summed over requests)`,
      );
    }
    if (cutFromRequests !== undefined && cutFromRequests.size > 0) {
      const listed = [...cutFromRequests].map(([fact, n]) => `${fact.kind}/${fact.detail} (${n})`).join(", ");
      lines.push(`- ${outcome.name}: ${cutFromRequests.size} fact(s) held but cut out of shaped requests along the way (requests lacking each): ${listed}`);
    }
    const shrunkOut = facts.filter((f) => f.inHeldContext && !f.inContext);
    if (shrunkOut.length > 0) {
      lines.push(`- ${outcome.name}: ${shrunkOut.length} fact(s) in the held context but not in the request sent: ${shrunkOut.map((f) => `${f.fact.kind}/${f.fact.detail}`).join(", ")}`);
    }
  }
  return lines.join("\n");
}

/** One row per fact: where each preset left it. C: in context, S: found by search only, -: lost; rows[0] is the header. */
export function factMatrixRows(runs: readonly RunResult[]): string[][] {
  const facts = runs[0]?.facts ?? [];
  const header = ["fact", "where", "needle", ...runs.map((r) => r.outcome.name)];
  const rows = facts.map((f, i) => [
    `${f.fact.kind}/${f.fact.detail}`,
    f.fact.position,
    f.fact.needle.length > 48 ? `${f.fact.needle.slice(0, 47)}…` : f.fact.needle,
    ...runs.map((r) => {
      const o = r.facts[i] as FactOutcome;
      return o.inContext ? (o.found === true ? "C S" : "C") : o.found === true ? "S" : "-";
    }),
  ]);
  return [header, ...rows];
}

export function factMatrix(runs: readonly RunResult[]): string {
  const [header = [], ...rows] = factMatrixRows(runs);
  return markdownTable(header, rows.map((r) => r.map((c) => c.replace(/\|/g, "\\|"))));
}
