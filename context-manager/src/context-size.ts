/**
 * The context size kept up to date one message at a time: the same figure as
 * `MessageTokenCounter.contextTokens(messages, anchor).tokens` (the newest trusted provider usage
 * plus counts of what came after it, else the anchor, the last compaction's recorded After, plus
 * counts of what came after the messages it covers, else the count of every message, the counts
 * in the provider's measure by the calibration the usage figures give), at O(1) per appended
 * message instead of a scan per turn.
 */
import { type Calibration, CalibrationSampler, checkAnchor, type ContextAnchor, type MessageTokenCounter, providerMeasure, type RecordedCalibration, withRecorded } from "@compaction/core";

export class ContextSize<T> {
  readonly #tokens: MessageTokenCounter<T>;
  /** Count of every message, and how many. */
  #total = 0;
  #messages = 0;
  readonly #sampler: CalibrationSampler;
  /** Whether a summary message has been seen, and its timestamp (usage after it must be newer). */
  #summarySeen = false;
  #summaryTimestamp: number | undefined;
  /** The newest trusted usage figure, or undefined; and the counts of the messages after it. */
  #usage: number | undefined;
  #trailing = 0;
  #trailingMessages = 0;
  /** The calibration the anchor's compaction recorded (stands while the messages give none). */
  #recorded: RecordedCalibration | undefined;

  constructor(tokens: MessageTokenCounter<T>, messages: readonly T[] = [], anchor?: ContextAnchor) {
    this.#tokens = tokens;
    this.#sampler = new CalibrationSampler(tokens.calibrationOptions);
    this.reset(messages, anchor);
  }

  /** The context size of the messages pushed since the last reset, in the provider's measure. */
  get tokens(): number {
    const calibration = this.calibration;
    return this.#usage === undefined
      ? providerMeasure(calibration, this.#total, this.#messages)
      : this.#usage + providerMeasure(calibration, this.#trailing, this.#trailingMessages);
  }

  /** The provider-to-counter ratio in force (see `MessageTokenCounter.calibration`). */
  get calibration(): Calibration {
    return withRecorded(this.#sampler.calibration, this.#recorded);
  }

  /**
   * Starts again from `messages`; with `anchor`, the size of the messages it covers is its
   * figure (as `contextTokens(messages, anchor)`), until a newer usage figure or summary.
   */
  reset(messages: readonly T[], anchor?: ContextAnchor): void {
    checkAnchor(anchor, messages.length);
    this.#total = 0;
    this.#messages = 0;
    this.#summarySeen = false;
    this.#summaryTimestamp = undefined;
    this.#usage = undefined;
    this.#trailing = 0;
    this.#trailingMessages = 0;
    this.#sampler.reset();
    this.#recorded = anchor?.calibration;
    if (anchor?.lastIndex === -1) this.#anchorAt(anchor.tokens);
    messages.forEach((message, index) => {
      this.push(message);
      if (index === anchor?.lastIndex) this.#anchorAt(anchor.tokens);
    });
  }

  /** The messages pushed so far measure `tokens` (a compaction's recorded After): a usage figure of theirs. */
  #anchorAt(tokens: number): void {
    this.#usage = tokens;
    this.#trailing = 0;
    this.#trailingMessages = 0;
  }

  /** Adds one message at the end. */
  push(message: T): void {
    const count = this.#tokens.count(message);
    const facts = this.#tokens.facts.of(message);
    this.#total += count;
    this.#messages += 1;
    this.#sampler.push(facts, count);
    if (facts.kind === "summary") {
      // Usage stored before a summary describes the old, larger context.
      this.#summarySeen = true;
      this.#summaryTimestamp = facts.timestamp;
      this.#usage = undefined;
      this.#trailing = 0;
      this.#trailingMessages = 0;
      return;
    }
    const usage = facts.usageContextTokens;
    if (usage !== undefined && this.#trusts(facts.timestamp)) {
      this.#usage = usage;
      this.#trailing = 0;
      this.#trailingMessages = 0;
      return;
    }
    this.#trailing += count;
    this.#trailingMessages += 1;
  }

  #trusts(timestamp: number | undefined): boolean {
    if (!this.#summarySeen) return true;
    return this.#summaryTimestamp !== undefined && timestamp !== undefined && timestamp > this.#summaryTimestamp;
  }
}
