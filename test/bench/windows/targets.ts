/**
 * The windows benchmark's targets (issue 40), each judged on every cell and printed as MET / NOT
 * MET with the cells that miss it, compactly (grouped by window, preset and host).
 */
import type { ContinuityTotals } from "@compaction/replay";
import type { Cell } from "./run-cell.js";

/** How far below truncation one transcript may keep (3 points). */
export const PER_TRANSCRIPT_SLACK = 0.03;
/** The cache-hit share wanted at 32k and above. */
export const HIT_SHARE = 0.85;
export const HIT_SHARE_FROM = 32_000;

export const k = (window: number): string => `${window / 1000}k`;
export const pct = (share: number | undefined): string => (share === undefined ? "-" : `${(share * 100).toFixed(1)}%`);
/** A transcript's short name: without `claude-code-` and `.jsonl`. */
export const short = (fixture: string): string => fixture.replace(/^claude-code-/, "").replace(/\.jsonl$/, "");

/** Kept over needed summed over `totals` (a pooled share), or undefined with nothing needed. */
export function pooled(totals: readonly ContinuityTotals[]): number | undefined {
  let kept = 0;
  let needed = 0;
  for (const t of totals) {
    kept += t.kept;
    needed += t.needed;
  }
  return needed === 0 ? undefined : kept / needed;
}

interface Miss {
  /** The cells' group: window, preset, host. */
  readonly group: string;
  /** The transcript and what it measured, or empty for a pooled miss. */
  readonly item: string;
}

/** `group: a, b; group2: c`, groups in the order first seen. */
function compactly(misses: readonly Miss[]): string {
  const groups = new Map<string, string[]>();
  for (const miss of misses) {
    const items = groups.get(miss.group) ?? [];
    if (miss.item !== "") items.push(miss.item);
    groups.set(miss.group, items);
  }
  return [...groups].map(([group, items]) => (items.length === 0 ? group : `${group}: ${items.join(", ")}`)).join("; ");
}

function line(met: boolean, target: string, misses: readonly Miss[]): string {
  return met ? `MET: ${target}` : `NOT MET: ${target} (${misses.length} ${misses.length === 1 ? "miss" : "misses"}) -- ${compactly(misses)}`;
}

const groupOf = (cell: Cell): string => `${k(cell.window)} ${cell.preset}/${cell.host}`;
const share = (t: ContinuityTotals): number => t.share ?? 1;

/** One line per target. */
export function checkTargets(cells: readonly Cell[]): string[] {
  const ran = cells.filter((cell) => cell.error === undefined);
  const notRun = cells.filter((cell) => cell.error !== undefined);
  const lines: string[] = [];

  const failed: Miss[] = [
    ...notRun.map((cell) => ({ group: `${k(cell.window)} could not run`, item: `${short(cell.fixture)} ${cell.preset}/${cell.host}` })),
    ...ran.filter((cell) => cell.failed + cell.failedAtOnce > 0).map((cell) => ({ group: groupOf(cell), item: `${short(cell.fixture)} ${cell.failed}+${cell.failedAtOnce}` })),
  ];
  lines.push(line(failed.length === 0, "no failed compaction (in a loop + at once; a cell that could not run counts)", collapseNotRun(failed, notRun)));
  const cut = ran.filter((cell) => cell.cut.count > 0).map((cell) => ({ group: groupOf(cell), item: `${short(cell.fixture)} ${cell.cut.count}/${cell.calls}` }));
  lines.push(line(cut.length === 0, "no request cut to fewer messages than fit (cut requests / calls)", cut));

  for (const mode of ["loop", "atOnce"] as const) {
    const label = mode === "loop" ? "in a loop" : "at once";
    const pooledMisses: Miss[] = [];
    const transcriptMisses: Miss[] = [];
    const groups = new Map<string, Cell[]>();
    for (const cell of ran) groups.set(groupOf(cell), [...(groups.get(groupOf(cell)) ?? []), cell]);
    for (const [group, members] of groups) {
      const mine = pooled(members.map((cell) => cell[mode]));
      const baseline = pooled(members.map((cell) => cell.truncation));
      if (mine !== undefined && baseline !== undefined && mine < baseline) pooledMisses.push({ group: `${group} ${pct(mine)} < ${pct(baseline)}`, item: "" });
      for (const cell of members) {
        if (cell[mode].needed === 0) continue;
        const below = share(cell.truncation) - share(cell[mode]);
        if (below > PER_TRANSCRIPT_SLACK) transcriptMisses.push({ group, item: `${short(cell.fixture)} ${pct(share(cell[mode]))} < ${pct(share(cell.truncation))}` });
      }
    }
    lines.push(line(pooledMisses.length === 0, `${label}, no preset keeps less than truncation to half the window, pooled per window`, pooledMisses));
    lines.push(line(transcriptMisses.length === 0, `${label}, no transcript more than ${PER_TRANSCRIPT_SLACK * 100} points below truncation to half the window`, transcriptMisses));
  }

  const misses = ran.filter((cell) => cell.misses > cell.compactions + 1).map((cell) => ({ group: groupOf(cell), item: `${short(cell.fixture)} ${cell.misses} > ${cell.compactions}+1` }));
  lines.push(line(misses.length === 0, "cache misses at most compactions + 1", misses));
  const hits = ran
    .filter((cell) => cell.window >= HIT_SHARE_FROM && cell.hitShare < HIT_SHARE)
    .map((cell) => ({ group: groupOf(cell), item: `${short(cell.fixture)} ${pct(cell.hitShare)}` }));
  lines.push(line(hits.length === 0, `cache hits at least ${HIT_SHARE * 100}% at ${k(HIT_SHARE_FROM)} and above`, hits));
  const storms = ran
    .filter((cell) => cell.compactions > cell.bound)
    .map((cell) => ({ group: groupOf(cell), item: `${short(cell.fixture)} ${cell.compactions} > ${cell.bound.toFixed(1)}` }));
  lines.push(line(storms.length === 0, "compactions <= appended tokens / (window / 4) + 1", storms));
  if (notRun.length > 0) lines.push(`(${notRun.length} cells could not run, listed under the first target; the others are judged on the ${ran.length} that ran)`);
  return lines;
}

/** Cells that could not run, one entry per window and reason instead of one per cell. */
function collapseNotRun(misses: readonly Miss[], notRun: readonly Cell[]): Miss[] {
  const others = misses.filter((miss) => !miss.group.endsWith("could not run"));
  const byReason = new Map<string, Cell[]>();
  for (const cell of notRun) {
    const key = `${k(cell.window)}\u0000${cell.error}`;
    byReason.set(key, [...(byReason.get(key) ?? []), cell]);
  }
  const collapsed = [...byReason].map(([key, cells]): Miss => {
    const [window, error] = key.split("\u0000") as [string, string];
    const presets = new Set(cells.map((cell) => cell.preset)).size;
    const hosts = new Set(cells.map((cell) => cell.host)).size;
    const fixtures = new Set(cells.map((cell) => cell.fixture)).size;
    return { group: `${window}, ${cells.length} cells (${presets} presets x ${hosts} hosts x ${fixtures} transcripts) could not run: ${error}`, item: "" };
  });
  return [...collapsed, ...others];
}
