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
 * 3. the newest user message, last, and only to head and tail.
 * Steps 1 and 2 first leave what they shrink a readable head and tail (`keepTokens`); if that is
 * not enough, a second round cuts the same messages down to `minimumKeepTokens`. Only then is
 * the request shrunk, first to `keepTokens`, then to `minimumKeepTokens`.
 * The system prompt, pinned messages and summaries are never shrunk.
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
}

/** One message the shrinking shortened. */
export interface ShrunkMessage {
  /** Index in the messages given. */
  readonly index: number;
  readonly what: ShrinkMarkerInfo["what"];
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** Tool-call ids the message answers (tool outputs), to fetch the full text from the transcript. */
  readonly toolCallIds: readonly string[];
}

export interface ShrinkResult<T> {
  /** The messages, with shrunk copies in place of the messages in `shrunk`; the input array when none was. */
  readonly messages: readonly T[];
  readonly shrunk: readonly ShrunkMessage[];
  /** Tokens of `messages`. */
  readonly tokens: number;
  /** True when `tokens` is within the budget. */
  readonly fits: boolean;
}

/**
 * A message smaller than this (in tokens) is never worth shrinking: the marker would take most
 * of it. Small budgets lower it, down to 16.
 */
function smallestShrinkable(budget: number): number {
  return Math.min(160, Math.max(16, Math.floor(budget / 8)));
}
/** Attempts at hitting a token target by characters before settling for what fits. */
const ATTEMPTS = 8;

/** Shrinks `messages` until they fit `options.budget`, in the order described above. */
export function shrinkToBudget<T>(messages: readonly T[], tokens: MessageTokenCounter<T>, options: ShrinkOptions): ShrinkResult<T> {
  const counts = messages.map((m) => tokens.count(m));
  let total = counts.reduce((a, b) => a + b, 0);
  if (total <= options.budget) return { messages, shrunk: [], tokens: total, fits: true };

  const facts = messages.map((m) => tokens.facts.of(m));
  const newestUser = lastUserIndex(facts);
  const keep = options.keepTokens ?? Math.min(2000, Math.max(64, Math.floor(options.budget / 16)));
  const minimum = Math.min(keep, options.minimumKeepTokens ?? 48);
  const smallest = smallestShrinkable(options.budget);
  const shrinkable = (i: number) => {
    const f = facts[i] as MessageFacts;
    return !f.pinned && f.kind !== "system" && f.kind !== "summary" && options.protect?.has(i) !== true && f.text.length > 0;
  };
  const bySize = (indices: number[]) => indices.sort((a, b) => (counts[b] as number) - (counts[a] as number) || b - a);
  const all = messages.map((_, i) => i);
  const toolOutputs = bySize(all.filter((i) => facts[i]?.kind === "toolResult" && shrinkable(i)));
  const newestTurn = bySize(
    all.filter((i) => i > newestUser && facts[i]?.kind !== "toolResult" && facts[i]?.kind !== "user" && shrinkable(i)),
  );
  const request = newestUser >= 0 && shrinkable(newestUser) ? [newestUser] : [];

  const out = [...messages];
  const shrunk = new Map<number, ShrunkMessage>();
  const step = (indices: readonly number[], floor: number) => {
    for (const i of indices) {
      const excess = total - options.budget;
      if (excess <= 0) return;
      const current = counts[i] as number;
      const target = Math.max(floor, current - excess);
      if (current < smallest || target >= current) continue;
      const original = messages[i] as T;
      const what: ShrinkMarkerInfo["what"] = i === newestUser ? "request" : facts[i]?.kind === "toolResult" ? "tool output" : "message";
      const smaller = shrinkMessage(original, tokens, target, smallest, {
        what,
        toolCallIds: facts[i]?.toolResultIds ?? [],
        messageId: facts[i]?.id,
        recallTool: options.recallTool,
      });
      const after = tokens.count(smaller);
      if (after >= current) continue;
      out[i] = smaller;
      counts[i] = after;
      total -= current - after;
      const before = shrunk.get(i)?.tokensBefore ?? tokens.count(original);
      shrunk.set(i, { index: i, what, tokensBefore: before, tokensAfter: after, toolCallIds: facts[i]?.toolResultIds ?? [] });
    }
  };
  step(toolOutputs, keep);
  step(newestTurn, keep);
  step(toolOutputs, minimum);
  step(newestTurn, minimum);
  // The request goes last: only when everything else is down to its smallest head and tail.
  step(request, keep);
  step(request, minimum);
  const list = [...shrunk.values()].sort((a, b) => a.index - b.index);
  return { messages: list.length === 0 ? messages : out, shrunk: list, tokens: total, fits: total <= options.budget };
}

/**
 * A copy of `message` (from the input, never a shrunk copy, so the marker counts what was
 * removed from the original) cut to about `target` tokens: each text piece keeps the same share
 * of its characters, as head and tail. Pieces too short to be worth a marker stay whole.
 */
function shrinkMessage<T>(
  message: T,
  tokens: MessageTokenCounter<T>,
  target: number,
  smallest: number,
  about: Omit<ShrinkMarkerInfo, "removedChars" | "removedTokens">,
): T {
  const adapter = tokens.facts.adapter;
  const current = tokens.count(message);
  const text = tokens.facts.of(message).text;
  const charsPerToken = text.length / Math.max(1, current);
  let short = false;
  const marker = (removedChars: number) =>
    shrinkMarker({ ...about, short, removedChars, removedTokens: Math.max(1, Math.round(removedChars / Math.max(1, charsPerToken))) });
  let share = target / current;
  let best = message;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    // Half the attempts with the full marker; then, for a budget too small for it, the short one.
    if (attempt === ATTEMPTS / 2) short = true;
    const candidate = adapter.mapText(message, (piece) =>
      piece.length < smallest * charsPerToken ? piece : headAndTail(piece, piece.length * share, marker),
    );
    const count = tokens.count(candidate);
    if (count <= target) return candidate;
    if (count < tokens.count(best)) best = candidate;
    // Markers and what cannot be shortened (tool-call arguments, thinking) do not scale: aim lower.
    share *= Math.max(0.1, (target / count) * 0.95);
  }
  return best;
}
