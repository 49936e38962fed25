/**
 * The core never assumes one message format. A MessageAdapter answers, for any host message
 * `T`, the facts the engine needs, and builds summary and note messages in that format.
 */

export type MessageKind = "system" | "user" | "assistant" | "toolResult" | "summary" | "other";

export interface ToolCallInfo {
  /** The id that the matching tool result answers. */
  readonly id: string;
  readonly name: string;
  /** The call's arguments as the host stored them (usually an object). */
  readonly arguments: unknown;
}

export interface MessageFacts {
  readonly kind: MessageKind;
  /**
   * The readable text: text blocks, tool output, summary text. No tool-call arguments and no
   * thinking; those are in `toolCalls` and `thinking`.
   */
  readonly text: string;
  /** Reasoning text the model produced, if the format keeps it. */
  readonly thinking: string;
  /** Tool calls this message issues (assistant messages). */
  readonly toolCalls: readonly ToolCallInfo[];
  /** Tool-call ids this message answers (tool results). */
  readonly toolResultIds: readonly string[];
  /** Name of the tool whose output this is, when the format says. */
  readonly toolName?: string;
  /** True for a tool result that reports a failure. */
  readonly isError: boolean;
  /** Number of images the message carries (counted at a fixed token cost). */
  readonly imageCount: number;
  /** Milliseconds since the epoch, when known. */
  readonly timestamp?: number;
  /** The host's id for the message, when it has one. */
  readonly id?: string;
  /** A pinned message is never dropped, pruned or summarised. */
  readonly pinned: boolean;
  /**
   * The provider's own figure for the whole context as of this message (prompt plus this
   * response), when the host stored usage and the response completed. `undefined` otherwise.
   */
  readonly usageContextTokens?: number;
  /**
   * The model that wrote this response, as `provider/model` when the format records both (pi
   * does); token calibration learns per model.
   */
  readonly model?: string;
}

export interface CreateSummaryOptions {
  /** Tokens in the context before the compaction that produced this summary. */
  readonly tokensBefore?: number;
  /** Milliseconds since the epoch; defaults to now. */
  readonly timestamp?: number;
}

export interface MessageAdapter<T> {
  /** Short name used in errors and config, e.g. `pi`, `openai`, `anthropic`. */
  readonly name: string;
  /** Reads the facts of one message. Pure; callers cache the answer (see `FactsCache`). */
  readFacts(message: T): MessageFacts;
  /** A message of this format that carries a compaction summary. */
  createSummary(text: string, options?: CreateSummaryOptions): T;
  /** A system-level note of this format (e.g. rolling's eviction note). */
  createNote(text: string, options?: { readonly timestamp?: number }): T;
  /**
   * A copy of a tool-result message with its output replaced by `replacement` (used by pruning).
   * Keeps the ids, tool name and error flag.
   */
  replaceToolOutput(message: T, replacement: string): T;
  /**
   * A copy of `message` with each piece of its readable text replaced by `rewrite(piece)`: the
   * pieces `readFacts(message).text` is joined from (string content, text blocks or parts, the
   * text inside tool outputs, a refusal, a shell command's output). Everything else is kept as
   * it is: role, ids, tool calls and their arguments, thinking, images, error flag, pin flag,
   * usage, and the order of blocks. `rewrite` is called once per piece, in order; a piece it
   * returns unchanged stays the same string. Used by the core's shrinking (`shrinkToBudget`) to
   * cut a message to head and tail; it never changes which tool calls a message issues or answers.
   */
  mapText(message: T, rewrite: (text: string) => string): T;
  /**
   * Optional. A copy of `message` without its thinking (thinking and redacted-thinking blocks, a
   * reasoning field), everything else kept; the message itself when it has none, or when nothing
   * else would be left. The core's shrinking drops the thinking of every message but the newest
   * turn's last assistant message (the one providers need unchanged, signature included) when
   * shortening text alone cannot bring a context under its budget. Without it thinking is never
   * removed.
   */
  dropThinking?(message: T): T;
  /**
   * Optional. A copy of `message` with every string inside each tool call's arguments replaced by
   * `rewrite(text)`: keys, numbers and structure kept, and arguments stored as a JSON string stay
   * valid JSON (a string that is not JSON is rewritten whole). Ids and names are kept. Used by
   * the core's shrinking to cut a huge argument (a file written by a tool call) to head and tail.
   * Without it tool-call arguments are never shortened.
   */
  mapToolArguments?(message: T, rewrite: (text: string) => string): T;
  /**
   * Optional. A copy of `message` marked as the end of a prefix the provider should cache, in the
   * way the provider needs it marked (Anthropic's `cache_control: { type: "ephemeral" }` on the
   * message's last content block; the AI SDK's `providerOptions.anthropic.cacheControl`). Hosts
   * apply it at the places a shaped request names (`ShapedRequest.cacheBreakpoints`, through
   * `markCacheBreakpoints`), on what they send, never on the context they keep. Formats whose
   * provider caches on its own (OpenAI) leave it out.
   */
  markCacheBreakpoint?(message: T): T;
}

/** Options every built-in adapter takes. */
export interface AdapterOptions<T> {
  /**
   * Decides whether a message is pinned. The default reads a boolean `pinned` property on the
   * message (or, for pi, on its `details`).
   */
  readonly isPinned?: (message: T) => boolean;
}

/**
 * Computes each message's facts once. Keyed by object identity in a WeakMap, so facts live
 * exactly as long as the message does and a 10,000-message cut search never re-reads text.
 */
export class FactsCache<T> {
  readonly adapter: MessageAdapter<T>;
  readonly #facts = new WeakMap<object, MessageFacts>();

  constructor(adapter: MessageAdapter<T>) {
    this.adapter = adapter;
  }

  of(message: T): MessageFacts {
    if (typeof message !== "object" || message === null) return this.adapter.readFacts(message);
    const key = message as unknown as object;
    let facts = this.#facts.get(key);
    if (facts === undefined) {
      facts = this.adapter.readFacts(message);
      this.#facts.set(key, facts);
    }
    return facts;
  }
}
