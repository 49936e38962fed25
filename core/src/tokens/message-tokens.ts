/**
 * Token counts of whole messages, memoised per message object, and the context size as the
 * provider will see it: the provider's last usage figure plus counts of what came after it,
 * scaled by the provider-to-counter ratio the context's own usage figures give (calibration.ts).
 */
import type { FactsCache, MessageFacts } from "../messages/adapter.js";
import { type Calibration, calibrate, checkKnownRatio, providerMeasure } from "./calibration.js";
import { IMAGE_TOKENS, type TokenCounter } from "./token-counter.js";

/** The size of a context, split the way pi's `estimateContextTokens` splits it. */
export interface ContextTokens {
  /** `usageTokens` plus `trailingTokens` in the provider's measure (see `calibration`). */
  readonly tokens: number;
  /** The provider's figure from the newest message that has one; 0 when none has. */
  readonly usageTokens: number;
  /** Counted tokens of the messages after that message (of all messages when none has usage). */
  readonly trailingTokens: number;
  /** Index of the message whose usage was used, or `null` when no message has usage. */
  readonly lastUsageIndex: number | null;
  /** The provider-to-counter ratio (and per-message framing) applied to `trailingTokens`, and where it comes from. */
  readonly calibration: Calibration;
}

export interface MessageTokenCounterOptions {
  /**
   * Provider tokens per counted token, when the host knows it (e.g. 1.25 for Claude against
   * o200k). Without it the ratio is learned from the context's usage figures.
   */
  readonly tokenRatio?: number;
  /** @internal Characters of text whose counts are kept by text (default TEXT_COUNT_CACHE_CHARS). */
  readonly textCacheChars?: number;
}

/** The text a message sends to the model, as one string: text, thinking, then each tool call. */
export function messageTokenText(facts: MessageFacts): string {
  const pieces: string[] = [];
  if (facts.text !== "") pieces.push(facts.text);
  if (facts.thinking !== "") pieces.push(facts.thinking);
  for (const call of facts.toolCalls) {
    const args = typeof call.arguments === "string" ? call.arguments : (JSON.stringify(call.arguments) ?? "");
    pieces.push(call.name + args);
  }
  return pieces.join("\n");
}

/**
 * The provider's count of a context over ours, at least 1 (1 when we count nothing): the scale of
 * a compaction run's one measure (`CompactionRun.providerRatio`, `providerTokensAfter`).
 */
export function providerRatio(providerTokens: number, countedTokens: number): number {
  return countedTokens > 0 ? Math.max(1, providerTokens / countedTokens) : 1;
}

/** Characters of message text whose counts are kept by text (see MessageTokenCounter). */
export const TEXT_COUNT_CACHE_CHARS = 16 * 1024 * 1024;

/**
 * Counts tokens of messages through their cached facts. Each message object is counted once;
 * later calls return the stored figure without reading the message again. Counts are also kept
 * by text (the newest 16 Mi characters' worth), so the same messages as new objects (the next
 * request of an AI SDK or LangChain app, a host that rebuilds its messages each turn) are not
 * encoded again.
 */
export class MessageTokenCounter<T> {
  readonly facts: FactsCache<T>;
  readonly #counter: TokenCounter;
  readonly #textCounter: TokenCounter;
  readonly #counts = new WeakMap<object, number>();
  /** Count by message text, oldest first (a Map keeps insertion order), at most #byTextLimit characters of keys. */
  readonly #byText = new Map<string, number>();
  #byTextChars = 0;
  readonly #byTextLimit: number;
  readonly #knownRatio: number | undefined;

  constructor(facts: FactsCache<T>, counter: TokenCounter, options: MessageTokenCounterOptions = {}) {
    this.facts = facts;
    this.#counter = counter;
    this.#textCounter = { name: counter.name, count: (text) => this.#countText(text), dispose: () => counter.dispose() };
    this.#knownRatio = checkKnownRatio(options.tokenRatio);
    this.#byTextLimit = options.textCacheChars ?? TEXT_COUNT_CACHE_CHARS;
  }

  /** The ratio the host gave, if any. */
  get knownRatio(): number | undefined {
    return this.#knownRatio;
  }

  /**
   * The string counter this uses, keeping counts by text as messages' counts are kept (summary
   * lines fitted again on the next compaction are not encoded again). Its `name` is the
   * counter's; `dispose()` disposes the counter.
   */
  get counter(): TokenCounter {
    return this.#textCounter;
  }

  /** Tokens of one message: its text, thinking and tool calls, plus a fixed cost per image. */
  count(message: T): number {
    const key = typeof message === "object" && message !== null ? (message as object) : undefined;
    if (key !== undefined) {
      const known = this.#counts.get(key);
      if (known !== undefined) return known;
    }
    const facts = this.facts.of(message);
    const tokens = this.#countText(messageTokenText(facts)) + facts.imageCount * IMAGE_TOKENS;
    if (key !== undefined) this.#counts.set(key, tokens);
    return tokens;
  }

  #countText(text: string): number {
    if (text === "") return 0;
    const known = this.#byText.get(text);
    if (known !== undefined) return known;
    const tokens = this.#counter.count(text);
    if (text.length > this.#byTextLimit) return tokens;
    this.#byText.set(text, tokens);
    this.#byTextChars += text.length;
    for (const oldest of this.#byText.keys()) {
      if (this.#byTextChars <= this.#byTextLimit) break;
      this.#byText.delete(oldest);
      this.#byTextChars -= oldest.length;
    }
    return tokens;
  }

  /** Summed tokens of the messages. */
  total(messages: readonly T[]): number {
    let sum = 0;
    for (const message of messages) sum += this.count(message);
    return sum;
  }

  /**
   * The provider-to-counter ratio for these messages: the host's, else learned from the newest
   * pairs of usage figures (see calibration.ts), else 1.
   */
  calibration(messages: readonly T[]): Calibration {
    return calibrate(messages, (message) => this.facts.of(message), (message) => this.count(message), {
      ...(this.#knownRatio === undefined ? {} : { knownRatio: this.#knownRatio }),
    });
  }

  /**
   * The context size as the provider will count it: the newest trusted usage figure plus counts
   * of the messages after it, or of every message when none has trusted usage; the counts in the
   * provider's measure by `calibration(messages)`.
   */
  contextTokens(messages: readonly T[]): ContextTokens {
    const calibration = this.calibration(messages);
    const fresh = this.#freshUsageFrom(messages);
    for (let index = messages.length - 1; index >= fresh.from; index--) {
      const facts = this.facts.of(messages[index] as T);
      const usageTokens = facts.usageContextTokens;
      if (usageTokens === undefined || !fresh.isFresh(facts.timestamp)) continue;
      let trailingTokens = 0;
      for (let after = index + 1; after < messages.length; after++) trailingTokens += this.count(messages[after] as T);
      const tokens = usageTokens + providerMeasure(calibration, trailingTokens, messages.length - index - 1);
      return { tokens, usageTokens, trailingTokens, lastUsageIndex: index, calibration };
    }
    const trailingTokens = this.total(messages);
    return { tokens: providerMeasure(calibration, trailingTokens, messages.length), usageTokens: 0, trailingTokens, lastUsageIndex: null, calibration };
  }

  /**
   * `output` (the messages a compaction of `input` gave) in the measure of
   * `contextTokens(input).tokens`, the provider's, as a compaction's run measures what it keeps
   * (`CompactionRun.providerTokens`): our count of `output` at the ratio of that figure to our
   * count of `input` (at least 1), so the system prompt and tools the figure holds, and the
   * provider's tokenizer, scale with what is kept. Usage stored on kept messages describes the
   * old context, so it is not read.
   */
  providerTokensAfter(input: readonly T[], output: readonly T[]): number {
    return Math.round(this.total(output) * providerRatio(this.contextTokens(input).tokens, this.total(input)));
  }

  /**
   * Usage stored before a compaction describes the old, larger context. After the newest summary
   * message, only usage on messages newer than the summary (by timestamp) is trusted; when either
   * timestamp is unknown, none is.
   */
  #freshUsageFrom(messages: readonly T[]): { from: number; isFresh: (timestamp: number | undefined) => boolean } {
    for (let index = messages.length - 1; index >= 0; index--) {
      const facts = this.facts.of(messages[index] as T);
      if (facts.kind !== "summary") continue;
      const since = facts.timestamp;
      return { from: index + 1, isFresh: (t) => since !== undefined && t !== undefined && t > since };
    }
    return { from: 0, isFresh: () => true };
  }
}
