/**
 * What of a session entry is searchable: its text and a role. Message entries give their
 * readable text (user and assistant text, tool call names and arguments, tool output),
 * compactions and branch summaries their summary, custom messages their text. Settings
 * changes, labels and extension state are not indexed.
 */
import { createPiAdapter, type MessageFacts, type PiMessage } from "@compaction/core";
import { entryMessage, type SessionEntry } from "@compaction/transcript";

const adapter = createPiAdapter();

/** The searchable part of an entry. */
export interface EntryText {
  /**
   * The pi role of a message entry (`user`, `assistant`, `toolResult`, `bashExecution`,
   * `custom`, ...), else the entry's type (`compaction`, `branch_summary`, `custom_message`).
   */
  readonly role: string;
  readonly text: string;
}

/** The role and text to index for an entry, or undefined when it has no text worth searching. */
export function entryText(entry: SessionEntry): EntryText | undefined {
  switch (entry.type) {
    case "message":
      return nonBlank(String(entry.message.role), messageText(entry.message));
    case "compaction":
      return nonBlank("compaction", typeof entry.summary === "string" ? entry.summary : "");
    case "branch_summary":
      return nonBlank("branch_summary", typeof entry.summary === "string" ? entry.summary : "");
    case "custom_message": {
      const message = entryMessage(entry);
      return message === undefined ? undefined : nonBlank("custom_message", messageText(message));
    }
    default:
      return undefined;
  }
}

/** A message's readable text, its tool calls as `name {arguments}`, and a tool result's tool name. */
export function messageText(message: PiMessage): string {
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

function nonBlank(role: string, text: string): EntryText | undefined {
  return text.trim() === "" ? undefined : { role, text };
}

/** The entry's time as ISO 8601: its own `timestamp`, else its message's (milliseconds), else "". */
export function entryTimestamp(entry: SessionEntry): string {
  if (typeof entry.timestamp === "string" && entry.timestamp !== "") return entry.timestamp;
  if (entry.type === "message") {
    const millis = (entry.message as { timestamp?: unknown }).timestamp;
    if (typeof millis === "number" && Number.isFinite(millis)) return new Date(millis).toISOString();
  }
  return "";
}
