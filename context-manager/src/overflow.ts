/**
 * Recognising a provider's "the request is too long for the context window" error, whatever SDK
 * threw it. The patterns are the error texts providers send (as collected by pi-ai's
 * `isContextOverflow`), plus generic ones; rate-limit texts are excluded even when they mention
 * tokens ("Too many tokens, please wait").
 */

/** Error texts that mean the prompt did not fit the model's context window. */
export const CONTEXT_OVERFLOW_PATTERNS: readonly RegExp[] = Object.freeze([
  /prompt is too long/i, // Anthropic
  /request_too_large/i, // Anthropic, HTTP 413
  /input is too long for requested model/i, // Amazon Bedrock
  /exceeds the context window/i, // OpenAI
  /input token count.*exceeds the maximum/i, // Google Gemini
  /maximum prompt length is \d+/i, // xAI
  /reduce the length of the messages/i, // Groq
  /maximum context length/i, // OpenAI-compatible servers, OpenRouter
  /exceeds the limit of \d+/i, // GitHub Copilot
  /exceeds the available context size/i, // llama.cpp
  /greater than the context length/i, // LM Studio
  /context window exceeds limit/i, // MiniMax
  /exceeded model token limit/i, // Kimi
  /too large for model with \d+ maximum context length/i, // Mistral
  /model_context_window_exceeded/i, // z.ai
  /prompt too long; exceeded (?:max )?context length/i, // Ollama
  /context[_ ]length[_ ]exceeded/i,
  /context length/i,
  /maximum context/i,
  /too many tokens/i,
  /token limit exceeded/i,
  /^4(?:00|13)\s*(?:status code)?\s*\(no body\)/i, // Cerebras
]);

/** Error texts that are never an overflow, even when they match a pattern above. */
export const NOT_OVERFLOW_PATTERNS: readonly RegExp[] = Object.freeze([
  /^(Throttling error|Service unavailable):/i,
  /throttl/i,
  /rate limit/i,
  /too many requests/i,
]);

/**
 * True when `error` says the request was too long for the context window: an HTTP 413, or an
 * error whose text (its message, a nested `error.message` as the OpenAI and Anthropic SDKs
 * keep it, pi's `errorMessage`, or its `cause`) matches a known overflow text. HTTP 429 and
 * rate-limit texts are never an overflow.
 */
export function isContextOverflowError(error: unknown): boolean {
  const status = statusOf(error);
  if (status === 429) return false;
  const texts = errorTexts(error);
  if (texts.some((text) => NOT_OVERFLOW_PATTERNS.some((pattern) => pattern.test(text)))) return false;
  if (status === 413) return true;
  return texts.some((text) => CONTEXT_OVERFLOW_PATTERNS.some((pattern) => pattern.test(text)));
}

function statusOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const fields = error as Record<string, unknown>;
  for (const value of [fields["status"], fields["statusCode"], (fields["response"] as Record<string, unknown> | undefined)?.["status"]]) {
    if (typeof value === "number") return value;
  }
  return undefined;
}

/** The texts an error carries, its own and its cause's (one level). */
function errorTexts(error: unknown, depth = 0): string[] {
  if (typeof error === "string") return [error];
  if (typeof error !== "object" || error === null) return [];
  const fields = error as Record<string, unknown>;
  const texts: string[] = [];
  const add = (value: unknown): void => {
    if (typeof value === "string" && value !== "") texts.push(value);
  };
  add(fields["message"]);
  add(fields["errorMessage"]);
  add(fields["body"]);
  const nested = fields["error"];
  if (typeof nested === "string") add(nested);
  else if (typeof nested === "object" && nested !== null) {
    add((nested as Record<string, unknown>)["message"]);
    add((nested as Record<string, unknown>)["type"]);
    add((nested as Record<string, unknown>)["code"]);
  }
  add(fields["code"]);
  if (depth === 0 && fields["cause"] !== undefined) texts.push(...errorTexts(fields["cause"], 1));
  return texts;
}
