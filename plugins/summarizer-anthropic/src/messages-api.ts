/** The Anthropic Messages protocol: headers, the request body, and reading the answer and errors. */
import { ModelCallError, type SummaryPrompt } from "@compaction/model-summarizer";

/** The API version every request names. */
export const ANTHROPIC_VERSION = "2023-06-01";

export interface MessagesSettings {
  readonly model: string;
  readonly temperature: number;
  readonly maxTokens: number;
}

/** Error types worth retrying when a 200 answer carries an error (streaming proxies send those). */
const RETRYABLE_ERROR_TYPES: ReadonlySet<string> = new Set(["overloaded_error", "api_error", "rate_limit_error", "timeout_error"]);

/** The request headers; `x-api-key` only when there is a key. */
export function messagesHeaders(apiKey: string | undefined): Record<string, string> {
  return {
    "content-type": "application/json",
    accept: "application/json",
    "anthropic-version": ANTHROPIC_VERSION,
    ...(apiKey !== undefined ? { "x-api-key": apiKey } : {}),
  };
}

/** The body of `POST /v1/messages`: the system prompt, and the transcript as one user message. */
export function messagesBody(prompt: SummaryPrompt, settings: MessagesSettings) {
  return {
    model: settings.model,
    system: prompt.system,
    messages: [{ role: "user", content: prompt.user }],
    max_tokens: settings.maxTokens,
    temperature: settings.temperature,
  };
}

/** `<type>: <message>` of an error body `{ type: "error", error: { type, message } }`. */
export function messagesErrorMessage(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const error = (body as { error?: unknown }).error;
  if (typeof error !== "object" || error === null) return undefined;
  const { type, message } = error as { type?: unknown; message?: unknown };
  if (typeof message !== "string") return typeof type === "string" ? type : undefined;
  return typeof type === "string" ? `${type}: ${message}` : message;
}

/**
 * The text blocks of `content`, joined. Throws a ModelCallError for an error body (retryable
 * when overloaded, rate-limited or an API error) and for an answer without text.
 */
export function readMessage(body: unknown): string {
  const answer = (typeof body === "object" && body !== null ? body : {}) as { type?: unknown; content?: unknown; stop_reason?: unknown };
  if (answer.type === "error") {
    const type = (body as { error?: { type?: unknown } }).error?.type;
    throw new ModelCallError("the server answered with an error", {
      serverMessage: messagesErrorMessage(body) ?? "unknown error",
      retryable: typeof type === "string" && RETRYABLE_ERROR_TYPES.has(type),
    });
  }
  if (!Array.isArray(answer.content)) throw new ModelCallError("the answer has no content array (is baseUrl a Messages API?)");
  const text = answer.content
    .filter((block): block is { type: "text"; text: string } => block?.type === "text" && typeof block.text === "string")
    .map((block) => block.text)
    .join("");
  if (text.trim() === "") {
    const reason = typeof answer.stop_reason === "string" ? ` (stop_reason: ${answer.stop_reason})` : "";
    throw new ModelCallError(`the model answered with no text blocks in content${reason}`);
  }
  return text;
}
