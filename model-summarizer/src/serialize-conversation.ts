/**
 * The conversation as a plain-text transcript (`[User]: ...`, `[Assistant]: ...`,
 * `[Tool call] name(args)`, `[Tool result] name: ...`), so a model reads it as material to
 * summarise rather than as chat turns to continue. Long tool outputs are clipped in the middle.
 */
import { isHighSurrogate, isLowSurrogate, type MessageFacts } from "@compaction/core";

export interface SerializeOptions {
  /** Longest tool output kept, in characters; the middle of a longer one is clipped. Default 2,000. */
  readonly maxToolResultChars?: number;
  /** Longest tool-call argument list kept, in characters. Default 1,000. */
  readonly maxToolArgumentChars?: number;
  /** Longest reasoning text kept, in characters. Default 2,000. */
  readonly maxThinkingChars?: number;
}

const DEFAULTS: Required<SerializeOptions> = {
  maxToolResultChars: 2000,
  maxToolArgumentChars: 1000,
  maxThinkingChars: 2000,
};

/** Messages as one transcript, entries separated by a blank line; messages with nothing to show are left out. */
export function serializeConversation(messages: readonly MessageFacts[], options: SerializeOptions = {}): string {
  const entries: string[] = [];
  for (const message of messages) {
    const entry = serializeMessage(message, options);
    if (entry !== undefined) entries.push(entry);
  }
  return entries.join("\n\n");
}

/** One message as transcript lines, or `undefined` when it has nothing to show. */
export function serializeMessage(message: MessageFacts, options: SerializeOptions = {}): string | undefined {
  const limits = { ...DEFAULTS, ...options };
  const lines: string[] = [];
  const text = message.text.trim();
  const images = message.imageCount > 0 ? `[${message.imageCount} image${message.imageCount === 1 ? "" : "s"}]` : "";
  const withImages = [text, images].filter((part) => part !== "").join(" ");
  switch (message.kind) {
    case "system":
      if (text !== "") lines.push(`[System]: ${text}`);
      break;
    case "user":
      if (withImages !== "") lines.push(`[User]: ${withImages}`);
      break;
    case "assistant": {
      const thinking = message.thinking.trim();
      if (thinking !== "") lines.push(`[Assistant thinking]: ${clipMiddle(thinking, limits.maxThinkingChars)}`);
      if (withImages !== "") lines.push(`[Assistant]: ${withImages}`);
      for (const call of message.toolCalls) {
        lines.push(`[Tool call] ${call.name}(${clipMiddle(argumentsText(call.arguments), limits.maxToolArgumentChars)})`);
      }
      break;
    }
    case "toolResult": {
      const name = message.toolName ? ` ${message.toolName}` : "";
      const failed = message.isError ? " (error)" : "";
      const output = clipMiddle(withImages, limits.maxToolResultChars);
      lines.push(`[Tool result]${name}${failed}: ${output === "" ? "(no output)" : output}`);
      break;
    }
    case "summary":
      if (text !== "") lines.push(`[Earlier summary]: ${text}`);
      break;
    case "other":
      if (withImages !== "") lines.push(`[Other]: ${withImages}`);
      break;
  }
  return lines.length === 0 ? undefined : lines.join("\n");
}

/**
 * `text` cut to about `maxChars` characters by removing its middle (the start says what a tool
 * did, the end usually holds the error or the result), with a marker saying how much went.
 */
export function clipMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const keep = Math.max(0, maxChars);
  let head = text.slice(0, Math.ceil((keep * 2) / 3));
  if (head.length > 0 && isHighSurrogate(head.charCodeAt(head.length - 1))) head = head.slice(0, -1);
  let tailStart = text.length - (keep - Math.ceil((keep * 2) / 3));
  if (tailStart < text.length && isLowSurrogate(text.charCodeAt(tailStart))) tailStart++;
  const tail = text.slice(tailStart);
  const clipped = tailStart - head.length;
  return `${head}\n[… ${clipped} characters clipped …]\n${tail}`;
}

/** A call's arguments as compact JSON (a string argument as it is). */
function argumentsText(args: unknown): string {
  if (args === undefined || args === null) return "";
  if (typeof args === "string") return args;
  try {
    return JSON.stringify(args) ?? String(args);
  } catch {
    return String(args);
  }
}
