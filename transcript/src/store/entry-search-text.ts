/**
 * What of a session entry is searchable, by one rule for every index: recall's own
 * (plugins/recall), the SQLite store's FTS5 table and the Postgres store's `tsvector`, so
 * `memory_search` finds the same entries over a database as over a pi file. Message entries give
 * their readable text (user and assistant text, tool calls as `name` and their arguments, a tool
 * result's tool name and output), compactions and branch summaries their summary, custom
 * messages their text. Settings changes, labels and extension state give none.
 */
import { createPiAdapter, type MessageFacts, type PiMessage } from "@compaction/core";
import { entryMessage } from "../context.js";
import type { SessionEntry } from "../types.js";

const adapter = createPiAdapter();

/**
 * The text to index for `entry` (see the top of this file), or undefined when it has none worth
 * searching (a blank one, or an entry type that holds no text).
 */
export function entrySearchText(entry: SessionEntry): string | undefined {
  let text: string;
  switch (entry.type) {
    case "message":
      text = messageSearchText(entry.message);
      break;
    case "compaction":
    case "branch_summary":
      text = typeof entry.summary === "string" ? entry.summary : "";
      break;
    case "custom_message": {
      const message = entryMessage(entry);
      text = message === undefined ? "" : messageSearchText(message);
      break;
    }
    default:
      return undefined;
  }
  return text.trim() === "" ? undefined : text;
}

/** A message's readable text, its tool calls as `name arguments`, and a tool result's `[tool name]`. */
export function messageSearchText(message: PiMessage): string {
  let facts: MessageFacts;
  try {
    facts = adapter.readFacts(message);
  } catch {
    return ""; // a message the adapter cannot read has nothing to search
  }
  const parts: string[] = [];
  if (facts.kind === "toolResult" && facts.toolName !== undefined && facts.toolName !== "") parts.push(`[${facts.toolName}]`);
  if (facts.text.trim() !== "") parts.push(facts.text);
  for (const call of facts.toolCalls) parts.push(`${call.name} ${argumentsText(call.arguments)}`);
  return parts.join("\n");
}

/**
 * Tool-call arguments as plain text, one `key: value` per line with string values as they are:
 * JSON escapes (`\n`, `\t`) would glue letters to words (`\tthis` -> `tthis`) and hide them.
 */
export function argumentsText(value: unknown): string {
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

/** The query as typed, spaces collapsed: what an exact match must contain (recall's `literal`). */
export function literalQuery(query: string): string {
  return query.trim().replace(/\s+/g, " ");
}

/** The words of a query as the stores' full-text indexes split text (letters and digits). */
export function queryWords(query: string): string[] {
  return query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}
