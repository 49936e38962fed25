/**
 * Token counts that survive pi's copies. pi hands `context` handlers a fresh deep copy of the
 * messages before every model call, so counts memoised per object would be lost; these are
 * memoised per message signature (kind, ids, timestamp, sizes and the ends of the text), so
 * only new messages are tokenized on each call.
 */
import type { MessageFacts } from "@compaction/core";

/** Counts kept at most; the memo starts over past this. */
const MAX_ENTRIES = 50_000;
/** Characters from each end of the text that go into a signature. */
const SAMPLE_CHARS = 32;

export class TokenMemo {
  readonly #counts = new Map<string, number>();

  /** Tokens of a message with these facts; `count` runs only for a signature not seen before. */
  message(facts: MessageFacts, count: () => number): number {
    return this.#memo(signature(facts), count);
  }

  /** Tokens of a text (e.g. the system prompt); `count` runs only for a text not seen before. */
  text(text: string, count: () => number): number {
    return this.#memo(`text|${text}`, count);
  }

  /** Counts held. */
  get size(): number {
    return this.#counts.size;
  }

  #memo(key: string, compute: () => number): number {
    const known = this.#counts.get(key);
    if (known !== undefined) return known;
    const tokens = compute();
    if (this.#counts.size >= MAX_ENTRIES) this.#counts.clear();
    this.#counts.set(key, tokens);
    return tokens;
  }
}

/** A key that tells messages apart without reading all of their text. */
export function signature(facts: MessageFacts): string {
  const calls = facts.toolCalls.map((call) => `${call.id}:${call.name}:${argumentsLength(call.arguments)}`).join(",");
  return [
    facts.kind,
    facts.id ?? "",
    facts.timestamp ?? "",
    facts.toolResultIds.join(","),
    facts.toolName ?? "",
    facts.isError ? "E" : "",
    facts.imageCount,
    calls,
    facts.thinking.length,
    facts.text.length,
    facts.text.slice(0, SAMPLE_CHARS),
    facts.text.slice(-SAMPLE_CHARS),
  ].join("|");
}

function argumentsLength(args: unknown): number {
  if (typeof args === "string") return args.length;
  return JSON.stringify(args)?.length ?? 0;
}
