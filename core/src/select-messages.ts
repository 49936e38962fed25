/**
 * Context window selection: the newest contiguous block of messages that fits a token budget.
 */
import { CompactionError, ErrorCodes } from "./errors.js";

/** What `selectMessages` left out: the older messages before the selected block. */
export interface SelectionOverflow {
  readonly droppedCount: number;
  /** Summed estimates of the dropped messages. */
  readonly droppedTokens: number;
}

export interface MessageSelection<T> {
  /** The newest messages whose summed estimate fits the budget, oldest first. May be empty. */
  readonly selected: T[];
  /** The dropped older messages, or `null` when every message fit. */
  readonly overflow: SelectionOverflow | null;
}

function checkBudget(budget: number): void {
  if (typeof budget === "number" && budget >= 0) return; // NaN fails `>= 0`; Infinity takes all.
  throw new CompactionError(
    ErrorCodes.INPUT_INVALID,
    `selectMessages: expected a token budget that is a number >= 0, found ${String(budget)}.`,
    { path: "/budget", hint: "Pass the tokens left for messages, e.g. contextWindow - reserveTokens, clamped at 0." },
  );
}

function checkEstimate(tokens: number, index: number): void {
  if (typeof tokens === "number" && tokens >= 0 && Number.isFinite(tokens)) return;
  throw new CompactionError(
    ErrorCodes.INPUT_INVALID,
    `selectMessages: expected the estimate of message ${index} to be a finite number >= 0, found ${String(tokens)}.`,
    { path: `/messages/${index}`, hint: "Fix the estimate function so it returns a token count for every message." },
  );
}

/**
 * Takes messages from the end while their summed estimate stays within `budget`. It stops at
 * the first message that does not fit and never skips it to take an older, smaller one, so the
 * selection is always a contiguous suffix. An empty selection is valid.
 */
export function selectMessages<T>(
  messages: readonly T[],
  budget: number,
  estimate: (message: T) => number,
): MessageSelection<T> {
  checkBudget(budget);
  let used = 0;
  let start = messages.length;
  let firstDroppedTokens = 0;
  while (start > 0) {
    const tokens = estimate(messages[start - 1] as T);
    checkEstimate(tokens, start - 1);
    if (used + tokens > budget) {
      firstDroppedTokens = tokens;
      break;
    }
    used += tokens;
    start -= 1;
  }
  if (start === 0) return { selected: [...messages], overflow: null };

  let droppedTokens = firstDroppedTokens;
  for (let index = 0; index < start - 1; index++) {
    const tokens = estimate(messages[index] as T);
    checkEstimate(tokens, index);
    droppedTokens += tokens;
  }
  return { selected: messages.slice(start), overflow: { droppedCount: start, droppedTokens } };
}
