/**
 * A compaction never makes the context bigger. The rule, checked once the compacted context is
 * assembled and counted, before `afterCompact` (so nothing is persisted or indexed):
 * 1. After and Before are compared in the measure the run reports them in (the provider's: our
 *    count of the result at the run's ratio, `CompactionRun.providerTokens`, against
 *    `tokensBefore`), so the event a transcript records never shows a context that grew, and in
 *    our own count (the result against the input): a result is refused only when neither says it
 *    is smaller. (A provider figure below our count holds the run's ratio at 1, so After in that
 *    measure is our count while Before is the provider's lower figure: a host whose provider
 *    reports little, a fake model or a usage figure that covers part of the context, would
 *    otherwise never compact.)
 * 2. A result whose After is not smaller than its Before is refused: the run ends as a `noop`
 *    with the input untouched and a reason that gives the sizes (the summary or note against the
 *    messages it replaces), so no history is lost and a host near its window does not compact the
 *    same context again and again. This is what a manual compaction of a short context meets: the
 *    summary of a turn or two, with the last exchange quoted verbatim, is longer than that turn.
 * 3. A compaction the budget demands is never refused: when the working set was over the budget
 *    and the result is within it, the run compacted because it had to. (Only a provider figure
 *    below our own count, whose ratio is held at 1, can make such an After look larger.)
 */
import { formatCount } from "../format-count.js";
import type { CheckedCut } from "../cut/cut.js";
import type { SummaryDraft } from "./run.js";

/** What `growthRefusal` compares: the run's sizes, in its own measure where it says so. */
export interface GrowthCheck {
  /** The context before, in the provider's measure (`result.tokensBefore`). */
  readonly tokensBefore: number;
  /** The compacted context, in the same measure (`result.tokensAfter`). */
  readonly tokensAfter: number;
  /** Our count of the input, before `beforeCompact` (`result.countedTokensBefore`). */
  readonly countedBefore: number;
  /** Our count of the working set the run cut (after `beforeCompact`), the measure of the budget. */
  readonly countedWorking: number;
  /** Our count of the compacted context. */
  readonly countedAfter: number;
  /** The run's budget, in our count. */
  readonly budget: number;
  /** The applied cut, or null for a run that only changed messages in place. */
  readonly cut: CheckedCut | null;
  /** The summary draft written for the cut. */
  readonly draft: SummaryDraft;
  /** The summary or note message, in the provider's measure (0 when none was written). */
  readonly summaryTokens: number;
  /** The messages the cut replaces (`cut.compactedIndices`), in the provider's measure. */
  readonly compactedTokens: number;
  /** The plugin that chose the cut, or changed the messages in place (for the reason). */
  readonly by: string;
}

/**
 * The noop reason for a result that would not make the context smaller (rule 2), or null when
 * it does, or when the budget demanded it (rule 3).
 */
export function growthRefusal(check: GrowthCheck): string | null {
  if (check.tokensAfter < check.tokensBefore || check.countedAfter < check.countedBefore) return null;
  if (check.countedWorking > check.budget && check.countedAfter <= check.budget) return null;
  const sizes = `the context would be ${formatCount(check.tokensAfter)} tokens after, not fewer than the ${formatCount(check.tokensBefore)} before`;
  const { cut, draft } = check;
  if (cut === null) return `The messages '${check.by}' changed in place would not be smaller: ${sizes}.`;
  if (draft.kind === "none") return `The cut chosen by '${check.by}' would not make the context smaller: ${sizes}.`;
  const count = cut.compactedIndices.length;
  const what = draft.kind === "note" ? "eviction note" : "summary";
  return (
    `The ${what} (${formatCount(check.summaryTokens)} tokens) would not be smaller than the ` +
    `${formatCount(check.compactedTokens)} tokens of the ${count} message${count === 1 ? "" : "s"} it replaces: ${sizes}; ` +
    `too little history comes before the messages '${check.by}' keeps to be worth a ${what}.`
  );
}
