/** The OpenAI chat completions protocol: the request body, and reading the answer and errors. */
import { ModelCallError, type SummaryPrompt, isRetryableStatus } from "@compaction/model-summarizer";

export interface ChatCompletionsSettings {
  readonly model: string;
  /** `null`: no temperature is sent. */
  readonly temperature: number | null;
  readonly maxTokens: number;
  /** The field maxTokens goes in. Default `max_tokens`. */
  readonly maxTokensParameter?: "max_tokens" | "max_completion_tokens";
}

/** The body of `POST /chat/completions`: the system prompt and the transcript as one user message. */
export function chatCompletionsBody(prompt: SummaryPrompt, settings: ChatCompletionsSettings): Record<string, unknown> {
  return {
    model: settings.model,
    messages: [
      { role: "system", content: prompt.system },
      { role: "user", content: prompt.user },
    ],
    ...(settings.temperature !== null ? { temperature: settings.temperature } : {}),
    [settings.maxTokensParameter ?? "max_tokens"]: settings.maxTokens,
  };
}

/** The message of an OpenAI-style error body `{ error: { message } }` (or `{ error: "..." }`, `{ message }`). */
export function chatCompletionsErrorMessage(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const { error, message } = body as { error?: unknown; message?: unknown };
  if (typeof error === "string") return error;
  if (typeof error === "object" && error !== null) {
    const inner = (error as { message?: unknown }).message;
    if (typeof inner === "string") return inner;
  }
  return typeof message === "string" ? message : undefined;
}

/**
 * The text of `choices[0].message.content` (a string, or text parts joined). Throws a
 * ModelCallError for an error object in a 200 answer (OpenRouter sends those; retryable when
 * its code is 429 or 5xx) and for an answer without content.
 */
export function readChatCompletion(body: unknown): string {
  const answer = (typeof body === "object" && body !== null ? body : {}) as {
    error?: unknown;
    choices?: Array<{ message?: { content?: unknown }; finish_reason?: unknown }>;
  };
  if (answer.error !== undefined && answer.error !== null) {
    const code = (answer.error as { code?: unknown }).code;
    const status = typeof code === "number" ? code : undefined;
    throw new ModelCallError("the server answered with an error", {
      ...(status !== undefined ? { status } : {}),
      serverMessage: chatCompletionsErrorMessage(answer) ?? JSON.stringify(answer.error),
      retryable: status !== undefined && isRetryableStatus(status),
    });
  }
  const choice = Array.isArray(answer.choices) ? answer.choices[0] : undefined;
  if (choice === undefined) throw new ModelCallError("the answer has no choices[0] (is baseUrl a chat completions API?)");
  const content = choice.message?.content;
  const text = typeof content === "string" ? content : Array.isArray(content) ? textParts(content) : undefined;
  if (text === undefined || text.trim() === "") {
    const reason = typeof choice.finish_reason === "string" ? ` (finish_reason: ${choice.finish_reason})` : "";
    throw new ModelCallError(`the model answered with no text in choices[0].message.content${reason}`);
  }
  return text;
}

function textParts(parts: unknown[]): string {
  return parts
    .map((part) => (typeof part === "object" && part !== null && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : ""))
    .join("");
}
