/** Reading how long a server asks the client to wait before retrying. */

const SECONDS = /^\s*\d+(?:\.\d+)?\s*$/;

/**
 * The wait a response asks for, in milliseconds: `retry-after-ms` (OpenAI), else `Retry-After`
 * as seconds or as an HTTP date. `undefined` when neither header is there or readable.
 */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | undefined {
  const ms = headers.get("retry-after-ms");
  if (ms !== null && SECONDS.test(ms)) return Math.max(0, Number(ms));
  const value = headers.get("retry-after");
  if (value === null) return undefined;
  if (SECONDS.test(value)) return Math.max(0, Math.round(Number(value) * 1000));
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
