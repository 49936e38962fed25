/** Retrying a model call with exponential backoff and jitter, honouring Retry-After and an AbortSignal. */
import { ModelCallError } from "./model-call-error.js";

export interface RetryOptions {
  /** Retries after the first attempt. */
  readonly maxRetries: number;
  /** Base of the backoff: the n-th retry waits about `baseDelayMs * 2^n` (half of it fixed, half random). */
  readonly baseDelayMs: number;
  /** Longest wait between attempts, also for a server's Retry-After. */
  readonly maxDelayMs: number;
  /** Stops waiting and retrying when aborted (the wait rejects with the signal's reason). */
  readonly signal?: AbortSignal;
  /** Random numbers in [0, 1) for the jitter. Default `Math.random`. */
  readonly random?: () => number;
  /** Told before each wait. */
  readonly onRetry?: (retry: { readonly attempt: number; readonly delayMs: number; readonly error: ModelCallError }) => void;
}

/**
 * Calls `call(attempt)` (attempt 0, 1, ...) until it resolves, retrying a ModelCallError marked
 * `retryable` up to `maxRetries` times. Any other error, or the last one, is thrown as it is.
 */
export async function retryModelCall<R>(call: (attempt: number) => Promise<R>, options: RetryOptions): Promise<R> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call(attempt);
    } catch (error) {
      if (!(error instanceof ModelCallError) || !error.retryable || attempt >= options.maxRetries) throw error;
      if (options.signal?.aborted) throw options.signal.reason;
      const delayMs = retryDelay(attempt, error, options);
      options.onRetry?.({ attempt, delayMs, error });
      await sleep(delayMs, options.signal);
    }
  }
}

/**
 * The wait before retry `attempt` (0 for the first retry): the server's Retry-After when it sent
 * one, else `baseDelayMs * 2^attempt` with equal jitter; never more than `maxDelayMs`.
 */
export function retryDelay(
  attempt: number,
  error: { readonly retryAfterMs?: number | undefined },
  options: Pick<RetryOptions, "baseDelayMs" | "maxDelayMs" | "random">,
): number {
  if (error.retryAfterMs !== undefined) return Math.min(error.retryAfterMs, options.maxDelayMs);
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** attempt);
  const random = options.random ?? Math.random;
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
