/**
 * Continuity: does a compacted context hold what the agent went on to use? The peers' most
 * reported compaction failure is amnesia (the agent stops, redoes finished work, forgets the
 * task), so the measure is taken on what the agent of a real recording actually did next.
 *
 * At a cut point (before message `cutIndex`; a model call's request holds exactly the messages
 * before it), the identifiers the agent *needed from memory* are those that
 * - its own next messages (assistant text, thinking and tool-call arguments, within the next
 *   `lookahead` messages) use,
 * - before anything after the cut (a tool result, a user message) shows them again,
 * - and that occur before the cut.
 * A context (the messages sent at the cut) scores the share of them it holds (verbatim, anywhere
 * in its text: see `continuity-identifiers.ts` for the identifier rule). The *long memory* part is
 * the needed identifiers that the newest quarter of the window (the newest messages before the cut
 * whose tokens fit in a quarter of it) does not show: what only a summary, or a search, can give
 * back, since any policy keeps the newest turns.
 */
import type { MessageFacts } from "@compaction/core";
import { contextText, messageIdentifiers, wordsOf } from "./continuity-identifiers.js";
import { isModelCall, type ModelCall } from "./replay.js";

/** The next messages read for what the agent used (the "next 40 messages"). */
export const DEFAULT_LOOKAHEAD = 40;
/** Cut points chosen per transcript by default. */
export const DEFAULT_CUT_POINTS = 6;
/** The share of the window that stands for "the newest turns", outside which needs are long memory. */
export const LONG_MEMORY_TAIL = 0.25;

export interface NeededOptions<T> {
  readonly factsOf: (message: T) => MessageFacts;
  /** Messages after the cut read for the agent's use (default 40). */
  readonly lookahead?: number;
}

/** What the agent needed from memory at one cut. */
export interface CutPoint {
  /** The cut is before `messages[index]` (a model call's reply). */
  readonly index: number;
  /** Our count of the history before the cut. */
  readonly historyTokens: number;
  readonly needed: readonly string[];
  /** The needed identifiers the newest quarter of the window before the cut does not show. */
  readonly longMemory: readonly string[];
}

/** A context's score at one cut. */
export interface ContinuityScore {
  readonly index: number;
  readonly needed: number;
  readonly kept: number;
  readonly longMemory: number;
  readonly longMemoryKept: number;
  /** Our count of the context scored. */
  readonly contextTokens: number;
  /** Needed identifiers the context does not hold. */
  readonly missed: readonly string[];
}

/** Scores summed over cut points (shares of the sums: a cut with more needs weighs more). */
export interface ContinuityTotals {
  readonly cuts: number;
  readonly needed: number;
  readonly kept: number;
  readonly longMemory: number;
  readonly longMemoryKept: number;
  /** `kept / needed`, or undefined with nothing needed. */
  readonly share: number | undefined;
  readonly longMemoryShare: number | undefined;
}

function checkCut(index: number, length: number): void {
  if (!Number.isInteger(index) || index < 1 || index > length) {
    throw new RangeError(`continuity: expected a cut index from 1 to ${length} (the cut is before messages[index]), found ${index}.`);
  }
}

/**
 * The identifiers the agent needed from memory at the cut before `messages[cutIndex]` (see the
 * file's comment), in the order it used them.
 */
export function neededFromMemory<T>(messages: readonly T[], cutIndex: number, options: NeededOptions<T>): string[] {
  checkCut(cutIndex, messages.length);
  const facts = messages.map((message) => options.factsOf(message));
  return neededAt(facts, cutIndex, facts.slice(0, cutIndex).map((one) => wordsOf(one).text).join("\n"), options.lookahead ?? DEFAULT_LOOKAHEAD);
}

function neededAt(facts: readonly MessageFacts[], cutIndex: number, before: string, lookahead: number): string[] {
  const needed = new Set<string>();
  const settled = new Set<string>();
  let shown = "";
  const end = Math.min(facts.length, cutIndex + lookahead);
  for (let i = cutIndex; i < end; i++) {
    const one = facts[i] as MessageFacts;
    const words = wordsOf(one);
    if (one.kind !== "assistant") {
      shown += `\n${words.text}`;
      continue;
    }
    for (const identifier of messageIdentifiers(words)) {
      if (settled.has(identifier)) continue;
      settled.add(identifier);
      if (!shown.includes(identifier) && before.includes(identifier)) needed.add(identifier);
    }
  }
  return [...needed];
}

export interface ContinuityOptions<T> extends NeededOptions<T> {
  readonly tokensOf: (message: T) => number;
  /** The context window of the replay: cut points are past it (unless `pastTokens` says), and the long memory is outside its newest quarter. */
  readonly window: number;
  /**
   * Cut points are chosen among the model calls whose history before them is more than this
   * many tokens (default: `window`). A host compacts at a threshold below the window, so from
   * the lowest threshold of the policies compared on, a policy may have dropped something.
   */
  readonly pastTokens?: number;
  /** How many cut points to choose (default 6). */
  readonly cutPoints?: number;
  /** Cut indexes to use instead of choosing them. */
  readonly at?: readonly number[];
}

/**
 * Cut points of a recording, chosen deterministically: `count` model calls evenly spaced (by
 * position among them, at k / (count + 1) of the way for k = 1..count) over the calls whose
 * history before them is more than `pastTokens` (default `window`, past which every policy had to
 * drop or compact something); with none, over every model call. A chosen call at which the agent
 * needed nothing from memory gives way to the next call that needed something, up to the next
 * point (none found: one cut fewer).
 */
export function chooseCutPoints<T>(messages: readonly T[], options: ContinuityOptions<T>): number[] {
  const facts = messages.map((message) => options.factsOf(message));
  const calls: number[] = [];
  const from = options.pastTokens ?? options.window;
  let tokens = 0;
  const past: number[] = [];
  messages.forEach((message, i) => {
    if (isModelCall(facts, i)) {
      calls.push(i);
      if (tokens > from) past.push(i);
    }
    tokens += options.tokensOf(message);
  });
  const eligible = past.length > 0 ? past : calls;
  const count = Math.min(options.cutPoints ?? DEFAULT_CUT_POINTS, eligible.length);
  const texts = lazyTexts(facts);
  const lookahead = options.lookahead ?? DEFAULT_LOOKAHEAD;
  const chosen: number[] = [];
  // Interior points (k / (count + 1) of the way), so the last cut still has messages after it.
  const position = (k: number): number => Math.floor((k * eligible.length) / (count + 1));
  for (let k = 1; k <= count; k++) {
    const stop = k < count ? position(k + 1) : eligible.length;
    for (let at = position(k); at < stop; at++) {
      const index = eligible[at] as number;
      if (neededAt(facts, index, texts.before(index), lookahead).length > 0) {
        chosen.push(index);
        break;
      }
    }
  }
  return chosen;
}

/** Text before a cut, joined once per cut and reusing the previous join when cuts go forward. */
function lazyTexts(facts: readonly MessageFacts[]): { before(index: number): string } {
  const texts: string[] = [];
  let joined = "";
  return {
    before(index: number): string {
      while (texts.length < index) {
        const text = wordsOf(facts[texts.length] as MessageFacts).text;
        texts.push(text);
        joined = texts.length === 1 ? text : `${joined}\n${text}`;
      }
      return texts.length === index ? joined : texts.slice(0, index).join("\n");
    },
  };
}

/** Shares of the sums (see `ContinuityTotals`). */
export function sumScores(scores: readonly ContinuityScore[]): ContinuityTotals {
  let needed = 0;
  let kept = 0;
  let longMemory = 0;
  let longMemoryKept = 0;
  for (const score of scores) {
    needed += score.needed;
    kept += score.kept;
    longMemory += score.longMemory;
    longMemoryKept += score.longMemoryKept;
  }
  return {
    cuts: scores.length,
    needed,
    kept,
    longMemory,
    longMemoryKept,
    share: needed === 0 ? undefined : kept / needed,
    longMemoryShare: longMemory === 0 ? undefined : longMemoryKept / longMemory,
  };
}

/** Records, during a replay, the score of the request sent at each cut point. */
export interface ContinuityRecorder<T> {
  /** Pass as (or call from) `replaySession`'s `onCall`. */
  readonly onCall: (call: ModelCall<T>) => void;
  /** Scores recorded so far, in cut order. */
  scores(): ContinuityScore[];
  totals(): ContinuityTotals;
}

/**
 * The continuity measure of one recording: its cut points and what the agent needed at each,
 * computed once; then any context at a cut is scored (`score`), and a replay's requests are
 * scored at the cuts through `recorder().onCall`.
 *
 * ```ts
 * const probe = ContinuityProbe.of(messages, { factsOf, tokensOf, window });
 * const recorder = probe.recorder();
 * await replaySession(messages, policy, { tokensOf, factsOf, onCall: recorder.onCall });
 * recorder.totals().share; // the share of what the agent needed next that the requests held
 * ```
 */
export class ContinuityProbe<T> {
  readonly cuts: readonly CutPoint[];
  readonly window: number;
  readonly #options: ContinuityOptions<T>;
  readonly #byIndex: ReadonlyMap<number, CutPoint>;

  private constructor(cuts: readonly CutPoint[], options: ContinuityOptions<T>) {
    this.cuts = Object.freeze(cuts);
    this.window = options.window;
    this.#options = options;
    this.#byIndex = new Map(cuts.map((cut) => [cut.index, cut]));
  }

  /** Builds the probe of `messages` (the recording, as the replay gets it). */
  static of<T>(messages: readonly T[], options: ContinuityOptions<T>): ContinuityProbe<T> {
    if (!(options.window > 0)) throw new RangeError(`continuity: expected a positive context window, found ${options.window}.`);
    if (options.pastTokens !== undefined && !(options.pastTokens >= 0)) throw new RangeError(`continuity: expected pastTokens of at least 0, found ${options.pastTokens}.`);
    const indexes = options.at ?? chooseCutPoints(messages, options);
    const facts = messages.map((message) => options.factsOf(message));
    const tokens = messages.map((message) => options.tokensOf(message));
    const texts = lazyTexts(facts);
    const lookahead = options.lookahead ?? DEFAULT_LOOKAHEAD;
    const cuts = [...indexes]
      .sort((a, b) => a - b)
      .map((index): CutPoint => {
        checkCut(index, messages.length);
        const needed = neededAt(facts, index, texts.before(index), lookahead);
        let tail = index;
        let tailTokens = 0;
        while (tail > 0 && tailTokens + (tokens[tail - 1] as number) <= options.window * LONG_MEMORY_TAIL) {
          tail -= 1;
          tailTokens += tokens[tail] as number;
        }
        const recent = contextText(facts.slice(tail, index));
        let historyTokens = 0;
        for (let i = 0; i < index; i++) historyTokens += tokens[i] as number;
        return { index, historyTokens, needed, longMemory: needed.filter((identifier) => !recent.includes(identifier)) };
      });
    return new ContinuityProbe(cuts, options);
  }

  /** The cut point at `index`, if it is one. */
  cutAt(index: number): CutPoint | undefined {
    return this.#byIndex.get(index);
  }

  /** Scores `context` (what is sent at the cut) against what the agent needed at `cut`. */
  score(cut: CutPoint | number, context: readonly T[]): ContinuityScore {
    const point = typeof cut === "number" ? this.#byIndex.get(cut) : cut;
    if (point === undefined) throw new RangeError(`continuity: ${String(cut)} is not one of the probe's cut points (${this.cuts.map((c) => c.index).join(", ")}).`);
    return scoreContext(point, contextText(context.map((message) => this.#options.factsOf(message))), context.reduce((sum, m) => sum + this.#options.tokensOf(m), 0));
  }

  /** A fresh recorder for one replay. */
  recorder(): ContinuityRecorder<T> {
    const scores: ContinuityScore[] = [];
    return {
      onCall: (call) => {
        const cut = this.#byIndex.get(call.index);
        if (cut !== undefined) scores.push(this.score(cut, call.request));
      },
      scores: () => [...scores],
      totals: () => sumScores(scores),
    };
  }
}

/** Scores the text of a context against one cut's needs. */
export function scoreContext(cut: CutPoint, text: string, contextTokens = 0): ContinuityScore {
  const missed = cut.needed.filter((identifier) => !text.includes(identifier));
  const missing = new Set(missed);
  return {
    index: cut.index,
    needed: cut.needed.length,
    kept: cut.needed.length - missed.length,
    longMemory: cut.longMemory.length,
    longMemoryKept: cut.longMemory.filter((identifier) => !missing.has(identifier)).length,
    contextTokens,
    missed,
  };
}
