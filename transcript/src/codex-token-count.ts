/**
 * What a Codex rollout's `event_msg` `token_count` (and `task_started`) events say about the
 * provider's count of the context and about the model's window.
 *
 * Format, from openai/codex (codex-rs/protocol/src/protocol.rs `TokenCountEvent`,
 * `TokenUsageInfo`, `TokenUsage`, `TaskStartedEvent`): `{ info, rate_limits }`, where `info` is
 * null until the first model call has completed, else `{ total_token_usage, last_token_usage,
 * model_context_window }`. `last_token_usage` is the provider's figure for the last model call:
 * `input_tokens` (the whole prompt, `cached_input_tokens` included), `output_tokens` (the reply,
 * `reasoning_output_tokens` included) and `total_tokens` (their sum, as the API reports it).
 * `total_token_usage` is the session's running sum, so it changes with every call: an event with
 * the same running sum as the one before repeats it (Codex also writes one when only the rate
 * limits changed) and reports no new call.
 *
 * The context as of that call is `total_tokens` (else input plus output), as Codex itself reads it
 * (`tokens_in_context_window`) and as pi records it (`usage.totalTokens`, which is `input +
 * cacheRead + cacheWrite + output`): the importer puts it on the reply as an OpenAI Chat `usage`
 * (`prompt_tokens` the input, `completion_tokens` the output, `total_tokens`, the cached and
 * reasoning parts in `prompt_tokens_details` and `completion_tokens_details`), which the OpenAI
 * adapter reads as the message's usage figure.
 *
 * A figure that is not a whole number of tokens (a string, a fraction, a negative number) is not
 * read, with the reason: the import goes on without that figure.
 */
import { describeValue, type OpenAIAssistantMessage } from "@compaction/core";

/** The usage the importer puts on a reply: OpenAI Chat Completions' shape. */
export type CodexChatUsage = NonNullable<OpenAIAssistantMessage["usage"]>;

/** What one event gives. */
export interface CodexTokenCount {
  /** The last model call's usage, when the event holds a readable, non-zero one. */
  readonly usage?: CodexChatUsage;
  /**
   * Tells this event's figures apart from the previous event's (the running sum, else the last
   * call's figures): an event whose key is the previous one's repeats it.
   */
  readonly key?: string;
  /** `model_context_window`, when the event states one (a whole number above 0). */
  readonly contextWindow?: number;
  /** Why a figure the event holds was not read; empty when every one was. */
  readonly problems: readonly string[];
}

type Fields = Record<string, unknown>;

/** A figure on an event line that was not read (the line is read otherwise). */
export interface IgnoredFigure {
  /** 1-based line number. */
  readonly line: number;
  /** The event, the JSON path in its payload, what was expected and found. */
  readonly reason: string;
}

/** Whether an `event_msg` payload is one `UsageEvents` reads. */
export function isUsageEvent(payload: Fields): boolean {
  return payload["type"] === "token_count" || payload["type"] === "task_started";
}

/** Reads a rollout's `token_count` and `task_started` events in file order. */
export class UsageEvents {
  /** The newest window an event stated. */
  contextWindow: number | undefined;
  readonly ignored: IgnoredFigure[] = [];
  #previousKey: string | undefined;

  /** The usage of the new model call the event reports; undefined for a repeat, an event without one, or one that cannot be read. */
  read(payload: Fields, line: number): CodexChatUsage | undefined {
    const reading = payload["type"] === "token_count" ? readTokenCount(payload) : readTaskStarted(payload);
    for (const reason of reading.problems) this.ignored.push({ line, reason: `${String(payload["type"])} ${reason}` });
    if (reading.contextWindow !== undefined) this.contextWindow = reading.contextWindow;
    if (reading.key === undefined) return undefined;
    const repeat = reading.key === this.#previousKey;
    this.#previousKey = reading.key;
    return repeat ? undefined : reading.usage;
  }
}

const isFields = (value: unknown): value is Fields => typeof value === "object" && value !== null && !Array.isArray(value);

/** Reads a `token_count` event's payload. Never throws: what cannot be read is in `problems`. */
export function readTokenCount(payload: Fields): CodexTokenCount {
  const info = payload["info"];
  // Written before the first call completes (and with only the rate limits): nothing to read.
  if (info === null) return { problems: [] };
  if (!isFields(info)) return { problems: [`info: expected an object or null, found ${describeValue(info)}`] };
  const problems: string[] = [];
  const contextWindow = readWindow(info["model_context_window"], "info.model_context_window", problems);
  const last = info["last_token_usage"];
  const running = info["total_token_usage"];
  const key = JSON.stringify(isFields(running) ? running : last);
  const usage = readCallUsage(last, problems);
  return { ...(usage === undefined ? {} : { usage }), key, ...(contextWindow === undefined ? {} : { contextWindow }), problems };
}

/** Reads a `task_started` event's `model_context_window`. */
export function readTaskStarted(payload: Fields): CodexTokenCount {
  const problems: string[] = [];
  const contextWindow = readWindow(payload["model_context_window"], "model_context_window", problems);
  return { ...(contextWindow === undefined ? {} : { contextWindow }), problems };
}

function readWindow(value: unknown, path: string, problems: string[]): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) return value;
  problems.push(`${path}: expected a whole number of tokens above 0, found ${describeValue(value)}; the window it states is not used`);
  return undefined;
}

/** `last_token_usage` as Chat usage; undefined (with the reason in `problems`) when it cannot be read, or undefined when it is all zero. */
function readCallUsage(last: unknown, problems: string[]): CodexChatUsage | undefined {
  const path = "info.last_token_usage";
  if (!isFields(last)) {
    problems.push(`${path}: expected an object of token counts, found ${describeValue(last)}; the event's usage figure is not read`);
    return undefined;
  }
  const before = problems.length;
  const count = (name: string, required: boolean): number | undefined => {
    const value = last[name];
    if (value === undefined && !required) return undefined;
    if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
    problems.push(`${path}.${name}: expected a whole number of tokens (0 or more), found ${describeValue(value)}; the event's usage figure is not read`);
    return undefined;
  };
  const input = count("input_tokens", true);
  const cached = count("cached_input_tokens", false);
  const output = count("output_tokens", true);
  const reasoning = count("reasoning_output_tokens", false);
  const total = count("total_tokens", false);
  if (problems.length > before || input === undefined || output === undefined) return undefined;
  // Codex's own reading (`tokens_in_context_window`): total_tokens, else input plus output.
  const totalTokens = total !== undefined && total > 0 ? total : input + output;
  if (totalTokens === 0) return undefined;
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: totalTokens,
    ...(cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: cached } }),
    ...(reasoning === undefined ? {} : { completion_tokens_details: { reasoning_tokens: reasoning } }),
  };
}
