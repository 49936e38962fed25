/**
 * One cell of the windows benchmark: a transcript replayed at one window through one preset by one
 * host, in a loop (message by message, a request at every model call of the recording) and at once
 * (the history before each continuity cut point taken in one go), with every measure of the cell.
 */
import { ContinuityProbe, type ContinuityTotals, replaySession, sumScores } from "@compaction/replay";
import { type Host, HostLog, type HostName } from "./hosts.js";
import { CutRequests, NewestFit, stormBound, truncated } from "./measure.js";

export interface CellKey {
  readonly fixture: string;
  readonly window: number;
  readonly preset: string;
  readonly host: HostName;
}

export interface Cell extends CellKey {
  /** Why the cell could not run (the host could not be made from the config, or the replay threw). */
  readonly error?: string;
  readonly calls: number;
  readonly compactions: number;
  /** Failed compaction attempts in the loop, and at once (over every cut point). */
  readonly failed: number;
  readonly failedAtOnce: number;
  /** The distinct reasons of the failures, first seen first. */
  readonly reasons: readonly string[];
  /** Compactions that left the context over the threshold (loop + at once), and requests that left out messages (loop). */
  readonly overThreshold: number;
  readonly trimmed: number;
  readonly cut: { readonly count: number; readonly worst?: { held: number; fit: number } };
  readonly hitShare: number;
  readonly misses: number;
  readonly appended: number;
  readonly bound: number;
  readonly loop: ContinuityTotals;
  readonly atOnce: ContinuityTotals;
  readonly truncation: ContinuityTotals;
  readonly ms: number;
}

/** A transcript in one host's format, with what every cell at any window reuses. */
export class Subject<T> {
  readonly tokens: readonly number[];
  readonly appended: number;
  readonly fit: NewestFit;
  readonly #probes = new Map<number, { probe: ContinuityProbe<T>; truncation: ContinuityTotals }>();

  constructor(
    readonly host: Host<T>,
    readonly fixture: string,
    readonly messages: readonly T[],
  ) {
    this.tokens = messages.map((message) => host.tokensOf(message));
    this.appended = this.tokens.reduce((sum, count) => sum + count, 0);
    this.fit = new NewestFit(this.tokens);
  }

  /** The continuity probe at `window` (its cut points past the window), and truncation to half the window scored at them. */
  probe(window: number): { probe: ContinuityProbe<T>; truncation: ContinuityTotals } {
    let found = this.#probes.get(window);
    if (found === undefined) {
      const { factsOf, tokensOf } = this.host;
      const probe = ContinuityProbe.of(this.messages, { factsOf, tokensOf, window });
      const truncation = sumScores(probe.cuts.map((cut) => probe.score(cut, truncated(this.messages.slice(0, cut.index), window / 2, tokensOf))));
      found = { probe, truncation };
      this.#probes.set(window, found);
    }
    return found;
  }
}

const NOTHING: ContinuityTotals = sumScores([]);

/** A cell that could not run, with why. */
export function failedCell<T>(subject: Subject<T>, key: CellKey, error: string): Cell {
  return {
    ...key,
    error,
    calls: 0,
    compactions: 0,
    failed: 0,
    failedAtOnce: 0,
    reasons: [],
    overThreshold: 0,
    trimmed: 0,
    cut: { count: 0 },
    hitShare: 0,
    misses: 0,
    appended: subject.appended,
    bound: stormBound(subject.appended, key.window),
    loop: NOTHING,
    atOnce: NOTHING,
    truncation: NOTHING,
    ms: 0,
  };
}

/** Runs the cell: the loop replay with the project at `cwd`, then at once at every cut point. */
export async function runCell<T>(subject: Subject<T>, key: CellKey, cwd: string): Promise<Cell> {
  const started = performance.now();
  const { host } = subject;
  const { probe, truncation } = subject.probe(key.window);
  const recorder = probe.recorder();
  // Every preset keeps at least an eighth of the window verbatim beside its summary (safeguard's
  // 20,000 tokens at 128k are less than a quarter), so a request holding fewer messages than the
  // newest eighth of the history is cut below what fits (the collapse to the newest message that a
  // reserve larger than the window caused).
  const cut = new CutRequests(subject.fit, Math.floor(key.window / 8));
  const log = new HostLog();
  let result;
  try {
    result = await replaySession(subject.messages, host.policy(key.preset, cwd, key.window, log), {
      tokensOf: host.tokensOf,
      factsOf: host.factsOf,
      onCall: (call) => {
        recorder.onCall(call);
        cut.record(call.index, call.request.length);
      },
    });
  } catch (error) {
    return failedCell(subject, key, `the replay threw: ${(error as Error).message}`);
  }
  const onceLog = new HostLog();
  const onceScores = [];
  for (const point of probe.cuts) {
    const history = subject.messages.slice(0, point.index);
    try {
      onceScores.push(probe.score(point, await host.atOnce(cwd, key.window, history, onceLog)));
    } catch (error) {
      onceLog.start();
      onceLog.fail(`at once threw: ${(error as Error).message}`);
      onceScores.push(probe.score(point, []));
    }
  }
  return {
    ...key,
    calls: result.calls,
    compactions: result.compactions,
    failed: log.failed.size,
    failedAtOnce: onceLog.failed.size,
    reasons: [...new Set([...log.failed.values(), ...[...onceLog.failed.values()].map((reason) => `at once: ${reason}`)])],
    overThreshold: log.overThreshold + onceLog.overThreshold,
    trimmed: log.trimmed,
    cut: { count: cut.cut, ...(cut.worst === undefined ? {} : { worst: cut.worst }) },
    hitShare: result.cache.hitShare,
    misses: result.cache.misses,
    appended: subject.appended,
    bound: stormBound(subject.appended, key.window),
    loop: recorder.totals(),
    atOnce: sumScores(onceScores),
    truncation,
    ms: performance.now() - started,
  };
}
