/**
 * One JSON POST to a model server with the global `fetch`, turning every failure (refused
 * connection, error status, malformed body) into a ModelCallError that says whether to retry.
 */
import { ModelCallError, isRetryableStatus } from "./model-call-error.js";
import { retryAfterMs } from "./retry-after.js";

export interface PostJsonOptions {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Sent as JSON. */
  readonly body: unknown;
  readonly signal?: AbortSignal;
  /** Reads the server's error message from a parsed error body (each provider words it its own way). */
  readonly errorMessage?: (body: unknown) => string | undefined;
}

/** Longest part of a non-JSON error body quoted in an error. */
const MAX_QUOTED_CHARS = 500;

/**
 * POSTs `body` as JSON and resolves to the parsed JSON answer of a 2xx response. Rejects with a
 * ModelCallError for network errors (retryable), non-2xx statuses (retryable for 408, 409, 425,
 * 429 and 5xx, unless the server sends `x-should-retry: false`) and bodies that are not JSON.
 * When `signal` aborts, rejects with the signal's reason.
 */
export async function postJson(options: PostJsonOptions): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(options.url, {
      method: "POST",
      headers: options.headers,
      body: JSON.stringify(options.body),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    });
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    throw new ModelCallError(`could not reach the server (${networkReason(error)})`, { retryable: true, cause: error });
  }

  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    throw new ModelCallError(`the connection broke while reading the answer (${networkReason(error)})`, {
      status: response.status,
      retryable: true,
      cause: error,
    });
  }

  if (!response.ok) {
    const parsed = parseJson(text);
    const serverMessage =
      (parsed.ok ? options.errorMessage?.(parsed.value) : undefined) ?? quote(text.trim()) ?? undefined;
    const retryable = shouldRetry(response);
    const wait = retryAfterMs(response.headers);
    throw new ModelCallError(`HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`, {
      status: response.status,
      statusText: response.statusText,
      retryable,
      ...(serverMessage !== undefined ? { serverMessage } : {}),
      ...(wait !== undefined ? { retryAfterMs: wait } : {}),
    });
  }

  const parsed = parseJson(text);
  if (!parsed.ok) {
    throw new ModelCallError(`the server answered HTTP ${response.status} with a body that is not JSON: ${quote(text.trim()) ?? "(empty)"}`, {
      status: response.status,
      cause: parsed.error,
    });
  }
  return parsed.value;
}

function shouldRetry(response: Response): boolean {
  const hint = response.headers.get("x-should-retry");
  if (hint === "true") return true;
  if (hint === "false") return false;
  return isRetryableStatus(response.status);
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error };
  }
}

function quote(text: string): string | undefined {
  if (text === "") return undefined;
  return text.length <= MAX_QUOTED_CHARS ? text : `${text.slice(0, MAX_QUOTED_CHARS)}…`;
}

/** `ECONNREFUSED`, `fetch failed: other side closed`, ... from undici's nested errors. */
function networkReason(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code;
    parts.push(typeof code === "string" && !current.message.includes(code) ? `${current.message} (${code})` : current.message);
    current = current.cause;
  }
  return parts.length > 0 ? parts.join(": ") : String(error);
}
