/**
 * How a provider's `complete` function reports a failed call to a model server, so the shared
 * machinery can decide whether to retry and can say what the server answered.
 */

export interface ModelCallErrorDetails {
  /** The HTTP status, when the server answered. */
  readonly status?: number;
  /** The HTTP status text (`Too Many Requests`), when known. */
  readonly statusText?: string;
  /** The server's own error message, from its error body. */
  readonly serverMessage?: string;
  /** Whether trying again may succeed (429, 5xx, 529, network errors). Default: false. */
  readonly retryable?: boolean;
  /** How long the server asked the client to wait before retrying (Retry-After), in ms. */
  readonly retryAfterMs?: number;
  readonly cause?: unknown;
}

/**
 * One failed call to a model server. Never carries the API key: messages are built from the
 * status and the server's answer only (and the answer is redacted by the caller).
 */
export class ModelCallError extends Error {
  readonly status: number | undefined;
  readonly statusText: string | undefined;
  readonly serverMessage: string | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, details: ModelCallErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "ModelCallError";
    this.status = details.status;
    this.statusText = details.statusText;
    this.serverMessage = details.serverMessage;
    this.retryable = details.retryable ?? false;
    this.retryAfterMs = details.retryAfterMs;
  }
}

/**
 * HTTP statuses worth retrying: 408 (request timeout), 409 (conflict), 425 (too early),
 * 429 (rate limited) and every 5xx, including Anthropic's 529 (overloaded).
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 425 || status === 429 || status >= 500;
}
