/** A time limit combined with the caller's AbortSignal, telling afterwards which one fired. */

export interface Deadline {
  /** Aborts when the time is up or the caller's signal aborts; undefined when there is neither. */
  readonly signal: AbortSignal | undefined;
  /** True once the time limit (not the caller) aborted `signal`. */
  timedOut(): boolean;
  /** True once the caller's signal aborted. */
  cancelled(): boolean;
}

/** A deadline `timeoutMs` from now (0: none), also aborting when `outer` does. */
export function createDeadline(timeoutMs: number, outer?: AbortSignal): Deadline {
  const timer = timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined;
  let signal: AbortSignal | undefined;
  if (timer && outer) signal = AbortSignal.any([timer, outer]);
  else signal = timer ?? outer;
  return {
    signal,
    timedOut: () => timer?.aborted === true && outer?.aborted !== true,
    cancelled: () => outer?.aborted === true,
  };
}
