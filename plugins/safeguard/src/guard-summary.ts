/** Runs the summary work under a time limit and the run's AbortSignal, turning every failure into a CompactionError. */
import { CompactionError, ErrorCodes, describeError } from "@compaction/core";

export interface SummaryGuardOptions {
  /** Name of the summarizer, for messages. */
  readonly summarizer: string;
  /** Plugin to name in errors. */
  readonly plugin: string;
  /** Milliseconds before giving up; 0 for no limit. */
  readonly timeoutMs: number;
  /** The run's signal: aborting it cancels the wait. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * Resolves to what `work` resolves to, or rejects with a CompactionError:
 * COMPACTION_SUMMARIZER_FAILED when `work` rejects (naming the summarizer, with the cause) or
 * does not settle within `timeoutMs`; COMPACTION_CANCELLED when `signal` aborts (or `work`
 * itself reports a cancellation).
 *
 * `work` gets a signal that aborts on timeout or cancellation, so a summarizer that honours it
 * (e.g. a model request) stops too instead of running on after the wait has ended.
 */
export async function guardSummary<R>(work: (signal: AbortSignal) => Promise<R>, options: SummaryGuardOptions): Promise<R> {
  const { summarizer, plugin, timeoutMs, signal } = options;
  if (signal?.aborted) throw cancelled(plugin, signal.reason);
  const stop = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_resolve, reject) => {
    if (timeoutMs > 0) {
      timer = setTimeout(() => {
        const error = new CompactionError(
          ErrorCodes.SUMMARIZER_FAILED,
          `Summarizer '${summarizer}' did not answer within ${timeoutMs} ms; the compaction was cancelled and the history left as it was.`,
          { plugin, hint: `Raise the ${plugin} option timeoutMs, or check that the summarizer (model, endpoint, network) responds.` },
        );
        stop.abort(error);
        reject(error);
      }, timeoutMs);
    }
    onAbort = () => {
      stop.abort(signal?.reason);
      reject(cancelled(plugin, signal?.reason));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([runWork(() => work(stop.signal)), stopped]);
  } catch (error) {
    throw asSummarizerError(error, summarizer, plugin);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    if (onAbort !== undefined) signal?.removeEventListener("abort", onAbort);
  }
}

/** Calls `work`, turning a synchronous throw into a rejection. */
async function runWork<R>(work: () => Promise<R>): Promise<R> {
  return work();
}

function cancelled(plugin: string, reason: unknown): CompactionError {
  return new CompactionError(ErrorCodes.CANCELLED, "Cancelled while summarising: the AbortSignal was aborted; the history is unchanged.", {
    plugin,
    ...(reason !== undefined ? { cause: reason } : {}),
  });
}

/** Our own timeout and cancellation errors pass through; anything else becomes SUMMARIZER_FAILED. */
function asSummarizerError(error: unknown, summarizer: string, plugin: string): CompactionError {
  if (error instanceof CompactionError && (error.code === ErrorCodes.CANCELLED || error.plugin === plugin)) return error;
  // A summarizer's own coded error already names it (model summarizers do): do not say it twice.
  const described = describeError(error).replace(/[.\s]+$/, "");
  const what = error instanceof CompactionError && error.code === ErrorCodes.SUMMARIZER_FAILED ? described : `Summarizer '${summarizer}' failed: ${described}`;
  return new CompactionError(ErrorCodes.SUMMARIZER_FAILED, `${what}. Nothing was compacted: the history is left as it was.`, {
    plugin,
    cause: error,
    hint: (error instanceof CompactionError ? error.hint : undefined) ?? "Check the summarizer's configuration and the cause; the next compaction will try again.",
  });
}
