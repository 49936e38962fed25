/**
 * The context size kept up to date one message at a time: the same figure as
 * `MessageTokenCounter.contextTokens(messages).tokens` (the newest trusted provider usage plus
 * counts of what came after it, or the count of every message), at O(1) per appended message
 * instead of a scan per turn.
 */
import type { MessageTokenCounter } from "@compaction/core";

export class ContextSize<T> {
  readonly #tokens: MessageTokenCounter<T>;
  /** Count of every message. */
  #total = 0;
  /** Whether a summary message has been seen, and its timestamp (usage after it must be newer). */
  #summarySeen = false;
  #summaryTimestamp: number | undefined;
  /** The newest trusted usage figure, or undefined; and the counts of the messages after it. */
  #usage: number | undefined;
  #trailing = 0;

  constructor(tokens: MessageTokenCounter<T>, messages: readonly T[] = []) {
    this.#tokens = tokens;
    this.reset(messages);
  }

  /** The context size of the messages pushed since the last reset. */
  get tokens(): number {
    return this.#usage === undefined ? this.#total : this.#usage + this.#trailing;
  }

  /** Starts again from `messages`. */
  reset(messages: readonly T[]): void {
    this.#total = 0;
    this.#summarySeen = false;
    this.#summaryTimestamp = undefined;
    this.#usage = undefined;
    this.#trailing = 0;
    for (const message of messages) this.push(message);
  }

  /** Adds one message at the end. */
  push(message: T): void {
    const count = this.#tokens.count(message);
    const facts = this.#tokens.facts.of(message);
    this.#total += count;
    if (facts.kind === "summary") {
      // Usage stored before a summary describes the old, larger context.
      this.#summarySeen = true;
      this.#summaryTimestamp = facts.timestamp;
      this.#usage = undefined;
      this.#trailing = 0;
      return;
    }
    const usage = facts.usageContextTokens;
    if (usage !== undefined && this.#trusts(facts.timestamp)) {
      this.#usage = usage;
      this.#trailing = 0;
      return;
    }
    this.#trailing += count;
  }

  #trusts(timestamp: number | undefined): boolean {
    if (!this.#summarySeen) return true;
    return this.#summaryTimestamp !== undefined && timestamp !== undefined && timestamp > this.#summaryTimestamp;
  }
}
