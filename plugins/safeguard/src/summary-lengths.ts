/** How long each part of the summary may be, within what the budget leaves after the kept messages. */

export interface SummaryLengthsInput {
  /** The configured length of the history summary. */
  readonly maxTokens: number;
  /** The configured length of a split turn's summary. */
  readonly turnPrefixMaxTokens: number;
  readonly isSplitTurn: boolean;
  /** Tokens of the separator between the two parts (counted once). */
  readonly separatorTokens: number;
  /** Tokens the budget leaves for the summary message. */
  readonly available: number;
}

export interface SummaryLengths {
  readonly history: number;
  readonly turnPrefix: number;
  /** The most the whole summary may take: both parts and the separator of a split turn. */
  readonly total: number;
  /** True when the configured lengths were cut to fit `available`. */
  readonly shortened: boolean;
}

/**
 * The configured lengths when they fit `available`; else both parts shortened in proportion;
 * `undefined` when not even one token per part fits.
 */
export function summaryLengths(input: SummaryLengthsInput): SummaryLengths | undefined {
  const { maxTokens, turnPrefixMaxTokens, isSplitTurn, separatorTokens, available } = input;
  const wanted = maxTokens + (isSplitTurn ? turnPrefixMaxTokens + separatorTokens : 0);
  if (wanted <= available) return { history: maxTokens, turnPrefix: turnPrefixMaxTokens, total: wanted, shortened: false };
  if (!isSplitTurn) {
    return available >= 1 ? { history: available, turnPrefix: turnPrefixMaxTokens, total: available, shortened: true } : undefined;
  }
  const room = available - separatorTokens;
  if (room < 2) return undefined;
  const turnPrefix = Math.max(1, Math.floor((turnPrefixMaxTokens * room) / (maxTokens + turnPrefixMaxTokens)));
  const history = room - turnPrefix;
  return { history, turnPrefix, total: available, shortened: true };
}
