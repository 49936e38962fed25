/**
 * What of an entry full-text search sees, the way recall (plugins/recall) sees it: a message's
 * readable text, its tool calls as `name arguments` and a tool result's tool name; a compaction's
 * or branch summary's summary; a custom message's text. Settings, labels and extension state have
 * none. The words are split at spaces, punctuation and symbols and lower-cased in JavaScript (so
 * `user-message-selector.ts` is found by `selector`, and Postgres' parser, which keeps paths and
 * hosts whole, never sees the raw text); the literal text is kept too, for exact matches.
 */
import { createPiAdapter, type MessageFacts, type PiMessage } from "@compaction/core";
import { entryMessage, type SessionEntry } from "@compaction/transcript";

const adapter = createPiAdapter();

/** Longer "words" (base64, minified code) only bloat the index: nobody searches for them (as recall). */
const MAX_WORD_LENGTH = 64;
/** A tsvector holds at most 1 MB; words beyond this many characters are kept once each. */
const MAX_WORDS_CHARS = 256 * 1024;

const WORD_SEPARATORS = /[\p{Z}\p{P}\p{S}\p{Cc}\s]+/u;

/** The searchable forms of an entry's text, or undefined when it has none. */
export interface SearchableText {
  /** The text with runs of white space as one space, lower-cased: what an exact match looks in. */
  readonly literal: string;
  /** The words, lower-cased, space-separated: what the tsvector is made of. */
  readonly words: string;
}

/** The searchable text of an entry (see the top of this file). */
export function searchableText(entry: SessionEntry): SearchableText | undefined {
  const text = entryText(entry);
  if (text === undefined || text.trim() === "") return undefined;
  return { literal: literalText(text), words: wordsText(text) };
}

/** The query as typed, white space collapsed and lower-cased: what an exact match looks for. */
export function literalText(text: string): string {
  // Postgres text cannot hold NUL.
  return text.replaceAll("\u0000", " ").trim().replace(/\s+/g, " ").toLowerCase();
}

/** The words of `text`, lower-cased, at most 64 characters each. */
export function words(text: string): string[] {
  return text
    .split(WORD_SEPARATORS)
    .filter((word) => word !== "" && word.length <= MAX_WORD_LENGTH)
    .map((word) => word.toLowerCase());
}

function wordsText(text: string): string {
  const all = words(text);
  let joined = all.join(" ");
  if (joined.length <= MAX_WORDS_CHARS) return joined;
  joined = [...new Set(all)].join(" ");
  return joined.length <= MAX_WORDS_CHARS ? joined : joined.slice(0, joined.lastIndexOf(" ", MAX_WORDS_CHARS));
}

function entryText(entry: SessionEntry): string | undefined {
  switch (entry.type) {
    case "message":
      return messageText(entry.message);
    case "compaction":
    case "branch_summary":
      return typeof entry.summary === "string" ? entry.summary : undefined;
    case "custom_message": {
      const message = entryMessage(entry);
      return message === undefined ? undefined : messageText(message);
    }
    default:
      return undefined;
  }
}

function messageText(message: PiMessage): string {
  let facts: MessageFacts;
  try {
    facts = adapter.readFacts(message);
  } catch {
    return "";
  }
  const parts: string[] = [];
  if (facts.kind === "toolResult" && facts.toolName !== undefined && facts.toolName !== "") parts.push(`[${facts.toolName}]`);
  if (facts.text.trim() !== "") parts.push(facts.text);
  for (const call of facts.toolCalls) parts.push(`${call.name} ${argumentsText(call.arguments)}`);
  return parts.join("\n");
}

function argumentsText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value !== "object" || Array.isArray(value)) return jsonText(value);
  return Object.entries(value as Record<string, unknown>)
    .map(([key, field]) => `${key}: ${typeof field === "string" ? field : jsonText(field)}`)
    .join("\n");
}

function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return "";
  }
}
