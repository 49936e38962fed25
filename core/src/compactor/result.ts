import type { CompactionError } from "../errors.js";
import type { CompactionEvent } from "../event.js";
import type { CheckedCut } from "../cut/cut.js";
import type { ShrunkMessage } from "../shrink/shrink-to-budget.js";

/**
 * `compacted`: the messages changed. `noop`: nothing to do (no plugin chose a cut, or the cut
 * compacts nothing). `cancelled`: a plugin or the AbortSignal stopped the run. `failed`: a
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
   * The context size before: the provider's newest usage figure plus counts of the messages
   * after it, calibrated to the provider's measure (see `MessageTokenCounter.contextTokens`), else
   * the input's `anchor` (the last compaction's recorded After) plus the calibrated count of the
   * messages after it, else the (calibrated) count of every message.
   */
  readonly tokensBefore: number;
  /**
   * The context size after: our count of the new messages (usage stored on kept messages
   * describes the old context). Unlike a usage-based `tokensBefore` it leaves out what no message
   * shows (system prompt, tool definitions) and any gap between our tokenizer and the
   * provider's; compare `tokensAfter` with a count of the input for a like-for-like saving, or
   * convert it with `MessageTokenCounter.providerTokensAfter` to set it beside `tokensBefore`.
   */
  readonly tokensAfter: number;
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
