/**
 * Token counts of whole messages, memoised per message object, and the context size as the
 * provider will see it: the provider's last usage figure plus counts of what came after it,
 * scaled by the provider-to-counter ratio the context's own usage figures give (calibration.ts).
 */
import type { FactsCache, MessageFacts } from "../messages/adapter.js";
import { type Calibration, calibrate, type CalibrationOptions, checkKnownRatio, providerMeasure, type RecordedCalibration, withRecorded } from "./calibration.js";
import { forEachLineSegment } from "./line-segments.js";
import { IMAGE_TOKENS, type TokenCounter } from "./token-counter.js";

/**
 * The size of a context's first messages in the provider's measure, known from elsewhere: the
 * host's record of its last compaction's After (the event's `tokensAfterCompaction`), which
 * stands for the context the compaction left as a usage figure would. Messages after the ones it
 * covers are counted and calibrated on top of it, until a usage figure newer than it exists (or a
 * newer summary: another compaction).
 */
export interface ContextAnchor {
  /** Provider tokens of `messages[0..lastIndex]`. */
  readonly tokens: number;
  /** Index of the last message the figure covers (-1: none, the figure is the context's fixed part). */
  readonly lastIndex: number;
  /**
   * The calibration the compaction measured with (`CompactionEvent.calibration`): it stands when
   * the messages give none to learn from (the compaction kept fewer than three usable pairs of
   * usage figures), so what is appended after it is still counted in the provider's measure.
   */
  readonly calibration?: RecordedCalibration;
}

/** Where a context size's base figure (`usageTokens`) comes from. */
export type ContextTokensBase =
  /** The newest trusted usage figure of a message. */
  | "usage"
  /** The anchor the host passed (a compaction's recorded After); no usage figure is newer. */
  | "anchor"
  /** No figure: every message counted. */
  | "count";

/** Where a context's size starts from (see `MessageTokenCounter.contextBase`), found without counting. */
export interface ContextBase {
  /** The base figure: the newest trusted usage figure, or the anchor's tokens; 0 when neither. */
  readonly usageTokens: number;
  /** Index of the last message the base figure covers, or `null` when there is none. */
  readonly lastUsageIndex: number | null;
  /** Where `usageTokens` comes from. */
  readonly base: ContextTokensBase;
}

/** The size of a context, split the way pi's `estimateContextTokens` splits it. */
export interface ContextTokens {
  /** `usageTokens` plus `trailingTokens` in the provider's measure (see `calibration`). */
  readonly tokens: number;
  /** The base figure (see `base`): the newest trusted usage figure, or the anchor's tokens; 0 when neither. */
  readonly usageTokens: number;
  /** Counted tokens of the messages after the base figure's (of all messages when there is none). */
  readonly trailingTokens: number;
  /** Index of the last message the base figure covers, or `null` when there is none. */
  readonly lastUsageIndex: number | null;
  /** Where `usageTokens` comes from. */
  readonly base: ContextTokensBase;
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
  if (facts.toolCalls.length === 0 && facts.thinking === "") return facts.text;
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

/**
 * Highest provider ratio a budget is scaled by: the config's `tokenizer.ratio` maximum (a learned
 * ratio stops at 3: beyond it a figure is broken, not a tokenizer).
 */
export const MAX_BUDGET_RATIO = 4;

/**
 * A budget in the provider's measure (the window less the reserve) as our count: what fits it at
 * `ratio` provider tokens per counted token (`MessageTokenCounter.budgetRatio`, 1 to 4), at
 * least 1. A context we count within it is within the window as the provider counts it.
 */
export function countedBudget(providerBudget: number, ratio: number): number {
  return Math.max(1, Math.floor(providerBudget / Math.min(MAX_BUDGET_RATIO, Math.max(1, ratio))));
}

/**
 * The ratio a calibration gives to size messages against the window with: its ratio, 1 to 4
 * (`MessageTokenCounter.budgetRatio` for the calibration of the messages it is given). Its
 * `perMessage` term is left out on purpose: it is fitted on the spans between usage figures (a
 * few messages each), and summed over a whole request it overshoots. On the real pi sessions the
 * ratio alone puts every message before the newest figure at 3.1% under and 2.6% over that figure
 * (which also holds the system prompt and tools), the ratio with 13.2 and 10.3 tokens a message at
 * 3.6% and 5.3% over it (test/provider-measure-budget.test.ts).
 */
export function budgetRatioOf(calibration: Calibration): number {
  return Math.min(MAX_BUDGET_RATIO, Math.max(1, calibration.ratio));
}

/**
 * Checks a host-given anchor against the context it is for: a finite number of tokens at least 0,
 * and an integer index from -1 to the last message's. Throws a RangeError naming the value.
 */
export function checkAnchor(anchor: ContextAnchor | undefined, messages: number): void {
  if (anchor === undefined) return;
  const { tokens, lastIndex } = anchor;
  if (typeof tokens !== "number" || !Number.isFinite(tokens) || tokens < 0) {
    throw new RangeError(`The context anchor's tokens must be a number at least 0; found ${String(tokens)}.`);
  }
  if (!Number.isInteger(lastIndex) || lastIndex < -1 || lastIndex >= messages) {
    throw new RangeError(`The context anchor's lastIndex must be an integer from -1 to ${messages - 1} (the context has ${messages} messages); found ${String(lastIndex)}.`);
  }
}

/** Characters of message text whose counts are kept by text (see MessageTokenCounter). */
export const TEXT_COUNT_CACHE_CHARS = 16 * 1024 * 1024;

/**
 * Counts tokens of messages through their cached facts. Each message object is counted once;
 * later calls return the stored figure without reading the message again. Counts are also kept
 * by text (the newest 16 Mi characters' worth), so the same messages as new objects (the next
 * request of an AI SDK or LangChain app, a host that rebuilds its messages each turn) are not
 * encoded again. With a counter whose counts add up at line starts (tiktoken's), the texts a
 * compaction writes are counted and kept line by line (`forEachLineSegment`): what `counter`
 * counts and summary messages. A summary that is fitted, completed, given the last exchange and
 * wrapped as a message then encodes each of its lines once. A conversation message is read
 * once, so it is counted whole: one encoder call instead of one a line.
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
  readonly #byLine: boolean;

  constructor(facts: FactsCache<T>, counter: TokenCounter, options: MessageTokenCounterOptions = {}) {
    this.facts = facts;
    this.#counter = counter;
    this.#byLine = counter.additiveAtLineStarts === true;
    this.#textCounter = {
      name: counter.name,
      ...(this.#byLine ? { additiveAtLineStarts: true } : {}),
      count: (text) => this.#countWritten(text),
      dispose: () => counter.dispose(),
    };
    this.#knownRatio = checkKnownRatio(options.tokenRatio);
    this.#byTextLimit = options.textCacheChars ?? TEXT_COUNT_CACHE_CHARS;
  }

  /** The ratio the host gave, if any. */
  get knownRatio(): number | undefined {
    return this.#knownRatio;
  }

  /**
   * The string counter this uses, keeping counts by text as messages' counts are kept, line by
   * line when the counter adds up at line starts (summary lines fitted again, in this compaction
   * or the next, are not encoded again). Its `name` is the counter's; `dispose()` disposes the
   * counter.
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
    const text = messageTokenText(facts);
    // A summary is text a compaction wrote and has counted line by line while writing it.
    const tokens = (facts.kind === "summary" ? this.#countWritten(text) : this.#countKept(text)) + facts.imageCount * IMAGE_TOKENS;
    if (key !== undefined) this.#counts.set(key, tokens);
    return tokens;
  }

  /** Tokens of text a compaction writes: line by line when the counter adds up at line starts, each line kept by text. */
  #countWritten(text: string): number {
    if (!this.#byLine) return this.#countKept(text);
    let tokens = 0;
    forEachLineSegment(text, (segment) => {
      tokens += this.#countKept(segment);
    });
    return tokens;
  }

  /** Tokens of `text`, kept by text. */
  #countKept(text: string): number {
    if (text === "") return 0;
    const known = this.#byText.get(text);
    if (known !== undefined) return known;
    const tokens = this.#counter.count(text);
    if (text.length > this.#byTextLimit) return tokens;
    this.#byText.set(text, tokens);
    this.#byTextChars += text.length;
    if (this.#byTextChars > this.#byTextLimit) this.#evictOldest();
    return tokens;
  }

  /** Forgets the oldest kept counts until the kept texts are within the limit. */
  #evictOldest(): void {
    for (const oldest of this.#byText.keys()) {
      if (this.#byTextChars <= this.#byTextLimit) break;
      this.#byText.delete(oldest);
      this.#byTextChars -= oldest.length;
    }
  }

  /** Summed tokens of the messages. */
  total(messages: readonly T[]): number {
    let sum = 0;
    for (const message of messages) sum += this.count(message);
    return sum;
  }

  /**
   * The provider-to-counter ratio for these messages: the host's, else learned from the newest
   * pairs of usage figures (see calibration.ts), else the one the context's newest compaction
   * `recorded` (`ContextAnchor.calibration`, `CompactionEvent.calibration`), else 1.
   */
  calibration(messages: readonly T[], recorded?: RecordedCalibration): Calibration {
    const learned = calibrate(messages, (message) => this.facts.of(message), (message) => this.count(message), this.calibrationOptions);
    return withRecorded(learned, recorded);
  }

  /** What `calibration` learns with: the host's ratio, if any, and this counter's name (for `exact`). */
  get calibrationOptions(): CalibrationOptions {
    return { ...(this.#knownRatio === undefined ? {} : { knownRatio: this.#knownRatio }), counter: this.#counter.name };
  }

  /**
   * The context size as the provider will count it: the newest trusted usage figure plus counts
   * of the messages after it; else the `anchor` (a compaction's recorded After) plus counts of
   * the messages after the ones it covers; else counts of every message. The counts are in the
   * provider's measure by `calibration(messages)`. A usage figure on a message the anchor covers
   * is older than the anchor, so it is not read; a summary message after the messages it covers
   * (a newer compaction) makes it stale, so it is not used.
   */
  contextTokens(messages: readonly T[], anchor?: ContextAnchor): ContextTokens {
    const { usageTokens, lastUsageIndex, base } = this.contextBase(messages, anchor);
    const calibration = this.calibration(messages, anchor?.calibration);
    const index = lastUsageIndex ?? -1;
    let trailingTokens = 0;
    for (let after = index + 1; after < messages.length; after++) trailingTokens += this.count(messages[after] as T);
    const tokens = usageTokens + providerMeasure(calibration, trailingTokens, messages.length - index - 1);
    return { tokens, usageTokens, trailingTokens, lastUsageIndex, base, calibration };
  }

  /**
   * What `contextTokens` starts from, found without counting anything (so without starting the
   * encoder): the newest trusted usage figure, else the anchor, else nothing (`count`). When it
   * covers the last message, it is the context's size in the provider's measure as it stands.
   */
  contextBase(messages: readonly T[], anchor?: ContextAnchor): ContextBase {
    checkAnchor(anchor, messages.length);
    const fresh = this.#freshUsageFrom(messages);
    // A summary after the anchor's messages is a newer compaction than the one it records.
    const anchored = anchor !== undefined && fresh.from - 1 <= anchor.lastIndex ? anchor : undefined;
    const from = Math.max(fresh.from, anchored === undefined ? 0 : anchored.lastIndex + 1);
    for (let index = messages.length - 1; index >= from; index--) {
      const facts = this.facts.of(messages[index] as T);
      const usageTokens = facts.usageContextTokens;
      if (usageTokens === undefined || !fresh.isFresh(facts.timestamp)) continue;
      return { usageTokens, lastUsageIndex: index, base: "usage" };
    }
    if (anchored !== undefined) return { usageTokens: anchored.tokens, lastUsageIndex: anchored.lastIndex < 0 ? null : anchored.lastIndex, base: "anchor" };
    return { usageTokens: 0, lastUsageIndex: null, base: "count" };
  }

  /**
   * Provider tokens per counted token to size `messages` against the window with
   * (`countedBudget`): the calibrated ratio (1 to 4), learned from the spans between usage
   * figures. Those spans hold only messages, so the fixed part of every request (system prompt,
   * tools) cancels out of it: hosts subtract that part themselves (`reserveTokens`, a system
   * prompt given to `shapeRequest`), and it is not counted twice. A request pruned or shrunk when
   * sent does not move it (a pi session file keeps the full outputs, and the newest figure
   * describes what was sent).
   */
  budgetRatio(messages: readonly T[], recorded?: RecordedCalibration): number {
    return budgetRatioOf(this.calibration(messages, recorded));
  }

  /**
   * `output` (the messages a compaction of `input` gave) in the measure of
   * `contextTokens(input, anchor).tokens`, the provider's, as a compaction's run measures what it
   * keeps (`CompactionRun.providerTokens`): our count of `output` at the ratio of that figure to
   * our count of `input` (at least 1), so the system prompt and tools the figure holds, and the
   * provider's tokenizer, scale with what is kept. Usage stored on kept messages describes the
   * old context, so it is not read.
   */
  providerTokensAfter(input: readonly T[], output: readonly T[], anchor?: ContextAnchor): number {
    return Math.round(this.total(output) * providerRatio(this.contextTokens(input, anchor).tokens, this.total(input)));
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
