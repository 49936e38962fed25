/**
 * A Summarizer backed by a model: serialises the messages as a transcript, sends them in chunks
 * that fit the model's input (each chunk updating the summary so far), retries failed calls
 * with backoff, enforces a time limit, and rejects with a CompactionError that names the
 * provider, model, URL, status and the server's message, never the key. A provider plugin only
 * supplies `complete`: one prompt in, the model's text out.
 */
import { CompactionError, describeError, ErrorCodes, type Summarizer, type SummarizeRequest } from "@compaction/core";
import { displayUrl, readApiKey, redactSecrets } from "./api-key.js";
import { chunkConversation } from "./chunk-conversation.js";
import { createDeadline } from "./deadline.js";
import { ModelCallError } from "./model-call-error.js";
import { cleanModelOutput, fitModelSummary } from "./model-output.js";
import { retryModelCall } from "./retry.js";
import { type SerializeOptions, serializeMessage } from "./serialize-conversation.js";
import { type SummaryPrompt, buildSummaryPrompt } from "./summary-prompt.js";
import type { SummarizerWarn } from "./warnings.js";

/** One request to the model, as `complete` receives it. */
export interface ModelCompletionRequest extends SummaryPrompt {
  /** Aborts when the time limit runs out or the caller cancels: pass it to `fetch`. */
  readonly signal: AbortSignal | undefined;
  /** The key read from the environment for this summary, when `apiKeyEnv` names a variable. */
  readonly apiKey: string | undefined;
}

export interface ModelSummarizerOptions {
  /** Who serves the model, for errors and the default name (`openai`, `openrouter`, `ollama`). */
  readonly provider: string;
  readonly model: string;
  /** The endpoint `complete` calls, for errors (user, password and query are never shown). */
  readonly url: string;
  /**
   * Sends one prompt and resolves to the model's text. Throws a ModelCallError for a failed call
   * (marked `retryable` for 429, 5xx and network errors); when the signal aborts, rejects with
   * its reason.
   */
  readonly complete: (request: ModelCompletionRequest) => Promise<string>;
  /** The summarizer's name in errors and warnings. Default `<provider>:<model>`. */
  readonly name?: string;
  /** The plugin that configured this summarizer, named in errors. */
  readonly plugin?: string;
  /** Environment variable holding the API key, read at each summary. `null`/absent: no key. */
  readonly apiKeyEnv?: string | null;
  /** Most tokens of one request's prompt (counted with the request's counter). Default 100,000. */
  readonly maxInputTokens?: number;
  /** Retries of a call that failed with 429, 5xx or a network error. Default 3. */
  readonly maxRetries?: number;
  /** Base of the exponential backoff, in ms. Default 1,000. */
  readonly retryDelayMs?: number;
  /** Longest wait between attempts (also caps Retry-After), in ms. Default 60,000. */
  readonly maxRetryDelayMs?: number;
  /** Time limit of one model request with its retries, in ms; 0 for none. Default 120,000. */
  readonly timeoutMs?: number;
  readonly serialize?: SerializeOptions;
  /** Told when the summary had to be trimmed to `maxTokens`. */
  readonly onWarning?: SummarizerWarn;
  /** Random numbers in [0, 1) for the backoff's jitter. Default `Math.random`. */
  readonly random?: () => number;
}

/** Fewest tokens a chunk of conversation may have once the prompt's other parts are counted. */
export const MIN_CONVERSATION_TOKENS = 256;

const DEFAULTS = {
  maxInputTokens: 100_000,
  maxRetries: 3,
  retryDelayMs: 1000,
  maxRetryDelayMs: 60_000,
  timeoutMs: 120_000,
};

interface Settings {
  readonly name: string;
  readonly provider: string;
  readonly model: string;
  readonly url: string;
  readonly plugin: string | undefined;
  readonly apiKeyEnv: string | null;
  readonly maxInputTokens: number;
  readonly maxRetries: number;
  readonly retryDelayMs: number;
  readonly maxRetryDelayMs: number;
  readonly timeoutMs: number;
}

/** A Summarizer that asks a model through `options.complete`. */
export function createModelSummarizer(options: ModelSummarizerOptions): Summarizer {
  const settings = normalise(options);
  const { name } = settings;
  return {
    name,
    async summarize(request: SummarizeRequest): Promise<string> {
      if (request.signal?.aborted) throw cancelled(settings, request.signal.reason);
      validateRequest(settings, request);
      const entries: string[] = [];
      for (const message of request.messages) {
        const entry = serializeMessage(message, options.serialize);
        if (entry !== undefined) entries.push(entry);
      }
      // Nothing new: the summary so far stands (or an empty answer, so callers notice).
      if (entries.length === 0) return request.previousSummary ?? "";
      const apiKey = settings.apiKeyEnv === null ? undefined : readApiKey(settings.apiKeyEnv, name);

      const chunks = chunkConversation(entries, conversationRoom(settings, request), request.counter);
      let summary = request.previousSummary;
      for (const conversation of chunks) {
        const prompt = buildSummaryPrompt({
          conversation,
          kind: request.kind,
          maxTokens: request.maxTokens,
          ...(summary !== undefined ? { previousSummary: summary } : {}),
          ...(request.focus !== undefined ? { focus: request.focus } : {}),
        });
        const answer = cleanModelOutput(await call(settings, options, prompt, request.signal, apiKey));
        if (answer === "") throw emptyAnswer(settings);
        summary = fitModelSummary(answer, request.maxTokens, request.counter);
        if (summary !== answer) {
          options.onWarning?.(
            `Summarizer '${name}' wrote ${request.counter.count(answer)} tokens, more than the ${request.maxTokens} asked for; its last lines were dropped to fit.`,
            request,
          );
        }
      }
      return summary ?? "";
    },
  };
}

/** One model request with retries and the time limit; every failure becomes a CompactionError. */
async function call(
  settings: Settings,
  options: ModelSummarizerOptions,
  prompt: SummaryPrompt,
  outer: AbortSignal | undefined,
  apiKey: string | undefined,
): Promise<string> {
  const deadline = createDeadline(settings.timeoutMs, outer);
  let attempts = 0;
  try {
    return await retryModelCall(
      async () => {
        attempts++;
        const text = await options.complete({ ...prompt, signal: deadline.signal, apiKey });
        if (typeof text !== "string") throw new ModelCallError(`the provider returned ${typeof text} instead of the model's text`);
        return text;
      },
      {
        maxRetries: settings.maxRetries,
        baseDelayMs: settings.retryDelayMs,
        maxDelayMs: settings.maxRetryDelayMs,
        ...(deadline.signal !== undefined ? { signal: deadline.signal } : {}),
        ...(options.random !== undefined ? { random: options.random } : {}),
      },
    );
  } catch (error) {
    if (deadline.cancelled()) throw cancelled(settings, error);
    if (deadline.timedOut()) throw timedOut(settings, attempts, error, apiKey);
    if (error instanceof CompactionError) throw error;
    throw failed(settings, error, attempts, apiKey);
  }
}

/**
 * Tokens left for the conversation in one request: `maxInputTokens` less the system prompt, the
 * instructions, and the summary so far (at least `maxTokens`, the size of a chunk's summary).
 */
function conversationRoom(settings: Settings, request: SummarizeRequest): number {
  const counter = request.counter;
  const previous = request.previousSummary?.trim() ? request.previousSummary : "(previous summary)";
  const bare = buildSummaryPrompt({
    conversation: "",
    kind: request.kind,
    maxTokens: request.maxTokens,
    previousSummary: previous,
    ...(request.focus !== undefined ? { focus: request.focus } : {}),
  });
  const previousTokens = counter.count(previous);
  const overhead = counter.count(bare.system) + counter.count(bare.user) + Math.max(0, request.maxTokens - previousTokens);
  const room = settings.maxInputTokens - overhead;
  if (room < MIN_CONVERSATION_TOKENS) {
    throw new CompactionError(
      ErrorCodes.SUMMARIZER_FAILED,
      `Summarizer '${settings.name}' has no room for the conversation: maxInputTokens is ${settings.maxInputTokens}, and the instructions and the summary so far take ${overhead} tokens, leaving ${room} (at least ${MIN_CONVERSATION_TOKENS} needed).`,
      {
        path: "/maxInputTokens",
        ...plugin(settings),
        hint: `Raise maxInputTokens to the model's input size (at least ${overhead + MIN_CONVERSATION_TOKENS}), or ask for a shorter summary.`,
      },
    );
  }
  return room;
}

function where(settings: Settings): string {
  return `provider '${settings.provider}', model '${settings.model}', POST ${displayUrl(settings.url)}`;
}

function attemptsText(attempts: number): string {
  return attempts === 1 ? "after 1 attempt" : `after ${attempts} attempts`;
}

function failed(settings: Settings, error: unknown, attempts: number, apiKey: string | undefined): CompactionError {
  const secrets = [apiKey];
  let what: string;
  let hint: string;
  if (error instanceof ModelCallError) {
    const server = error.serverMessage === undefined ? "" : `: the server said "${redactSecrets(error.serverMessage, secrets)}"`;
    what = `${redactSecrets(error.message, secrets)}${server}`;
    hint = hintFor(settings, error);
  } else {
    what = redactSecrets(describeError(error), secrets);
    hint = "This looks like a bug in the provider's plugin; the history was left as it was.";
  }
  return new CompactionError(
    ErrorCodes.SUMMARIZER_FAILED,
    `Summarizer '${settings.name}' failed (${where(settings)}): ${what} (${attemptsText(attempts)}).`,
    { ...plugin(settings), hint, cause: redactedCause(error, secrets) },
  );
}

function emptyAnswer(settings: Settings): CompactionError {
  return new CompactionError(
    ErrorCodes.SUMMARIZER_FAILED,
    `Summarizer '${settings.name}' failed (${where(settings)}): the model answered with no text (only reasoning, or nothing).`,
    {
      ...plugin(settings),
      hint: "Raise maxTokens (a reasoning model may spend it all on thinking), or use another model. The history was left as it was.",
    },
  );
}

function timedOut(settings: Settings, attempts: number, error: unknown, apiKey: string | undefined): CompactionError {
  const last = error instanceof ModelCallError ? `; last error: ${redactSecrets(error.message, [apiKey])}` : "";
  return new CompactionError(
    ErrorCodes.SUMMARIZER_FAILED,
    `Summarizer '${settings.name}' failed (${where(settings)}): no answer within timeoutMs = ${settings.timeoutMs} ms (${attemptsText(attempts)}${last}).`,
    {
      ...plugin(settings),
      hint: `Raise timeoutMs (large histories and slow local models need longer), or check that the server at ${origin(settings.url)} is up and not overloaded. The history was left as it was.`,
    },
  );
}

function cancelled(settings: Settings, reason: unknown): CompactionError {
  return new CompactionError(
    ErrorCodes.CANCELLED,
    `Summarizer '${settings.name}' was cancelled: the request's AbortSignal was aborted, so no summary was written.`,
    { ...plugin(settings), cause: reason, hint: "Nothing to fix unless the abort was unexpected; the history is unchanged." },
  );
}

function hintFor(settings: Settings, error: ModelCallError): string {
  const fallback = " The history was left as it was; set fallback: extractive to summarise without the model when it fails.";
  const status = error.status;
  if (status === 401 || status === 403) {
    return settings.apiKeyEnv === null
      ? `The server wants an API key: set apiKeyEnv to the name of the environment variable that holds it.${fallback}`
      : `The server refused the key: check that ${settings.apiKeyEnv} holds a valid key for ${settings.provider}.${fallback}`;
  }
  if (status === 404) return `Check baseUrl (it should end where the API's paths start, e.g. .../v1) and that the server has the model '${settings.model}'.${fallback}`;
  if (status === 400 || status === 413 || status === 422) {
    return `The server rejected the request: check the model name, maxTokens, temperature and maxInputTokens for this server.${fallback}`;
  }
  if (status === 429) return `Rate limited: wait, raise maxRetries, or compact less often.${fallback}`;
  if (status !== undefined && status >= 500) return `The server failed; try again later.${fallback}`;
  if (status === undefined && error.retryable) return `Check that the server at ${origin(settings.url)} is running and reachable.${fallback}`;
  return `Check that baseUrl points at a server speaking this provider's API.${fallback}`;
}

/** The cause with the key taken out of its message (and, for a ModelCallError, of the server's message). */
function redactedCause(error: unknown, secrets: readonly (string | undefined)[]): unknown {
  if (error instanceof ModelCallError) {
    return new ModelCallError(redactSecrets(error.message, secrets), {
      ...(error.status !== undefined ? { status: error.status } : {}),
      ...(error.statusText !== undefined ? { statusText: error.statusText } : {}),
      ...(error.serverMessage !== undefined ? { serverMessage: redactSecrets(error.serverMessage, secrets) } : {}),
      ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
      retryable: error.retryable,
      cause: error.cause,
    });
  }
  const text = describeError(error);
  return redactSecrets(text, secrets) === text ? error : new Error(redactSecrets(text, secrets));
}

function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return displayUrl(url);
  }
}

function plugin(settings: Settings): { plugin?: string } {
  return settings.plugin === undefined ? {} : { plugin: settings.plugin };
}

function normalise(options: ModelSummarizerOptions): Settings {
  const text = (key: "provider" | "model" | "url") => {
    const value = options?.[key];
    if (typeof value !== "string" || value.trim() === "") {
      throw new CompactionError(ErrorCodes.INPUT_INVALID, `createModelSummarizer() needs a non-empty string '${key}', found ${String(value)}.`, {
        path: `/${key}`,
      });
    }
    return value.trim();
  };
  const number = (key: keyof typeof DEFAULTS, minimum: number) => {
    const value = options[key] ?? DEFAULTS[key];
    if (!Number.isInteger(value) || value < minimum) {
      throw new CompactionError(
        ErrorCodes.INPUT_INVALID,
        `createModelSummarizer() option '${key}' must be an integer of at least ${minimum}, found ${String(value)}.`,
        { path: `/${key}`, hint: `Leave '${key}' out to use ${DEFAULTS[key]}.` },
      );
    }
    return value;
  };
  const provider = text("provider");
  const model = text("model");
  const url = text("url");
  if (typeof options.complete !== "function") {
    throw new CompactionError(ErrorCodes.INPUT_INVALID, "createModelSummarizer() needs a 'complete(request)' function that calls the model.", {
      path: "/complete",
    });
  }
  const apiKeyEnv = options.apiKeyEnv ?? null;
  if (apiKeyEnv !== null && (typeof apiKeyEnv !== "string" || apiKeyEnv.trim() === "")) {
    throw new CompactionError(
      ErrorCodes.INPUT_INVALID,
      `createModelSummarizer() option 'apiKeyEnv' must name an environment variable, found ${JSON.stringify(apiKeyEnv)}.`,
      { path: "/apiKeyEnv", hint: "Pass the variable's name (e.g. OPENAI_API_KEY), or null for a server that needs no key." },
    );
  }
  return {
    name: options.name ?? `${provider}:${model}`,
    provider,
    model,
    url,
    plugin: options.plugin,
    apiKeyEnv,
    maxInputTokens: number("maxInputTokens", 1),
    maxRetries: number("maxRetries", 0),
    retryDelayMs: number("retryDelayMs", 0),
    maxRetryDelayMs: number("maxRetryDelayMs", 0),
    timeoutMs: number("timeoutMs", 0),
  };
}

function validateRequest(settings: Settings, request: SummarizeRequest): void {
  const problem = !Array.isArray(request.messages)
    ? ["/messages", "request.messages to be an array of MessageFacts"]
    : typeof request.maxTokens !== "number" || !(request.maxTokens >= 1)
      ? ["/maxTokens", "request.maxTokens to be a number of at least 1"]
      : typeof request.counter?.count !== "function"
        ? ["/counter", "request.counter to be a TokenCounter"]
        : undefined;
  if (problem === undefined) return;
  throw new CompactionError(ErrorCodes.INPUT_INVALID, `Summarizer '${settings.name}' expected ${problem[1]}.`, {
    path: problem[0],
    ...plugin(settings),
  });
}
