/**
 * Which measure the token figures in a run's warnings are in. The core and the strategies size
 * against the budget in our count (the counter's), while the figures a host shows beside them
 * (Before, After, the context's size) are the provider's: hosts that show both say so once.
 */

/** A counter's name as a user reads it: `tiktoken:o200k_base` is `o200k`. */
export function counterLabel(counter: string): string {
  return counter.replace(/^tiktoken:/, "").replace(/_base$/, "");
}

/**
 * True for a warning that gives a number of tokens (or a budget) in our count: one that says its
 * figures are "as the provider counts them" is in the provider's measure already.
 */
export function mentionsCountedTokens(warning: string): boolean {
  return /\d/.test(warning) && /\btokens?\b|\bbudget\b/.test(warning) && !warning.includes("as the provider counts");
}

/**
 * One sentence saying the token figures in `warnings` are our `counter`'s count, and how the
 * provider's count of this context compares (`providerRatio`, the run's). Null when no warning
 * gives such a figure, or both counts are one (a ratio that prints as 1.00).
 */
export function warningsMeasureNote(warnings: readonly string[], counter: string, providerRatio: number): string | null {
  const counting = warnings.filter(mentionsCountedTokens);
  if (counting.length === 0 || providerRatio.toFixed(2) === "1.00") return null;
  const which = counting.length === 1 ? "this warning are" : "these warnings are";
  return `the token figures in ${which} our ${counterLabel(counter)} count; the provider counts ${providerRatio.toFixed(2)}x that on this session.`;
}
