/**
 * How the core brings a cut under the budget, whatever plugin chose it. The rules, in order:
 * 1. The newest user message (the request being worked on) is never compacted. A cut past it is
 *    pulled back to it while the newest turn fits the run's target (what a compaction brings the
 *    context down to), so a turn that fits is kept whole. A newest turn larger than that (an
 *    agent's long autonomous run after one prompt) may be split, as pi and Claude Code split it:
 *    the request stays verbatim ahead of the summary (`checkCut` preserves it like a pinned
 *    message) and the turn's early part after it is summarised as the split turn's prefix. A host
 *    that records only summary + suffix (`suffixOnly`: pi's compaction entry keeps no message
 *    before its summary, and pi splits a turn this way itself) cannot keep it there: the request
 *    is summarised with the turn's early part, and the core adds its text, verbatim, to the
 *    summary (`carryRequest`).
 * 2. A cut that keeps more than the budget is moved later, to the earliest place where what it
 *    keeps leaves room for the summary within the run's target (else within the budget): no later
 *    than the newest user message, else inside the newest turn where rule 1 lets it be split. The
 *    target moves it no later than the run's least kept part (`CompactionRun.minKeptTokens`: the
 *    newest messages that fit in an eighth of the window, from the cut point that reaches it);
 *    when the target cannot be had before that, the cut is at the least kept part if that leaves
 *    the summary half its room, and only the budget moves it further.
 * 3. When no cut can do that, the cut is at the latest place rule 2 may use and the core shrinks
 *    what is kept (shrinkToBudget: largest tool outputs, then the newest turn's other messages,
 *    then the request itself to head and tail).
 * 4. When even that cannot fit (the system prompt, pinned messages and the request alone are
 *    over the budget), the run fails with COMPACTION_CONTEXT_OVERFLOW and the numbers.
 * 5. When a plugin asks how much room its summary has (`summaryRoomLeft`, `summaryRoom`) and
 *    what the cut keeps leaves less than `MIN_SUMMARY_ROOM` (within the allowance), the core
 *    shrinks the kept messages as in rule 3 so that it does, else half of it (`makeSummaryRoom`).
 *    A summary squeezed into the dozen tokens a kept request may leave is headings alone, which is
 *    never written, and the run would fail on a context that must shrink. The built-in plugins
 *    that write a note or no summary do not ask, and their kept messages stay whole. A host that
 *    records only summary + suffix (`suffixOnly`) keeps the kept messages whole in its record and
 *    is told to shrink them when it sends (the result's `shrunk`), as after rule 3.
 * 6. Once the summary (or eviction note) is written, the compacted context is counted whole: when
 *    the summary takes more than the room the kept messages left (a note is not sized in advance,
 *    and a wrapper and its text count a token or two apart from their sum), the kept messages are
 *    shrunk again from their originals by what it is over (`fitCompacted`), so the result is within
 *    the budget to the token; a summary that alone leaves no room for what cannot be shortened
 *    leaves them whole, and the run warns that the context is over.
 */
import { CompactionError, ErrorCodes } from "../errors.js";
import { checkCut } from "../cut/check-cut.js";
import type { CheckedCut, Cut } from "../cut/cut.js";
import type { MessageView } from "../cut/message-view.js";
import { isCutPoint, lastUserIndex } from "../cut/turns.js";
import { shrinkToBudget, type ShrinkResult, type ShrunkMessage } from "../shrink/shrink-to-budget.js";
import type { MessageTokenCounter } from "../tokens/message-tokens.js";

/** The room a cut that had to be moved or shrunk leaves for the summary, at most. */
export function summaryAllowance(budget: number, summaryMaxTokens: number): number {
  return Math.min(summaryMaxTokens, Math.floor(budget / 4));
}

/**
 * The least room for a summary's text rule 5 makes: enough for a heading and a line under it (a
 * split turn's two summaries share it, about 36 and 18 tokens). Never more than
 * `summaryAllowance`, so a small budget or a short configured summary asks no more than they
 * allow.
 */
export const MIN_SUMMARY_ROOM = 64;

/** What rule 1 needs besides the cut. */
export interface NewestRequestRule {
  /** The run's target in our count (`CompactionRun.targetCounted`): a newest turn over it may be split. */
  readonly targetTokens: number;
  /** False for a host that records only summary + suffix (`suffixOnly`): see `CheckCutOptions.requestAhead`. */
  readonly requestAhead: boolean;
}

/**
 * Rule 1: the proposed cut, pulled back to the newest user message when it is past it, unless the
 * newest turn may be split (its tokens are over the run's target). A malformed cut is left for
 * checkCut to refuse with its own message.
 */
export function keepNewestRequest(view: MessageView, proposed: Cut, plugin: string, rule: NewestRequestRule): { cut: Cut; repair: string | null } {
  const request = lastUserIndex(view.facts);
  const first = (proposed as Partial<Cut> | null | undefined)?.firstKeptIndex;
  if (typeof first !== "number" || !Number.isInteger(first) || first > view.facts.length) return { cut: proposed, repair: null };
  if (request < 0) return keepNewestMessages(view, proposed, first, plugin);
  if (!(first > request) || view.facts[request]?.pinned === true) return { cut: proposed, repair: null };
  // A split keeps something of the turn after its request (a cut that keeps nothing is pulled back).
  if (first < view.facts.length && maySplitNewestTurn(view, rule)) return { cut: proposed, repair: null };
  return {
    cut: { ...proposed, firstKeptIndex: request },
    repair: `Plugin '${plugin}' cut at message ${first}, after the newest user message; the cut was moved back to message ${request} so the request being worked on stays in the context.`,
  };
}

/**
 * Rule 1 where the context holds no user message (a split turn goes on, its request carried in
 * the summary): a cut that keeps nothing is pulled back to the last cut point, so the newest
 * messages the agent is working from stay (shrunk to the budget if they must be) and a pi file,
 * which records a summary and a suffix, has a suffix to record.
 */
function keepNewestMessages(view: MessageView, proposed: Cut, first: number, plugin: string): { cut: Cut; repair: string | null } {
  const last = lastCutPoint(view);
  if (first < view.facts.length || last <= 0 || last >= first) return { cut: proposed, repair: null };
  return {
    cut: { ...proposed, firstKeptIndex: last },
    repair: `Plugin '${plugin}' cut at message ${first}, keeping no message; the cut was moved back to message ${last} so the newest messages stay in the context.`,
  };
}

/** Rule 1's condition: the newest turn (from its request, which is not pinned) is over the run's target. */
export function maySplitNewestTurn(view: MessageView, rule: NewestRequestRule): boolean {
  const request = lastUserIndex(view.facts);
  if (request < 0 || view.facts[request]?.pinned === true) return false;
  // A turn that is its request alone has nothing to split.
  if (lastCutPoint(view) <= request) return false;
  let turn = 0;
  for (let i = request; i < view.tokens.length; i++) turn += view.tokens[i] ?? 0;
  return turn > rule.targetTokens;
}

/**
 * The least kept part as a cut: at the latest cut point after the checked cut, no later than
 * `latest`, whose messages from there on hold at least `tokens` (an eighth of the window,
 * `CompactionRun.minKeptTokens`: every newest message that fits in it, and the run of messages
 * from the cut point that reaches it), or null when there is none or no floor (`tokens` 0).
 */
function leastKeptCut(view: MessageView, checked: CheckedCut, latest: number, tokens: number, requestAhead: boolean): CheckedCut | null {
  if (!(tokens > 0)) return null;
  let suffix = 0;
  for (let i = view.facts.length - 1; i > checked.firstKeptIndex; i--) {
    suffix += view.tokens[i] ?? 0;
    if (suffix >= tokens && i <= latest && isCutPoint(view.facts[i]!)) return recheck(view, checked, i, requestAhead);
  }
  return null;
}

/** Where the latest cut may be: the newest user message, or (with none) the last cut point. */
export function latestCutIndex(view: MessageView): number {
  const request = lastUserIndex(view.facts);
  if (request >= 0) return request;
  return lastCutPoint(view);
}

/** The last message a cut may start at (`isCutPoint`), or the number of messages when there is none. */
function lastCutPoint(view: MessageView): number {
  for (let i = view.facts.length - 1; i >= 0; i--) if (isCutPoint(view.facts[i]!)) return i;
  return view.facts.length;
}

export interface FitInput<T> {
  readonly view: MessageView;
  readonly messages: readonly T[];
  readonly tokens: MessageTokenCounter<T>;
  readonly checked: CheckedCut;
  readonly budget: number;
  /** Tokens the summary message's wrapper costs. */
  readonly summaryOverheadTokens: number;
  readonly summaryMaxTokens: number;
  readonly recallTool: string | undefined;
  /** Rule 1's terms: whether the newest turn may be split, here to move a cut later (rule 2). */
  readonly newestRequest: NewestRequestRule;
  /**
   * What the compacted context should come down to when rule 3 must shrink anyway (the run's
   * target, `CompactionRun.targetTokens`, in our count): tool outputs are shrunk further towards
   * it (`ShrinkOptions.headroomTo`), so the next request does not need shrinking again. Default: none.
   */
  readonly headroomTo?: number;
  /** The run's least kept part (`CompactionRun.minKeptTokens`): rule 2 moves a cut no later than that for the target. Default: 0, no least kept part. */
  readonly minKeptTokens?: number;
}

export interface FittedCut<T> {
  readonly cut: CheckedCut;
  /** The shrinking of preserved + kept messages, or null when the cut fits as it is. */
  readonly shrink: ShrinkResult<T> | null;
  /** What the core changed, one sentence each. */
  readonly repairs: readonly string[];
}

/** Rules 2 to 4 for a checked cut. Throws COMPACTION_CONTEXT_OVERFLOW for rule 4. */
export function fitCutToBudget<T>(input: FitInput<T>): FittedCut<T> {
  const { view, checked, budget } = input;
  if (checked.keptTokens <= budget) return { cut: checked, shrink: null, repairs: [] };
  const target = Math.max(1, budget - input.summaryOverheadTokens - summaryAllowance(budget, input.summaryMaxTokens));
  const plugin = checked.selectedBy;
  const request = latestCutIndex(view);
  const split = maySplitNewestTurn(view, input.newestRequest);
  const latest = split ? Math.max(request, lastCutPoint(view)) : request;
  const requestAhead = input.newestRequest.requestAhead;
  // The earliest cut that keeps within the run's target beside the summary, as rule 3 shrinks
  // towards it: one that keeps up to the budget leaves the next steps no room, and each request
  // after it is shrunk at send time (a cache miss) until the next compaction, a few steps later.
  // At or before the request first, then inside the newest turn (where rule 1 lets it be split),
  // in both no later than the least kept part (`floorCut`: the target does not take the newest
  // messages in an eighth of the window). Else the least kept part itself, when it leaves the
  // summary at least half its room (the summary and the newest messages share what the budget
  // leaves, neither squeezed below half of its own); else the same searches for the budget itself.
  const allowance = summaryAllowance(budget, input.summaryMaxTokens);
  const room = input.summaryOverheadTokens + allowance;
  const headroom = input.headroomTo === undefined ? undefined : input.headroomTo - room;
  const runTarget = headroom === undefined ? target : Math.max(1, Math.min(target, headroom));
  const fromRequest = checked.firstKeptIndex > request ? checked : recheck(view, checked, request, requestAhead);
  const inside = (limit: number, last = latest) => (split && last > request ? earliestFittingCut(view, fromRequest, last, limit, requestAhead) : null);
  const floorCut = leastKeptCut(view, checked, latest, input.minKeptTokens ?? 0, requestAhead);
  const floorAt = floorCut?.firstKeptIndex ?? latest;
  // What the summary must hold besides its own text: the request, when it is compacted with the turn's early part and carried in the summary.
  const carried = !requestAhead && floorAt > request ? (view.tokens[request] ?? 0) : 0;
  const summaryFloor = Math.max(Math.ceil(allowance / 2), Math.min(MIN_SUMMARY_ROOM, allowance)) + carried;
  const later =
    (earliestFittingCut(view, checked, Math.min(request, floorAt), runTarget, requestAhead) ?? inside(runTarget, floorAt)) ??
    (floorCut !== null && floorCut.keptTokens <= budget - input.summaryOverheadTokens - summaryFloor ? floorCut : null) ??
    earliestFittingCut(view, checked, request, target, requestAhead) ??
    inside(target);
  if (later !== null) {
    return {
      cut: later,
      shrink: null,
      repairs: [
        `The cut chosen by '${plugin}' keeps ${checked.keptTokens} tokens, more than the budget of ${budget}; it was moved from message ${checked.firstKeptIndex} to ${later.firstKeptIndex}${later.firstKeptIndex > request ? ` (inside the newest turn, its request ${requestAhead ? "kept ahead of" : "carried in"} the summary)` : ""}, which keeps ${later.keptTokens}.`,
      ],
    };
  }

  // Rule 3: no cut up to the latest place fits the target, so the cut is there and what it keeps is shrunk.
  const atRequest = latest > checked.firstKeptIndex ? recheck(view, checked, latest, requestAhead) : checked;
  let kept = shrinkKept(input, atRequest, target, headroom);
  // No room for a summary of its own: the summary may be short, but the request must fit.
  if (!kept.shrink.fits) kept = shrinkKept(input, atRequest, budget - input.summaryOverheadTokens - 1);
  if (!kept.shrink.fits) throw overflow(view, keptIndicesOf(atRequest, view.facts.length), kept.raw, budget);
  return {
    cut: { ...atRequest, keptTokens: kept.shrink.tokens },
    shrink: kept.shrink,
    repairs: [
      ...(atRequest !== checked
        ? [
            atRequest.firstKeptIndex === latestCutIndex(view)
              ? `The cut chosen by '${plugin}' was moved from message ${checked.firstKeptIndex} to the newest user message (${atRequest.firstKeptIndex}).`
              : `The cut chosen by '${plugin}' was moved from message ${checked.firstKeptIndex} to message ${atRequest.firstKeptIndex}, the newest turn's last step (its request ${requestAhead ? "kept ahead of" : "carried in"} the summary).`,
          ]
        : []),
      `The cut chosen by '${plugin}' keeps ${atRequest.keptTokens} tokens and cutting alone could not bring the context under the budget of ${budget} tokens; shrunk to head and tail: ${kept.text}. The full text stays in the transcript.`,
    ],
  };
}

/** What rule 5 needs of a run: `FitInput` with the cut as it stands instead of the checked one. */
export type SummaryRoomInput<T> = Omit<FitInput<T>, "checked" | "newestRequest"> & { readonly cut: CheckedCut };

/** The cut and its shrinking after rule 5 made room for the summary, and what it did. */
export interface MadeRoom<T> {
  readonly cut: CheckedCut;
  readonly shrink: ShrinkResult<T>;
  readonly repair: string;
}

/**
 * Rule 5: when what the cut keeps leaves the summary less than `MIN_SUMMARY_ROOM` (within the
 * allowance), the kept messages shrunk from their originals to leave it, else half of it. Null
 * when the room is there already, or shrinking cannot make even half (the system prompt and
 * pinned messages are never shortened): the summary then has what is left.
 */
export function makeSummaryRoom<T>(input: SummaryRoomInput<T>): MadeRoom<T> | null {
  const { cut, budget } = input;
  const least = Math.min(MIN_SUMMARY_ROOM, summaryAllowance(budget, input.summaryMaxTokens));
  const left = budget - input.summaryOverheadTokens - cut.keptTokens;
  if (left >= least) return null;
  // Half the room when the whole cannot be had; a shrinking that cannot reach even that would cut
  // everything to its markers for a few tokens, and the summary keeps the little it has instead.
  for (const room of [least, Math.ceil(least / 2)]) {
    if (room <= left) break;
    const kept = shrinkKept(input, cut, budget - input.summaryOverheadTokens - room);
    if (!kept.shrink.fits) continue;
    return {
      cut: { ...cut, keptTokens: kept.shrink.tokens },
      shrink: kept.shrink,
      repair: `The cut chosen by '${cut.selectedBy}' keeps ${cut.keptTokens} tokens of the budget of ${budget}, which leaves the summary ${Math.max(0, left)}; to give it at least ${room}, shrunk to head and tail: ${kept.text}. The full text stays in the transcript.`,
    };
  }
  return null;
}

/** Indices of what a cut keeps, in the order the core shrinks them: the preserved messages, then the kept ones. */
function keptIndicesOf(cut: CheckedCut, length: number): number[] {
  const indices = [...cut.preservedIndices];
  for (let i = cut.firstKeptIndex; i < length; i++) indices.push(i);
  return indices;
}

/**
 * What `cut` keeps, from the working set's originals, shrunk to `budget`: the result with its
 * indices in the working set (`shrink`), as shrinkToBudget gave it (`raw`), and in a sentence.
 */
function shrinkKept<T>(input: Pick<FitInput<T>, "messages" | "tokens" | "recallTool">, cut: CheckedCut, budget: number, headroomTo?: number) {
  const keptIndices = keptIndicesOf(cut, input.messages.length);
  const raw = shrinkToBudget(
    keptIndices.map((i) => input.messages[i] as T),
    input.tokens,
    { budget, recallTool: input.recallTool, ...(headroomTo === undefined ? {} : { headroomTo }) },
  );
  const shrunk = raw.shrunk.map((s) => ({ ...s, index: keptIndices[s.index] as number }));
  const text = shrunk.map((s) => `message ${s.index} (${s.what}, ${s.tokensBefore} -> ${s.tokensAfter} tokens)`).join(", ");
  return { shrink: { ...raw, shrunk } as ShrinkResult<T>, raw, text };
}

function recheck(view: MessageView, checked: CheckedCut, firstKeptIndex: number, requestAhead: boolean): CheckedCut {
  return checkCut(view, { ...checked, firstKeptIndex }, { plugin: checked.selectedBy, budget: Number.POSITIVE_INFINITY, requestAhead });
}

/**
 * The earliest cut point after the checked cut, no later than `latest`, whose kept part fits
 * `target`; null when none does. What a cut keeps shrinks as it moves later, so a binary search
 * over the cut points finds it with a few checks.
 */
function earliestFittingCut(view: MessageView, checked: CheckedCut, latest: number, target: number, requestAhead: boolean): CheckedCut | null {
  const points: number[] = [];
  for (let i = checked.firstKeptIndex + 1; i <= latest; i++) if (isCutPoint(view.facts[i]!)) points.push(i);
  let low = 0;
  let high = points.length - 1;
  let found: CheckedCut | null = null;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const candidate = recheck(view, checked, points[mid] as number, requestAhead);
    if (candidate.keptTokens <= target) {
      found = candidate;
      high = mid - 1;
    } else {
      low = mid + 1;
    }
  }
  return found;
}

/** Rule 4's error: what alone is over the budget, with the numbers. */
function overflow<T>(view: MessageView, keptIndices: readonly number[], shrink: ShrinkResult<T>, budget: number): CompactionError {
  const request = lastUserIndex(view.facts);
  let system = 0;
  let pinned = 0;
  for (const i of keptIndices) {
    const f = view.facts[i]!;
    if (f.kind === "system") system += view.tokens[i] ?? 0;
    else if (f.pinned) pinned += view.tokens[i] ?? 0;
  }
  const requestIndex = keptIndices.indexOf(request);
  const requestTokens = requestIndex < 0 ? 0 : (shrink.shrunk.find((s) => s.index === requestIndex)?.tokensAfter ?? view.tokens[request] ?? 0);
  const other = Math.max(0, shrink.tokens - system - pinned - requestTokens);
  return new CompactionError(
    ErrorCodes.CONTEXT_OVERFLOW,
    `The context cannot be brought under the budget of ${budget} tokens: the system prompt (${system} tokens), the pinned messages (${pinned}) and the newest user message (${requestTokens}, cut to head and tail) with what cannot be shortened further (${other}: the newest turn's other messages down to their markers, tool-call names and the thinking of the calls being answered) are ${shrink.tokens} tokens.`,
    { hint: "Unpin messages, shorten the system prompt, or use a model with a larger context window." },
  );
}

export interface CompactedInput<T> {
  /**
   * The compacted context built from the working set's messages as they were before any shrinking:
   * the preserved ones, the summary or note (at `summaryAt`), the kept ones.
   */
  readonly messages: readonly T[];
  /** Index of the summary or note in `messages`, or -1 without one. */
  readonly summaryAt: number;
  /** What that message is, for the repair's sentence. */
  readonly summaryKind: "summary" | "note";
  readonly cut: CheckedCut;
  readonly tokens: MessageTokenCounter<T>;
  readonly budget: number;
  /** How far over the budget the compacted context is as it stands, for the repair's sentence. */
  readonly over: number;
  readonly recallTool: string | undefined;
}

export interface FittedCompacted<T> {
  readonly messages: readonly T[];
  /** Every message shrunk, by index in the working set. */
  readonly shrunk: readonly ShrunkMessage[];
  readonly tokens: number;
  /** What the core changed, one sentence. */
  readonly repair: string;
}

/**
 * Rule 6 for a compacted context over the budget: its kept messages shrunk from their originals
 * (shrinkToBudget, once, so each marker says all that was cut; the summary, the system prompt and
 * pinned messages are never shortened) until the whole fits. Null when even that cannot fit (a
 * summary that alone fills the budget): the caller keeps what it has rather than cut the request
 * for nothing, and says it is over.
 */
export function fitCompacted<T>(input: CompactedInput<T>): FittedCompacted<T> | null {
  const { messages, summaryAt, cut, budget } = input;
  const shrink = shrinkToBudget(messages, input.tokens, {
    budget,
    recallTool: input.recallTool,
    protect: new Set(summaryAt >= 0 ? [summaryAt] : []),
  });
  if (!shrink.fits) return null;
  const preserved = cut.preservedIndices;
  const afterSummary = summaryAt >= 0 ? 1 : 0;
  const working = (at: number) => (at < preserved.length ? (preserved[at] as number) : cut.firstKeptIndex + at - preserved.length - afterSummary);
  const shrunk = shrink.shrunk.map((s) => ({ ...s, index: working(s.index) }));
  const shrunkText = shrunk.map((s) => `message ${s.index} (${s.what}, ${s.tokensBefore} -> ${s.tokensAfter} tokens)`).join(", ");
  return {
    messages: shrink.messages,
    shrunk,
    tokens: shrink.tokens,
    repair: `${summaryAt >= 0 ? `With its ${input.summaryKind}, the` : "The"} compacted context was ${input.over} tokens over the budget of ${budget}; shrunk to head and tail: ${shrunkText}. The full text stays in the transcript.`,
  };
}
