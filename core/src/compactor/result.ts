import type { CompactionError } from "../errors.js";
import type { CompactionEvent } from "../event.js";
import type { CheckedCut } from "../cut/cut.js";
import type { ShrunkMessage } from "../shrink/shrink-to-budget.js";

/**
 * `compacted`: the messages changed, to a context smaller than before (`tokensAfter <
 * tokensBefore`). `noop`: nothing to do (no plugin chose a cut, the cut compacts nothing, or the
 * result would not be smaller: the reason gives the sizes). `cancelled`: a plugin or the AbortSignal stopped the run. `failed`: a
 * plugin, the summarizer or a cut check failed. In every status but `compacted`, `messages`
 * is the input, untouched, and `reason` says why.
 */
export type CompactionStatus = "compacted" | "noop" | "cancelled" | "failed";

export interface CompactionResult<T> {
  readonly status: CompactionStatus;
  readonly messages: readonly T[];
  readonly summary: string | null;
  readonly cut: CheckedCut | null;
  readonly event: CompactionEvent | null;
  /**
   * The context size before, in the provider's measure: the provider's newest usage figure plus
   * counts of the messages after it, calibrated to the provider's measure (see
   * `MessageTokenCounter.contextTokens`), else the input's `anchor` (the last compaction's
   * recorded After) plus the calibrated count of the messages after it, else the (calibrated)
   * count of every message. The event's `tokensBeforeCompaction`.
   */
  readonly tokensBefore: number;
  /**
   * The context size after, in the same measure as `tokensBefore` (our count of the new messages
   * at the run's ratio of the provider's figure to our count: `MessageTokenCounter.providerTokensAfter`),
   * so `tokensBefore - tokensAfter` is what the compaction saved. The event's
   * `tokensAfterCompaction`, which transcripts record and `context history` shows. Equal to
   * `tokensBefore` when nothing was compacted.
   */
  readonly tokensAfter: number;
  /**
   * Our count (the compactor's counter) of the messages before: the measure of the budget and of
   * `cut.keptTokens`. Absent in results built by hosts.
   */
  readonly countedTokensBefore?: number;
  /** Our count of `messages` after, beside `countedTokensBefore`. Absent in results built by hosts. */
  readonly countedTokensAfter?: number;
  readonly warnings: readonly string[];
  /**
   * Messages the core shrank to head and tail because cutting alone could not bring the context
   * under the budget (`index` into the run's working set; empty when none). Without
   * `suffixOnly`, `messages` holds the shrunk copies; with it, `messages` holds the originals and
   * the host shrinks at send time (`shrinkToBudget`). Absent in results built by hosts.
   */
  readonly shrunk?: readonly ShrunkMessage[];
  /** Why the run did not compact, or null. */
  readonly reason: string | null;
  /** The error behind a `failed` or `cancelled` run, with a stable code. */
  readonly error: CompactionError | null;
}

/** A result built by a host for a run that changed nothing (it threw, or was never started): `messages` as they are, and why. */
export function untouchedResult<T>(
  messages: readonly T[],
  tokens: number,
  status: "noop" | "failed" | "cancelled",
  reason: string,
  error: CompactionError | null = null,
  warnings: readonly string[] = [],
): CompactionResult<T> {
  return { status, messages, summary: null, cut: null, event: null, tokensBefore: tokens, tokensAfter: tokens, warnings, reason, error };
}
