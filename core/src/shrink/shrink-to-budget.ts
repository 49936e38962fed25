/**
 * The one mechanism that brings any context under a budget when cutting alone cannot: it
 * shrinks what is kept, in a fixed order, to head and tail with a marker (see head-and-tail.ts).
 * Every strategy gets it through the core (the compactor after a cut, hosts at send time); no
 * plugin has a copy. Nothing is lost: the shrunk copies are new messages, the originals (in the
 * transcript, in recall's index) are untouched.
 *
 * The order, each step only while the context is still over the budget:
 * 1. tool outputs, largest first (anywhere in the messages given: after a cut, the kept part);
 * 2. other messages of the newest turn (assistant text, notes), largest first;
 *    (steps 1 and 2 first leave a readable head and tail, `keepTokens`; a second round cuts the
 *    same messages down to `minimumKeepTokens`)
 * 3. thinking, dropped from every message but the newest turn's last assistant message when it
 *    made tool calls (providers need that one unchanged), largest first (adapters with
 *    `dropThinking`);
 * 4. tool-call arguments, their strings cut to head and tail so they stay valid JSON, largest
 *    first (adapters with `mapToolArguments`), to `keepTokens`, then `minimumKeepTokens`;
 * 5. the older messages (before the newest user message) and the short ones every earlier step
 *    left alone, down to `minimumKeepTokens`;
 * 6. the newest user message, and only to head and tail: `keepTokens`, then `minimumKeepTokens`;
 * 7. with `dropOlder` (send time only; a compaction cuts them instead): whole older turns left
 *    out of what is sent, oldest first, summaries last, then the newest turn's earlier steps
 *    (an assistant message with the results of its calls), oldest first; never the system
 *    prompt, a pinned message or a tool call without its result. What was shrunk before and now
 *    fits whole again is sent whole (the request first, then the newest first);
 * 8. what is left of the tool outputs and arguments, down to the marker alone;
 * 9. with `dropOlder`, as a last resort, the newest turn's last step too (the assistant message
 *    whose calls are being answered, with their results): what is sent is then the system
 *    prompt, the pinned messages and the request, and the model answers the request afresh.
 * The system prompt, pinned messages and summaries are never shortened.
 *
 * With `headroomTo`, once the budget is met, tool outputs, tool-call arguments and the newest
 * turn's other messages are shortened further, oldest first and never the newest step (the calls
 * being answered and their results): to the readable head and tail, then tool outputs and
 * arguments to `minimumKeepTokens`, until the messages hold at most that many tokens: shrinking changes messages early in the request, which costs a miss of the provider's
 * prompt cache, so a step that must shrink frees room for the requests after it too, instead of
 * shrinking again with every message appended.
 *
 * Deterministic: the same messages and budget always give the same result (prompt caches stay
 * warm), and messages that already fit are returned as they are (the same array).
 */
import type { MessageFacts } from "../messages/adapter.js";
import type { MessageTokenCounter } from "../tokens/message-tokens.js";
import { lastUserIndex } from "../cut/turns.js";
import { headAndTail, type ShrinkMarkerInfo, shrinkMarker } from "./head-and-tail.js";

export interface ShrinkOptions {
  /** Most tokens the messages may hold. */
  readonly budget: number;
  /** Name of the recall tool to point at in markers (e.g. `memory_search`), when recall is configured. */
  readonly recallTool?: string | undefined;
  /** Tokens a shrunk message keeps in the first round. Default: a 16th of the budget, 64 to 2,000. */
  readonly keepTokens?: number;
  /** Tokens a shrunk message keeps in the last round. Default 48. */
  readonly minimumKeepTokens?: number;
  /** Indices never shrunk (besides system prompt, pinned messages and summaries). */
  readonly protect?: ReadonlySet<number>;
  /**
   * Leave older messages out when shortening is not enough (step 7). For what is sent, never for
   * a compaction's result: the transcript keeps them. Default false.
   */
  readonly dropOlder?: boolean;
  /**
   * Once within the budget, shorten tool outputs, tool-call arguments and the newest turn's other
   * messages further (oldest first, never the newest step) until the messages hold at most this
   * many tokens, when they can (see the file's comment). Only applies when some shrinking was
   * needed. Default: none.
   */
  readonly headroomTo?: number;
  /**
   * The share of what a shrunk piece keeps that goes to a line listing the names in its removed
   * middle (paths, code names, flags, error codes the head and tail do not show), the head and
   * tail sharing the rest (see elided-names.ts). Default `NAMES_SHARE`; 0 keeps head and tail only.
   */
  readonly namesShare?: number;
}

/**
 * The default share of a shrunk piece's allowance for the names of its removed middle: the agent
 * goes on to use names from the middle of older outputs and written files (test names, file
 * names in a listing) as often as from their head and tail.
 */
export const NAMES_SHARE = 0.5;

/** One message the shrinking shortened. */
export interface ShrunkMessage {
  /** Index in the messages given. */
  readonly index: number;
  /** What was shortened last: its text (`tool output`, `message`, `request`), `tool-call arguments` or `thinking` (dropped). */
  readonly what: ShrinkMarkerInfo["what"] | "thinking";
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** Tool-call ids the message answers (tool outputs), to fetch the full text from the transcript. */
  readonly toolCallIds: readonly string[];
}

export interface ShrinkResult<T> {
  /** The messages, with shrunk copies in place of the messages in `shrunk` and those in `dropped` left out; the input array when none was. */
  readonly messages: readonly T[];
  readonly shrunk: readonly ShrunkMessage[];
  /** Indices (in the messages given) left out by step 7, in order. */
  readonly dropped: readonly number[];
  /** Tokens of `messages`. */
  readonly tokens: number;
  /** True when `tokens` is within the budget. */
  readonly fits: boolean;
}

/**
 * A message smaller than this (in tokens) is not worth shrinking in the early steps: the marker
 * would take most of it. Small budgets lower it, down to 16.
 */
function smallestShrinkable(budget: number): number {
  return Math.min(160, Math.max(16, Math.floor(budget / 8)));
}
/** Tries at hitting a token target by characters before searching for the share that fits. */
const ATTEMPTS = 8;
/** Halvings of the share searched for when those tries all miss (to a 64th of the last share tried). */
const BISECTIONS = 6;
/** How far under its target the search aims, as the tries do by aiming lower. */
const BISECTION_MARGIN = 0.02;

type Rewrite = (piece: string) => string;

/** How one message is shortened: a rewrite of its text, one of its arguments, its thinking dropped. */
interface Edit {
  text?: Rewrite;
  args?: Rewrite;
  noThinking?: boolean;
  what: ShrunkMessage["what"];
}

/** Shrinks `messages` until they fit `options.budget`, in the order described above. */
export function shrinkToBudget<T>(messages: readonly T[], tokens: MessageTokenCounter<T>, options: ShrinkOptions): ShrinkResult<T> {
  const counts = messages.map((m) => tokens.count(m));
  let total = counts.reduce((a, b) => a + b, 0);
  if (total <= options.budget) return { messages, shrunk: [], dropped: [], tokens: total, fits: true };

  const adapter = tokens.facts.adapter;
  const facts = messages.map((m) => tokens.facts.of(m));
  const newestUser = lastUserIndex(facts);
  const keep = options.keepTokens ?? Math.min(2000, Math.max(64, Math.floor(options.budget / 16)));
  const minimum = Math.min(keep, options.minimumKeepTokens ?? 48);
  const smallest = smallestShrinkable(options.budget);
  const namesShare = options.namesShare ?? NAMES_SHARE;
  const untouchable = (i: number) => {
    const f = facts[i] as MessageFacts;
    return f.pinned || f.kind === "system" || f.kind === "summary" || options.protect?.has(i) === true;
  };
  /** Never left out (step 7): summaries may be, last of the older messages. */
  const alwaysSent = (i: number) => {
    const f = facts[i] as MessageFacts;
    return f.pinned || f.kind === "system" || options.protect?.has(i) === true;
  };
  const shrinkable = (i: number) => !untouchable(i) && (facts[i] as MessageFacts).text.length > 0;
  const bySize = (indices: number[], size: (i: number) => number = (i) => counts[i] as number) =>
    indices.sort((a, b) => size(b) - size(a) || b - a);
  const all = messages.map((_, i) => i);
  const toolOutputs = bySize(all.filter((i) => facts[i]?.kind === "toolResult" && shrinkable(i)));
  const newestTurn = bySize(all.filter((i) => i > newestUser && facts[i]?.kind !== "toolResult" && facts[i]?.kind !== "user" && shrinkable(i)));
  const older = bySize(all.filter((i) => i < newestUser && facts[i]?.kind !== "toolResult" && shrinkable(i)));
  const request = newestUser >= 0 && shrinkable(newestUser) ? [newestUser] : [];
  // Providers need the thinking of the assistant message whose tool calls are being answered
  // (Anthropic checks its signature): the newest turn's last assistant message, when it has calls.
  const lastAssistant = findLast(all, (i) => i > newestUser && facts[i]?.kind === "assistant");
  const keepsThinking = (facts[lastAssistant]?.toolCalls.length ?? 0) > 0 ? lastAssistant : -1;
  const thinking = bySize(
    all.filter((i) => i !== keepsThinking && !untouchable(i) && (facts[i]?.thinking.length ?? 0) > 0 && adapter.dropThinking !== undefined),
    (i) => facts[i]?.thinking.length ?? 0,
  );
  const argumentSize = (i: number) => facts[i]?.toolCalls.reduce((sum, call) => sum + argumentText(call.arguments).length, 0) ?? 0;
  const withArguments = bySize(
    all.filter((i) => !untouchable(i) && adapter.mapToolArguments !== undefined && argumentSize(i) > 0),
    argumentSize,
  );

  const out: Array<T | undefined> = [...messages];
  const edits = new Map<number, Edit>();
  const shrunk = new Map<number, ShrunkMessage>();
  const dropped = new Set<number>();
  /** What the steps shrink to: the budget, then (with headroomTo) the headroom's mark. */
  let limit = options.budget;
  const over = () => total > limit;

  /** The message at `i` with `edit` applied to the original (text, arguments and thinking are independent). */
  const build = (i: number, edit: Edit): T => {
    let message = messages[i] as T;
    if (edit.text !== undefined) message = adapter.mapText(message, edit.text);
    if (edit.args !== undefined && adapter.mapToolArguments !== undefined) message = adapter.mapToolArguments(message, edit.args);
    if (edit.noThinking === true && adapter.dropThinking !== undefined) message = adapter.dropThinking(message);
    return message;
  };
  /** Puts `candidate` (built from `edit`) in place when it is smaller. */
  const accept = (i: number, edit: Edit, candidate: T): boolean => {
    const after = tokens.count(candidate);
    const current = counts[i] as number;
    if (after >= current) return false;
    out[i] = candidate;
    counts[i] = after;
    total -= current - after;
    edits.set(i, edit);
    const before = shrunk.get(i)?.tokensBefore ?? tokens.count(messages[i] as T);
    shrunk.set(i, { index: i, what: edit.what, tokensBefore: before, tokensAfter: after, toolCallIds: facts[i]?.toolResultIds ?? [] });
    return true;
  };
  const markerInfo = (i: number, what: ShrinkMarkerInfo["what"]) => ({
    what,
    toolCallIds: facts[i]?.toolResultIds ?? [],
    messageId: facts[i]?.id,
    recallTool: options.recallTool,
  });

  /** Shortens the text of each message in `indices` towards `floor` tokens; pieces under `smallestPiece` tokens stay whole. */
  const textStep = (indices: readonly number[], floor: number, smallestPiece: number) => {
    for (const i of indices) {
      if (!over()) return;
      if (dropped.has(i)) continue;
      const current = counts[i] as number;
      const target = Math.max(floor, current - (total - limit));
      if (current < smallestPiece || target >= current) continue;
      const what: ShrinkMarkerInfo["what"] = i === newestUser ? "request" : facts[i]?.kind === "toolResult" ? "tool output" : "message";
      const edit = edits.get(i) ?? { what };
      const text = facts[i]?.text ?? "";
      const rewrite = fitPieces((r) => build(i, { ...edit, text: r }), tokens, current, target, smallestPiece, text, markerInfo(i, what), namesShare);
      if (rewrite !== undefined) accept(i, { ...edit, text: rewrite, what }, build(i, { ...edit, text: rewrite }));
    }
  };
  /** Shortens the tool-call arguments of each message in `indices` towards `floor` tokens of arguments. */
  const argumentStep = (indices: readonly number[], floor: number) => {
    for (const i of indices) {
      if (!over()) return;
      if (dropped.has(i)) continue;
      const current = counts[i] as number;
      const size = argumentTokens(i);
      const target = current - Math.min(size - floor, total - limit);
      if (target >= current) continue;
      const edit = edits.get(i) ?? { what: "tool-call arguments" as const };
      const text = facts[i]?.toolCalls.map((call) => argumentText(call.arguments)).join("") ?? "";
      const rewrite = fitPieces((r) => build(i, { ...edit, args: r }), tokens, current, target, 0, text, {
        ...markerInfo(i, "tool-call arguments"),
        toolCallIds: facts[i]?.toolCalls.map((call) => call.id) ?? [],
      }, namesShare);
      if (rewrite !== undefined) accept(i, { ...edit, args: rewrite, what: "tool-call arguments" }, build(i, { ...edit, args: rewrite }));
    }
  };
  const argumentTokens = (i: number) => Math.ceil((argumentSize(i) * (counts[i] as number)) / Math.max(1, messageChars(facts[i] as MessageFacts)));
  const thinkingStep = () => {
    for (const i of thinking) {
      if (!over()) return;
      if (dropped.has(i)) continue;
      const edit = { ...(edits.get(i) ?? {}), noThinking: true, what: "thinking" as const };
      accept(i, edit, build(i, edit));
    }
  };
  const dropStep = (groups: readonly (readonly number[])[]) => {
    for (const group of groups) {
      if (!over()) break;
      for (const i of group) {
        dropped.add(i);
        total -= counts[i] as number;
        out[i] = undefined;
        shrunk.delete(i);
      }
    }
    if (dropped.size > 0) restoreStep();
  };
  /**
   * A group left out may free more room than was missing: messages shrunk before it are sent
   * whole again where they now fit, the request first, then the newest first.
   */
  const restoreStep = () => {
    const order = [...shrunk.keys()].sort((a, b) => (a === newestUser ? -1 : b === newestUser ? 1 : b - a));
    for (const i of order) {
      const original = tokens.count(messages[i] as T);
      if (total - (counts[i] as number) + original > options.budget) continue;
      total += original - (counts[i] as number);
      counts[i] = original;
      out[i] = messages[i] as T;
      shrunk.delete(i);
      edits.delete(i);
    }
  };

  textStep(toolOutputs, keep, smallest);
  textStep(newestTurn, keep, smallest);
  textStep(toolOutputs, minimum, smallest);
  textStep(newestTurn, minimum, smallest);
  thinkingStep();
  argumentStep(withArguments, keep);
  argumentStep(withArguments, minimum);
  textStep(older, minimum, smallest);
  // Short messages every step above left alone: anything longer than the short marker.
  textStep(bySize([...toolOutputs, ...newestTurn, ...older]), minimum, 0);
  // The request goes last: only when everything else is down to its smallest head and tail.
  textStep(request, keep, smallest);
  textStep(request, minimum, 0);
  if (options.dropOlder === true) dropStep(droppableGroups(facts, newestUser, alwaysSent));
  textStep(toolOutputs, 0, 0);
  argumentStep(withArguments, 0);
  // Last resort at send time: the newest step itself (its calls, their results and thinking), so
  // that whatever holds the system prompt, the pinned messages and the request fits; the model
  // answers the request afresh.
  if (options.dropOlder === true && over()) dropStep(newestTurnSteps(facts, newestUser).slice(-1).filter((step) => !step.some(alwaysSent)));
  if (options.headroomTo !== undefined && options.headroomTo < options.budget && !over()) {
    // Oldest first, and never the newest step (the call being answered and its results): the
    // model needs those whole, and what is older was already in what was sent before.
    const newestStep = lastAssistant >= 0 ? lastAssistant : messages.length;
    const older = (indices: readonly number[]) => indices.filter((i) => i < newestStep && !dropped.has(i)).sort((a, b) => a - b);
    limit = Math.max(0, options.headroomTo);
    textStep(older(toolOutputs), keep, smallest);
    argumentStep(older(withArguments), keep);
    textStep(older(newestTurn), keep, smallest);
    textStep(older(toolOutputs), minimum, smallest);
    argumentStep(older(withArguments), minimum);
    limit = options.budget;
  }

  const list = [...shrunk.values()].sort((a, b) => a.index - b.index);
  const changed = list.length > 0 || dropped.size > 0;
  return {
    messages: changed ? (out.filter((m, i) => !dropped.has(i) && m !== undefined) as T[]) : messages,
    shrunk: list,
    dropped: [...dropped].sort((a, b) => a - b),
    tokens: total,
    fits: total <= options.budget,
  };
}

/**
 * The rewrite that cuts each piece (of at least `smallestPiece` tokens) to the same share of its
 * characters, as head and tail with the marker, chosen so the message built by `make` holds at
 * most `target` tokens; the smallest found when none does; undefined when none is smaller.
 *
 * The first tries cut each piece to `target / current` of its characters, then aim lower by what
 * they missed; that is right when the pieces are most of the message, and leaves a little room
 * under the target. When the pieces are a small part of it (a message of kept thinking and a few
 * large arguments, or one whose pieces were shrunk before, as a rewrite starts from the original
 * text), those tries can all miss though the markers alone fit: the share is then found by
 * bisection between the markers alone and the last share tried, aiming `BISECTION_MARGIN` under
 * the target as the tries do (room for the error of a learned provider ratio). When even the
 * markers alone miss, it is the best of the tries, as without the bisection.
 */
function fitPieces<T>(
  make: (rewrite: Rewrite) => T,
  tokens: MessageTokenCounter<T>,
  current: number,
  target: number,
  smallestPiece: number,
  text: string,
  about: Omit<ShrinkMarkerInfo, "removedChars" | "removedTokens" | "short">,
  namesShare: number,
): Rewrite | undefined {
  const charsPerToken = Math.max(1, text.length) / Math.max(1, current);
  const attempt = (share: number, short: boolean) => {
    const marker = (removedChars: number) =>
      shrinkMarker({ ...about, short, removedChars, removedTokens: Math.max(1, Math.round(removedChars / Math.max(1, charsPerToken))) });
    const rewrite: Rewrite = (piece) => (piece.length < smallestPiece * charsPerToken ? piece : headAndTail(piece, piece.length * share, marker, namesShare));
    return { rewrite, count: tokens.count(make(rewrite)) };
  };
  let best: { rewrite: Rewrite; count: number } | undefined;
  let share = target / current;
  let missed = share;
  for (let tries = 0; tries < ATTEMPTS; tries++) {
    // Half the tries with the full marker; then, for a budget too small for it, the short one.
    const tried = attempt(share, tries >= ATTEMPTS / 2);
    if (tried.count <= target) return tried.rewrite;
    if (tried.count < (best?.count ?? current)) best = tried;
    missed = share;
    // Markers and what this rewrite cannot shorten do not scale: aim lower.
    share *= Math.max(0.1, (target / tried.count) * 0.95);
  }
  // The smallest rewrite there is: the short markers alone.
  const shortest = attempt(0, true);
  if (shortest.count > target) return best?.rewrite;
  const full = attempt(0, false);
  const short = full.count > target;
  let fit = short ? shortest.rewrite : full.rewrite;
  const aim = Math.floor(target * (1 - BISECTION_MARGIN));
  let low = 0;
  let high = missed;
  for (let step = 0; step < BISECTIONS; step++) {
    const middle = (low + high) / 2;
    const tried = attempt(middle, short);
    if (tried.count <= aim) {
      fit = tried.rewrite;
      low = middle;
    } else {
      high = middle;
    }
  }
  return fit;
}

/**
 * What step 7 may leave out, in order, each group whole: the older turns (a turn starts at a user
 * message), oldest first, then the summaries before the newest user message, then the newest
 * turn's steps (an assistant message and the results that follow it) but its last. In a turn
 * that holds a pinned message or the system prompt, its other steps go one by one. A group never
 * holds anything `untouchable`, and never a call without its result.
 */
function droppableGroups(facts: readonly MessageFacts[], newestUser: number, untouchable: (i: number) => boolean): number[][] {
  const groups: number[][] = [];
  const summaries: number[][] = [];
  let turn: number[] = [];
  const flushTurn = () => {
    if (turn.some(untouchable)) groups.push(...stepsOf(facts, turn).filter((step) => !step.some(untouchable)));
    else if (turn.length > 0) groups.push(turn);
    turn = [];
  };
  const end = newestUser < 0 ? facts.length : newestUser;
  for (let i = 0; i < end; i++) {
    const f = facts[i] as MessageFacts;
    if (f.kind === "summary" && !untouchable(i)) {
      summaries.push([i]);
      continue;
    }
    if (f.kind === "user" && turn.length > 0) flushTurn();
    turn.push(i);
  }
  flushTurn();
  groups.push(...summaries);
  const steps = newestTurnSteps(facts, newestUser);
  steps.pop(); // the last step stays: it is what the model is answering (step 9 alone leaves it out)
  for (const step of steps) if (!step.some(untouchable)) groups.push(step);
  return groups;
}

/** The steps of the newest turn after its request (an assistant message and the results that follow it); none when there is no request. */
function newestTurnSteps(facts: readonly MessageFacts[], newestUser: number): number[][] {
  if (newestUser < 0) return [];
  const rest: number[] = [];
  for (let i = newestUser + 1; i < facts.length; i++) rest.push(i);
  return stepsOf(facts, rest);
}

/** `indices` in steps: each message starts one, except a tool result, which joins the step of its call. */
function stepsOf(facts: readonly MessageFacts[], indices: readonly number[]): number[][] {
  const steps: number[][] = [];
  for (const i of indices) {
    if (facts[i]?.kind === "toolResult" && steps.length > 0) (steps.at(-1) as number[]).push(i);
    else steps.push([i]);
  }
  return steps;
}

function argumentText(args: unknown): string {
  return typeof args === "string" ? args : (JSON.stringify(args) ?? "");
}

function messageChars(f: MessageFacts): number {
  return f.text.length + f.thinking.length + f.toolCalls.reduce((sum, call) => sum + call.name.length + argumentText(call.arguments).length, 0);
}

function findLast(indices: readonly number[], test: (i: number) => boolean): number {
  for (let k = indices.length - 1; k >= 0; k--) if (test(indices[k] as number)) return indices[k] as number;
  return -1;
}
