/**
 * Small readers shared by the built-in adapters: they read fields of untrusted message objects
 * without throwing and without mutating, and assemble a `MessageFacts`.
 */
import { CompactionError, ErrorCodes } from "../errors.js";
import type { MessageFacts, MessageKind, ToolCallInfo } from "./adapter.js";

/** A plain object we may read properties from. */
export type Fields = Readonly<Record<string, unknown>>;

export function isFields(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A short description of a value for error messages: `null`, `an array`, `a string ("hi")`. */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (Array.isArray(value)) return `an array (length ${value.length})`;
  if (typeof value === "string") {
    const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
    return `a string (${JSON.stringify(shown)})`;
  }
  if (typeof value === "object") return "an object";
  return `a ${typeof value} (${String(value)})`;
}

/**
 * Returns the message as readable fields, or throws MESSAGE_UNREADABLE when it is not an object.
 * Objects with unknown shapes are not errors: adapters report them as kind `other`.
 */
export function requireMessageObject(adapterName: string, message: unknown): Fields {
  if (isFields(message)) return message;
  throw new CompactionError(
    ErrorCodes.MESSAGE_UNREADABLE,
    `The ${adapterName} message adapter expected a message object but found ${describeValue(message)}.`,
    {
      hint: `Pass the host's message objects unchanged, and choose the adapter that matches their format (pi, openai or anthropic).`,
    },
  );
}

export function readString(fields: Fields, key: string): string | undefined {
  const value = fields[key];
  return typeof value === "string" ? value : undefined;
}

/** A finite number, or 0. */
export function readCount(fields: Fields, key: string): number {
  const value = fields[key];
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** Milliseconds since the epoch from a number or an ISO 8601 string; `undefined` otherwise. */
export function readTimestamp(fields: Fields): number | undefined {
  const value = fields["timestamp"];
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (typeof value === "string") {
    const parsed = Date.parse(value);
    return Number.isNaN(parsed) ? undefined : parsed;
  }
  return undefined;
}

/** Joins the non-empty parts with newlines. */
export function joinText(parts: readonly string[]): string {
  let text = "";
  for (const part of parts) {
    if (part.length === 0) continue;
    text = text.length === 0 ? part : `${text}\n${part}`;
  }
  return text;
}

/** Removes `prefix` and `suffix` when the text carries both; otherwise returns it unchanged. */
export function unwrap(text: string, prefix: string, suffix: string): string {
  if (text.length >= prefix.length + suffix.length && text.startsWith(prefix) && text.endsWith(suffix)) {
    return text.slice(prefix.length, text.length - suffix.length);
  }
  return text;
}

/** What an adapter found in one message; omitted fields take the neutral default. */
export interface FactsInput {
  kind: MessageKind;
  text?: string;
  thinking?: string;
  toolCalls?: ToolCallInfo[];
  toolResultIds?: string[];
  toolName?: string | undefined;
  isError?: boolean;
  imageCount?: number;
  timestamp?: number | undefined;
  id?: string | undefined;
  pinned: boolean;
  usageContextTokens?: number | undefined;
  model?: string | undefined;
}

const NO_CALLS: readonly ToolCallInfo[] = Object.freeze([]);
const NO_IDS: readonly string[] = Object.freeze([]);

/** A frozen MessageFacts; optional fields are present only when known. */
export function buildFacts(input: FactsInput): MessageFacts {
  const facts: {
    -readonly [K in keyof MessageFacts]: MessageFacts[K];
  } = {
    kind: input.kind,
    text: input.text ?? "",
    thinking: input.thinking ?? "",
    toolCalls: input.toolCalls && input.toolCalls.length > 0 ? Object.freeze(input.toolCalls) : NO_CALLS,
    toolResultIds:
      input.toolResultIds && input.toolResultIds.length > 0 ? Object.freeze(input.toolResultIds) : NO_IDS,
    isError: input.isError ?? false,
    imageCount: input.imageCount ?? 0,
    pinned: input.pinned,
  };
  if (input.toolName !== undefined) facts.toolName = input.toolName;
  if (input.timestamp !== undefined) facts.timestamp = input.timestamp;
  if (input.id !== undefined) facts.id = input.id;
  if (input.usageContextTokens !== undefined) facts.usageContextTokens = input.usageContextTokens;
  if (input.model !== undefined) facts.model = input.model;
  return Object.freeze(facts);
}

/** Positive finite token totals only; anything else means "no usable usage". */
export function positiveTotal(total: number): number | undefined {
  return Number.isFinite(total) && total > 0 ? total : undefined;
}

/**
 * The words pi-coding-agent puts around a compaction summary when it sends it to the model; the
 * OpenAI and Anthropic adapters use the same, since there the summary is an ordinary user message.
 */
const SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
const SUMMARY_SUFFIX = "\n</summary>";

/** A summary as the model sees it. */
export function wrapSummary(text: string): string {
  return SUMMARY_PREFIX + text + SUMMARY_SUFFIX;
}

/** The summary text inside `wrapSummary`'s words (the text as it is when it has none). */
export function unwrapSummary(text: string): string {
  return unwrap(text, SUMMARY_PREFIX, SUMMARY_SUFFIX);
}

/**
 * String-or-parts content with the text of each part whose `type` is one of `types` (read from
 * the property of the same name, e.g. `text`, `refusal`) replaced by `rewrite(text)`; other
 * parts and anything that is not content are returned as they are.
 */
export function mapTextContent(content: unknown, rewrite: (text: string) => string, ...types: string[]): unknown {
  if (typeof content === "string") return rewrite(content);
  if (!Array.isArray(content)) return content;
  return (content as unknown[]).map((part) => {
    if (!isFields(part)) return part;
    const type = part["type"];
    if (typeof type !== "string" || !types.includes(type)) return part;
    const text = part[type];
    return typeof text === "string" ? { ...part, [type]: rewrite(text) } : part;
  });
}

/** A deep copy of a JSON value with every string in it (not the keys) replaced by `rewrite(text)`. */
export function mapJsonStrings(value: unknown, rewrite: (text: string) => string): unknown {
  if (typeof value === "string") return rewrite(value);
  if (Array.isArray(value)) return value.map((item) => mapJsonStrings(item, rewrite));
  if (isFields(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapJsonStrings(item, rewrite)]));
  return value;
}

/**
 * Tool-call arguments with their strings rewritten (`mapJsonStrings`), in the form they came in:
 * an object stays an object; a JSON string is parsed, rewritten and serialised again, so it
 * stays valid JSON; a string that is not JSON is rewritten whole.
 */
export function mapArgumentStrings(args: unknown, rewrite: (text: string) => string): unknown {
  if (typeof args !== "string") return mapJsonStrings(args, rewrite);
  let parsed: unknown;
  try {
    parsed = JSON.parse(args) as unknown;
  } catch {
    return rewrite(args);
  }
  if (typeof parsed !== "object" || parsed === null) return rewrite(args);
  return JSON.stringify(mapJsonStrings(parsed, rewrite));
}

/** Content blocks without those whose `type` is one of `types`; `content` itself when none is, or when nothing would be left. */
export function withoutBlocks(content: unknown, ...types: string[]): unknown {
  if (!Array.isArray(content)) return content;
  const kept = (content as unknown[]).filter((block) => !(isFields(block) && types.includes(block["type"] as string)));
  return kept.length === content.length || kept.length === 0 ? content : kept;
}
